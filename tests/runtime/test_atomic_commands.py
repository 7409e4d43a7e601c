"""All-or-nothing host commands (threats T-RUN-13, T-RUN-24): a successful run's queue is applied as
one batch - every write is checked against the state the batch will produce before anything
changes, and a failure at any later step rolls back what was committed - and the result reports
exactly which commands stayed applied. Kernel-driven cases run on both backends."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dotboxd.core.bindings import standard_bindings
from dotboxd.core.values import SandboxPath
from dotboxd.host import BindingContext, ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.command_batch import apply_commands
from dotboxd.runtime.commands import Command, CommandBuffer, PlannedState
from dotboxd.runtime.facades.files import write_text

from .kernels import world_binding

BACKENDS = ["reference", "optimized"]

TWO_WRITES = """module "two" version "1.0.0";

entrypoint fn main(a SandboxPath, b SandboxPath) -> I32 {
    file.writeText(a, "one");
    file.writeText(b, "two");
    return 1;
}
"""

WRITE_THEN_HOST = """module "then" version "1.0.0";

entrypoint fn main(p SandboxPath) -> I32 {
    x = world.first();
    file.writeText(p, "new");
    y = world.last();
    return 1;
}
"""


def _files(root: Path) -> list[str]:
    """Every entry under ``root`` (relative, sorted): temporary files and backups included."""
    found: list[str] = []
    for base, dirs, files in os.walk(root):
        rel = os.path.relpath(base, root)
        for name in dirs + files:
            found.append(name if rel == "." else f"{rel}/{name}")
    return sorted(found)


def _policy(root: Path, *, create: bool = True, overwrite: bool = False, world: bool = False) -> Policy:
    builder = Policy.builder().grant_file_write(
        str(root), 4096, allow_create=create, allow_overwrite=overwrite
    )
    if world:
        builder = builder.grant("world.write")
    return builder.allow_runtime_async().with_max_wall_time_ms(60_000).build()


def _two_writes(root: Path, a: str, b: str, backend: str, **grant: bool) -> ExecutionResult:
    host = SandboxHost(standard_bindings())
    plan = host.prepare(TWO_WRITES, _policy(root, **grant))
    return host.execute(plan, "main", [SandboxPath(a), SandboxPath(b)], backend=backend)


def _boom() -> None:
    raise RuntimeError("host applier failed")


def _write_then_host(
    root: Path,
    backend: str,
    first: Callable[[BindingContext], None],
    last: Callable[[BindingContext], None],
    **grant: bool,
) -> ExecutionResult:
    bindings = [
        *standard_bindings(),
        world_binding("world.first", first),
        world_binding("world.last", last),
    ]
    host = SandboxHost(bindings)
    plan = host.prepare(WRITE_THEN_HOST, _policy(root, world=True, **grant))
    return host.execute(plan, "main", [SandboxPath("f.txt")], backend=backend)


def _assert_denied_with_nothing_on_disk(root: Path, result: ExecutionResult) -> None:
    """The run was refused as a denied binding call, and not one file of it reached ``root``."""
    assert _files(root) == []
    assert result.error is not None
    assert (result.error.category, result.error.code) == ("PermissionDenied", "R-BINDING-DENIED")


def _host_commands(result: ExecutionResult) -> Any:
    event = result.audit_events[-1]
    assert event.kind == "HostCommands" and result.audit_events[-2].kind == "RunSummary"
    return event


# --- the triggers of issue 11, through a kernel ---------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_two_writes_same_new_name_create_only_nothing_on_disk(root: Path, backend: str) -> None:
    result = _two_writes(root, "a.txt", "a.txt", backend)
    _assert_denied_with_nothing_on_disk(root, result)
    assert result.commands_applied == 0 and result.applied_commands == ()


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_write_into_d_then_d_nothing_on_disk(root: Path, backend: str) -> None:
    _assert_denied_with_nothing_on_disk(root, _two_writes(root, "d/x.txt", "d", backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_temp_name_over_name_max_second_write_nothing_half_applied(root: Path, backend: str) -> None:
    long_name = "n" * 240 + ".txt"  # a valid name whose old temporary name (+22 characters) was not
    result = _two_writes(root, "a.txt", long_name, backend)
    assert result.ok, result.error
    assert _files(root) == sorted(["a.txt", long_name])  # both written, no temporary file left
    assert (root / long_name).read_text() == "two" and result.commands_applied == 2
    too_long = "m" * 300 + ".txt"
    refused = _two_writes(root, "b.txt", too_long, backend)
    assert refused.error is not None
    assert (refused.error.category, refused.error.code) == ("InvalidInput", "R-BINDING-INVALID")
    assert _files(root) == sorted(["a.txt", long_name])


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_binding_apply_raises_after_file_write_staged_nothing_on_disk(
    root: Path, backend: str
) -> None:
    result = _write_then_host(
        root,
        backend,
        lambda ctx: None,
        lambda ctx: ctx.enqueue("poison", {}, apply=_boom),
    )
    assert _files(root) == []
    assert result.error is not None
    assert (result.error.category, result.error.code) == ("HostFailure", "R-HOST-COMMAND")
    assert result.commands_applied == 0 and result.applied_commands == () and result.value is None
    assert "host applier failed" not in result.error.safe_message
    event = _host_commands(result)
    assert not event.success and event.error_code == "HostFailure"
    assert (event.fields["phase"], event.fields["failedSequence"], event.fields["failedKind"]) == (
        "apply",
        1,
        "poison",
    )
    assert (event.fields["applied"], event.fields["rolledBack"], event.fields["unrestored"]) == (0, 1, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_overwrite_of_existing_file_restored_on_rollback(root: Path, backend: str) -> None:
    (root / "f.txt").write_text("old")
    before = (root / "f.txt").stat().st_ino
    result = _write_then_host(
        root,
        backend,
        lambda ctx: None,
        lambda ctx: ctx.enqueue("poison", {}, apply=_boom),
        create=False,
        overwrite=True,
    )
    assert _files(root) == ["f.txt"]  # no backup or temporary file left behind
    assert (root / "f.txt").read_text() == "old" and (root / "f.txt").stat().st_ino == before
    assert result.error is not None and result.error.code == "R-HOST-COMMAND"
    assert result.commands_applied == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_plain_appliers_report_exactly_what_stays_applied(root: Path, backend: str) -> None:
    world: list[str] = []
    result = _write_then_host(
        root,
        backend,
        lambda ctx: ctx.enqueue("keep", {}, apply=lambda: world.append("kept")),
        lambda ctx: ctx.enqueue("poison", {}, apply=_boom),
    )
    assert _files(root) == [] and world == ["kept"]
    assert result.error is not None and result.error.code == "R-HOST-COMMAND"
    assert [c.kind for c in result.applied_commands] == ["keep"] and result.commands_applied == 1
    assert result.error.safe_message == "host command 2 failed at apply; 1 of 3 command(s) stay applied"
    assert _host_commands(result).fields["appliedSequences"] == "0"


class _FailingCommit:
    """A transactional host command whose commit fails (a race the prepare step could not see)."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def commit(self) -> None:
        raise OSError("the host store went away")

    def rollback(self) -> None:
        self.log.append("rollback")

    def release(self) -> None:
        self.log.append("release")


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_commit_failure_rolls_back_an_earlier_committed_write(root: Path, backend: str) -> None:
    log: list[str] = []
    result = _write_then_host(
        root,
        backend,
        lambda ctx: None,
        lambda ctx: ctx.enqueue("store", {}, prepare=lambda planned: _FailingCommit(log)),
        overwrite=True,
    )
    assert _files(root) == []
    assert log == ["release"]  # it never committed, so it is released, not rolled back
    assert result.error is not None and result.error.code == "R-HOST-COMMAND"
    event = _host_commands(result)
    assert (event.fields["phase"], event.fields["rolledBack"]) == ("commit", 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_24_write_never_creates_directories(root: Path, backend: str) -> None:
    (root / "plain.txt").write_text("x")
    for target in ("missing/x.txt", "missing/deeper/x.txt", "plain.txt/x.txt"):
        result = _two_writes(root, "ok.txt", target, backend, overwrite=True)
        assert result.error is not None, target
        assert (result.error.category, result.error.code) == ("PermissionDenied", "R-BINDING-DENIED")
    assert _files(root) == ["plain.txt"]
    (root / "sub").mkdir()
    done = _two_writes(root, "sub/x.txt", "sub/y.txt", backend)
    assert done.ok and _files(root) == ["plain.txt", "sub", "sub/x.txt", "sub/y.txt"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_t_run_13_same_new_name_twice_with_overwrite_keeps_the_last(root: Path, backend: str) -> None:
    result = _two_writes(root, "a.txt", "a.txt", backend, overwrite=True)
    assert result.ok and _files(root) == ["a.txt"] and (root / "a.txt").read_text() == "two"
    assert result.commands_applied == 2 and _host_commands(result).success


# --- the batch itself, with the facade called directly ---------------------------------------------


class _Ctx:
    """The part of ``BindingContext`` the write facade uses, over a real command queue."""

    def __init__(self, root: Path, **parameters: str) -> None:
        self.grant_parameters = {"root": str(root), "maxBytesPerRun": "4096", **parameters}
        self.run_id = os.urandom(16).hex()
        self.queue = CommandBuffer()

    @property
    def planned(self) -> PlannedState:
        return self.queue.planned

    def charge_file_write(self, amount: int) -> None:
        pass

    def audit(self, resource_id: str | None = None, **_: object) -> None:
        pass

    def enqueue(self, kind: str, payload: Any = None, apply: Any = None, *, prepare: Any = None) -> Command:
        return self.queue.enqueue(kind, payload, apply, "file.writeText", prepare)


def _queued(root: Path, path: str, text: str, **parameters: str) -> Command:
    """One write queued by its own run, so the call-time check cannot see the others."""
    ctx: Any = _Ctx(root, **parameters)
    write_text(ctx, SandboxPath(path), text)
    (command,) = ctx.queue.close()
    return command


def test_t_run_24_batch_duplicate_create_only_refused_at_prepare_nothing_on_disk(root: Path) -> None:
    first = _queued(root, "a.txt", "one", allowCreate="true")
    second = _queued(root, "a.txt", "two", allowCreate="true")
    report = apply_commands((first, second))
    assert _files(root) == []
    assert report.failed is second and report.phase == "prepare" and report.applied == ()


def test_t_run_24_name_taken_before_commit_rolls_back_the_batch(root: Path) -> None:
    first = _queued(root, "a.txt", "one", allowCreate="true")
    second = _queued(root, "c.txt", "two", allowCreate="true")
    third_ctx: Any = _Ctx(root, allowCreate="true")
    write_text(third_ctx, SandboxPath("d.txt"), "three")
    (third,) = third_ctx.queue.close()
    # the name is taken after the call-time check and after prepare: only commit can notice
    prepare = third.prepare
    assert prepare is not None

    def late_prepare(planned: PlannedState) -> Any:
        staged = prepare(planned)
        (root / "d.txt").write_text("raced")
        return staged

    raced = Command(third.kind, third.payload, None, third.binding_id, 2, late_prepare)
    report = apply_commands((first, second, raced))
    assert _files(root) == ["d.txt"] and (root / "d.txt").read_text() == "raced"
    assert report.failed is raced and report.phase == "commit"
    assert report.rolled_back == (second, first) and report.applied == ()


def test_t_run_24_rollback_of_a_new_name_written_twice_removes_it(root: Path) -> None:
    first = _queued(root, "a.txt", "one", allowCreate="true", allowOverwrite="true")
    second = _queued(root, "a.txt", "two", allowCreate="true", allowOverwrite="true")
    poison = Command("poison", apply=_boom, sequence=2)
    report = apply_commands((first, second, poison))
    assert _files(root) == [] and report.rolled_back == (second, first) and report.applied == ()


def test_t_run_13_a_rollback_that_fails_is_reported_as_still_applied(root: Path) -> None:
    class Stuck:
        def commit(self) -> None:
            pass

        def rollback(self) -> None:
            raise OSError("cannot undo")

        def release(self) -> None:
            pass

    stuck = Command("stuck", prepare=lambda planned: Stuck(), sequence=0)
    write = _queued(root, "a.txt", "one", allowCreate="true")
    poison = Command("poison", apply=_boom, sequence=2)
    report = apply_commands((stuck, write, poison))
    assert _files(root) == []
    assert report.unrestored == (stuck,) and report.applied == (stuck,)
    assert report.rolled_back == (write,)
    error = report.error()
    assert error is not None and error.safe_message.endswith("1 of 3 command(s) stay applied")


def test_a_command_is_either_transactional_or_plain() -> None:
    with pytest.raises(ValueError):
        CommandBuffer().enqueue("both", {}, apply=_boom, prepare=lambda planned: _FailingCommit([]))
