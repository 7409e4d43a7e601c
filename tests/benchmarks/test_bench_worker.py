"""What the OS boundary costs: per job, one strict-profile worker (spawn, namespaces, tmpfs root,
rlimits, seccomp, a trivial job, teardown) against the same job called in process; per kernel call,
``isolation="worker"`` on a pooled worker against the in-process call (group ``kernel-worker``).

    pytest tests/benchmarks/test_bench_worker.py --benchmark-enable --benchmark-only -s
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.isolation import run_python
from dotboxd.isolation.pool import WorkerPool

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


# --- kernels in a worker: per-call overhead of isolation="worker" (pooled) vs in process -----------
# One benchmarked call is one ``host.execute`` of the same small kernel (two multiplications and an
# addition), in process and in a pre-started strict-profile worker from a pool: the difference is what
# the OS boundary costs per call once the worker is running (two frames each way over pipes, the
# worker's meter state, the result). Startup (a few hundred ms) is paid once per worker and is not
# in these numbers; ``recycle_after`` decides how often it is paid again.

KERNEL = """module "loot-score" version "1.0.0";
entrypoint fn main(level I32, rarity I32) -> I32 {
    base = level * 10;
    bonus = rarity * 25;
    return base + bonus;
}"""

_HOST = SandboxHost()
_PLAN = _HOST.prepare(KERNEL)


@pytest.fixture(scope="module")
def kernel_pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, recycle_after=1_000_000, prestart=1) as pool:
        yield pool


def _kernel_call(**options: Any) -> ExecutionResult:
    return _HOST.execute(_PLAN, "main", [4, 3], **options)


@pytest.mark.benchmark(group="kernel-worker")
def test_bench_kernel_in_process(benchmark: Any) -> None:
    result = benchmark(_kernel_call)
    assert result.ok and result.value == 115 and result.isolation_layers == ()


@pytest.mark.benchmark(group="kernel-worker")
def test_bench_kernel_in_pooled_worker(benchmark: Any, kernel_pool: WorkerPool) -> None:
    _kernel_call(isolation="worker", worker_pool=kernel_pool)  # the worker checks the plan once
    result = benchmark(_kernel_call, isolation="worker", worker_pool=kernel_pool)
    in_process = _kernel_call()
    assert result.ok and result.value == 115 and "seccomp" in result.isolation_layers
    assert result.usage == in_process.usage
    if benchmark.stats is not None:  # --benchmark-enable: print both numbers side by side
        worker_s = benchmark.stats.stats.median
        started = time.perf_counter()
        for _ in range(2_000):
            _kernel_call()
        local_s = (time.perf_counter() - started) / 2_000
        print(
            f"\nkernel call: in process {local_s * 1e6:.1f} us, pooled worker {worker_s * 1e6:.1f} us "
            f"(+{(worker_s - local_s) * 1e6:.1f} us, x{worker_s / local_s:.0f}); load {os.getloadavg()[0]:.2f}"
        )
