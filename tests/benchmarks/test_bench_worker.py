"""What the OS boundary costs per job: one strict-profile worker (spawn, namespaces, tmpfs root,
rlimits, seccomp, a trivial job, teardown) against the same job called in process."""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.isolation import run_python

JOB = "def main(x):\n    return x + 1\n"


def _in_process(x: int) -> int:
    namespace: dict[str, Any] = {}
    exec(compile(JOB, "job.py", "exec"), namespace)
    result: int = namespace["main"](x)
    return result


@pytest.mark.benchmark(group="worker")
def test_bench_worker_strict_job(benchmark: Any) -> None:
    result = benchmark.pedantic(run_python, args=(JOB, 41), rounds=10, iterations=1)
    assert result.ok and result.value == 42


@pytest.mark.benchmark(group="worker")
def test_bench_worker_in_process_baseline(benchmark: Any) -> None:
    assert benchmark(_in_process, 41) == 42
