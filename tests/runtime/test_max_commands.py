"""``maxCommands``: the host-state commands one run may queue (spec/semantics.md section 8).

Applying a successful run's batch is host work done after the run, outside fuel and every other
budget; without this limit a kernel with a write grant could hand its host as large a batch as its
host calls allow. The refused command is not queued, the run fails, and nothing is applied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dotboxd.core.bindings import standard_bindings
from dotboxd.core.values import SandboxPath
from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.commands import CommandBuffer
from dotboxd.runtime.errors import SandboxError

WRITER = """module "writer" version "1.0.0";
entrypoint fn main(a SandboxPath, b SandboxPath) -> I32 {
    file.writeText(a, "one");
    file.writeText(b, "two");
    return 1;
}
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    inside = tmp_path / "root"
    inside.mkdir()
    return Path(os.path.realpath(inside))


def _run(root: Path, max_commands: int, backend: str) -> tuple[str | None, int]:
    host = SandboxHost(standard_bindings())
    policy = (
        Policy.builder()
        .grant_file_write(str(root), 64, allow_create=True)
        .with_max_commands(max_commands)
        .allow_runtime_async()
        .build()
    )
    args = [SandboxPath("a.txt"), SandboxPath("b.txt")]
    result = host.execute(host.prepare(WRITER, policy), "main", args, backend=backend)
    return (None if result.error is None else result.error.code), result.usage.file_bytes_written


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_max_commands_refused_run_applies_none_of_its_host_writes(root: Path, backend: str) -> None:
    assert _run(root, 1, backend) == ("R-QUOTA-COMMANDS", 3)  # the refused write charged nothing
    assert sorted(os.listdir(root)) == []  # the first, queued write was dropped with the run
    assert _run(root, 2, backend) == (None, 6)
    assert sorted(os.listdir(root)) == ["a.txt", "b.txt"]


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_max_commands_zero_denies_every_host_state_write(root: Path, backend: str) -> None:
    assert _run(root, 0, backend) == ("R-QUOTA-COMMANDS", 0)
    assert os.listdir(root) == []


def test_command_buffer_refuses_one_past_its_limit_and_keeps_the_queue() -> None:
    queue = CommandBuffer(2)
    queue.enqueue("a")
    queue.enqueue("b")
    with pytest.raises(SandboxError) as info:
        queue.enqueue("c")
    assert info.value.code == "R-QUOTA-COMMANDS" and len(queue) == 2
    unlimited = CommandBuffer()
    for kind in "abc":
        unlimited.enqueue(kind)
    assert len(unlimited) == 3
