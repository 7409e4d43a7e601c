"""What ``execute_async`` costs next to ``execute``, and how many concurrent async runs one loop carries.

    pytest tests/benchmarks/test_bench_async.py --benchmark-enable --benchmark-only -s

Group ``async_overhead``: 100 calls of a 2-parameter Bool predicate (no binding at all) awaited in
one coroutine - ``await host.execute_async(...)`` - next to the same 100 calls of ``host.execute``
made from a coroutine. The difference is the price of the async entry point itself (a greenlet and
the driver coroutine per run; the run never suspends, so the loop is not involved).

Group ``async_concurrency``: 200 concurrent ``execute_async`` runs on one loop, each making two
calls of an async binding that yields to the loop once (``asyncio.sleep(0)``).

With ``--benchmark-disable`` (the normal test run) each body runs once and its results are checked.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dotboxd.host import Cost, Effect, ExecutionResult, Int32, Policy, SandboxHost, host_binding

PREDICATE = """module "pred" version "1.0.0";
entrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }"""
CALLS = 100
CONCURRENT = 200

_HOST = SandboxHost()
_PLAN = _HOST.prepare(PREDICATE)


@host_binding(
    id="probe.next",
    capability="probe.next",
    effects=Effect.CPU | Effect.HOST_STATE_READ,
    cost=Cost(base_fuel=1),
)
async def _next(x: Int32) -> Int32:
    await asyncio.sleep(0)
    return x + 1


_ASYNC_HOST = SandboxHost(bindings=[_next])
_ASYNC_PLAN = _ASYNC_HOST.prepare(
    'module "a" version "1.0.0";\nentrypoint fn main(x I32) -> I32 { return probe.next(probe.next(x)); }',
    Policy.builder().grant("probe.next").allow_runtime_async().with_max_wall_time_ms(60_000).build(),
)


async def _sync_calls() -> list[ExecutionResult]:
    return [_HOST.execute(_PLAN, "check", [7, 12]) for _ in range(CALLS)]


async def _async_calls() -> list[ExecutionResult]:
    return [await _HOST.execute_async(_PLAN, "check", [7, 12]) for _ in range(CALLS)]


async def _concurrent() -> list[ExecutionResult]:
    return list(
        await asyncio.gather(
            *(_ASYNC_HOST.execute_async(_ASYNC_PLAN, "main", [x]) for x in range(CONCURRENT))
        )
    )


def _in_loop(benchmark: Any, make: Any) -> list[ExecutionResult]:
    runner = asyncio.Runner()
    try:
        result: list[ExecutionResult] = benchmark(lambda: runner.run(make()))
    finally:
        runner.close()
    return result


def test_bench_execute_from_a_coroutine(benchmark: Any) -> None:
    benchmark.group = "async_overhead"
    results = _in_loop(benchmark, _sync_calls)
    assert all(r.ok and r.value is True for r in results)


def test_bench_execute_async_without_async_bindings(benchmark: Any) -> None:
    benchmark.group = "async_overhead"
    results = _in_loop(benchmark, _async_calls)
    reference = _HOST.execute(_PLAN, "check", [7, 12])
    assert all(r.ok and r.value is True and r.usage == reference.usage for r in results)


def test_bench_concurrent_execute_async_runs(benchmark: Any) -> None:
    benchmark.group = "async_concurrency"
    results = _in_loop(benchmark, _concurrent)
    assert [r.value for r in results] == [x + 2 for x in range(CONCURRENT)]
    assert all(r.usage.host_calls == 2 for r in results)
