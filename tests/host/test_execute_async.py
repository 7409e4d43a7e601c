"""``SandboxHost.execute_async``: runs on the caller's event loop, async bindings awaited there, the
wall-time limit as an asyncio deadline, task cancellation cancelling the run with nothing applied,
and per-run isolation of usage, audit trail and commands among many concurrent runs. Also the
synchronous ``execute`` awaiting on a host-supplied loop (no thread per call)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dotboxd.host import (
    BindingContext,
    Cost,
    Effect,
    ExecutionResult,
    Policy,
    SandboxHost,
    host_binding,
)
from dotboxd.runtime.audit import AuditEvent

CAP = "probe.cap"
FX = Effect.CPU | Effect.HOST_STATE_READ


def _kernel(body: str, signature: str = "main() -> I32") -> str:
    return f'module "t" version "1.0.0";\nentrypoint fn {signature} {{\n{body}\n}}\n'


def _policy(wall_ms: int = 60_000, *, asynchronous: bool = True) -> Policy:
    builder = Policy.builder().grant(CAP).with_max_wall_time_ms(wall_ms)
    return (builder.allow_runtime_async() if asynchronous else builder).build()


def _binding(fn: Any, *, params: tuple[str, ...] = (), context: bool = False, is_async: bool = True) -> Any:
    return host_binding(
        id="probe.call",
        capability=CAP,
        effects=FX,
        cost=Cost(base_fuel=3),
        parameters=list(params),
        returns="I32",
        is_async=is_async,
        context=context,
    )(fn)


def _code(result: ExecutionResult) -> tuple[str, str] | None:
    return None if result.error is None else (result.error.category, result.error.code)


# --- on the caller's loop ------------------------------------------------------------------------


def test_async_binding_awaits_work_tied_to_the_callers_loop() -> None:
    """Issue 13: a binding awaiting a future of the host's own loop completes (it used to time out,
    because the binding ran on a private loop in another thread while ``execute`` blocked this one)."""

    async def main() -> ExecutionResult:
        loop = asyncio.get_running_loop()
        seen: list[asyncio.AbstractEventLoop] = []

        async def probe(x: int) -> int:
            seen.append(asyncio.get_running_loop())
            future: asyncio.Future[int] = loop.create_future()
            loop.call_later(0.005, future.set_result, x * 2)
            return await future

        host = SandboxHost(bindings=[_binding(probe, params=("I32",))])
        plan = host.prepare(_kernel("return probe.call(x) + 1;", "main(x I32) -> I32"), _policy())
        result = await host.execute_async(plan, "main", [20])
        assert seen == [loop]
        return result

    result = asyncio.run(main())
    assert result.ok and result.value == 41
    assert result.usage.host_calls == 1


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_a_deep_run_on_a_helper_thread_still_awaits_on_the_callers_loop(backend: str) -> None:
    """T-RUN-32: a plan deep enough that its run continues on a helper thread (``runtime/stack.py``)
    still awaits its async bindings on the caller's loop, and the loop keeps serving other tasks
    meanwhile (it used to fail with BindingFailure: a greenlet cannot be resumed from another thread)."""
    depth = 400
    functions = [f"fn f{depth}(x I32) -> I32 {{ return probe.call(x); }}"]
    functions += [f"fn f{i}(x I32) -> I32 {{ return f{i + 1}(x); }}" for i in range(depth - 1, 0, -1)]
    kernel = (
        'module "t" version "1.0.0";\n'
        + "\n".join(functions)
        + "\nentrypoint fn main(x I32) -> I32 { return f1(x) + 1; }\n"
    )

    async def main() -> tuple[ExecutionResult, int]:
        loop = asyncio.get_running_loop()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        async def probe(x: int) -> int:
            assert asyncio.get_running_loop() is loop
            await asyncio.sleep(0.01)
            return x * 2

        host = SandboxHost(bindings=[_binding(probe, params=("I32",))])
        policy = (
            Policy.builder()
            .grant(CAP)
            .allow_runtime_async()
            .with_limits(max_call_depth=512, max_wall_time_ms=60_000, max_fuel=10_000_000)
            .build()
        )
        plan = host.prepare(kernel, policy)
        side = asyncio.ensure_future(ticker())
        try:
            result = await host.execute_async(plan, "main", [20], backend=backend)
        finally:
            side.cancel()
        return result, ticks

    result, ticks = asyncio.run(main())
    assert result.ok, result.error
    assert result.value == 41
    assert ticks > 0  # the loop ran other tasks while the run awaited


def test_sync_bindings_and_the_kernel_run_inline_on_the_loop_thread() -> None:
    threads: list[int] = []

    def probe() -> int:
        threads.append(threading.get_ident())
        return 7

    async def main() -> ExecutionResult:
        host = SandboxHost(bindings=[_binding(probe, is_async=False)])
        plan = host.prepare(_kernel("return probe.call();"), _policy(asynchronous=False))
        return await host.execute_async(plan)

    before = threading.active_count()
    result = asyncio.run(main())
    assert result.ok and result.value == 7
    assert threads == [threading.get_ident()]
    assert threading.active_count() == before


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_execute_async_and_execute_agree_on_everything_observable(backend: str) -> None:
    async def probe(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    host = SandboxHost(bindings=[_binding(probe, params=("I32",))])
    body = "s = 0;\nfor i in 0..n { s = s + probe.call(i); }\nreturn s;"
    plan = host.prepare(_kernel(body, "main(n I32) -> I32"), _policy())
    sync = host.execute(plan, "main", [5], backend=backend, run_id="r1")
    via_async = asyncio.run(host.execute_async(plan, "main", [5], backend=backend, run_id="r1"))
    assert sync.ok and sync.value == 15
    assert (via_async.value, via_async.usage, via_async.binding_calls) == (
        sync.value,
        sync.usage,
        sync.binding_calls,
    )
    strip = [(e.kind, e.success, e.binding_id, e.error_code, e.sequence) for e in sync.audit_events]
    assert [
        (e.kind, e.success, e.binding_id, e.error_code, e.sequence) for e in via_async.audit_events
    ] == strip


# --- many concurrent runs on one loop --------------------------------------------------------------

CONCURRENT_RUNS = 1_000


def test_1000_concurrent_runs_keep_their_own_usage_audit_trail_and_commands() -> None:
    """Per-run isolation under concurrency: 1,000 runs interleave on one loop (each suspends at every
    binding call), each with a different number of calls; every run's value, usage, binding calls,
    audit trail and applied commands must be exactly its own - equal to what a lone synchronous run
    of the same input produces."""
    applied: list[tuple[str, int]] = []

    async def probe(ctx: BindingContext, tag: int) -> int:
        await asyncio.sleep(0.001 * (tag % 3))
        run_id = ctx.run_id
        ctx.enqueue("probe.note", {"tag": tag}, lambda: applied.append((run_id, tag)))
        return tag

    host = SandboxHost(bindings=[_binding(probe, params=("I32",), context=True)])
    body = "s = 0;\nfor i in 0..(x % 7) + 1 { s = s + probe.call(x); }\nreturn s;"
    plan = host.prepare(_kernel(body, "main(x I32) -> I32"), _policy())
    expected = {x: host.execute(plan, "main", [x]) for x in range(7)}
    applied.clear()

    async def main() -> tuple[list[ExecutionResult], float]:
        started = time.perf_counter()
        results = await asyncio.gather(
            *(host.execute_async(plan, "main", [x]) for x in range(CONCURRENT_RUNS))
        )
        return list(results), time.perf_counter() - started

    results, seconds = asyncio.run(main())
    print(
        f"{CONCURRENT_RUNS} concurrent execute_async runs: {seconds:.3f} s, {CONCURRENT_RUNS / seconds:.0f} runs/s"
    )
    assert len({r.run_id for r in results}) == CONCURRENT_RUNS
    for x, result in enumerate(results):
        calls = x % 7 + 1
        alone = expected[x % 7]
        assert result.ok, (x, result.error)
        assert result.value == x * calls
        assert result.usage == alone.usage and result.usage.host_calls == calls
        assert dict(result.binding_calls) == {"probe.call": calls}
        assert {e.run_id for e in result.audit_events} == {result.run_id}
        kinds = [e.kind for e in result.audit_events]
        assert kinds == ["BindingCall"] * calls + ["RunSummary", "HostCommands"]
        assert [e.sequence for e in result.audit_events] == list(range(calls + 2))
        assert [c.payload["tag"] for c in result.commands] == [x] * calls
        assert result.commands_applied == calls
    mine: dict[str, list[int]] = {}
    for run_id, tag in applied:
        mine.setdefault(run_id, []).append(tag)
    assert {run_id: tags for run_id, tags in mine.items()} == {
        r.run_id: [x] * (x % 7 + 1) for x, r in enumerate(results)
    }


# --- the deadline and cancellation -----------------------------------------------------------------


def test_wall_time_is_an_asyncio_deadline_and_the_awaited_work_is_cancelled() -> None:
    """A binding that never finishes: Timeout at the run's wall time, its coroutine cancelled."""
    cancelled = asyncio.Event()

    async def never() -> int:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 0

    async def main() -> tuple[ExecutionResult, float]:
        host = SandboxHost(bindings=[_binding(never)])
        plan = host.prepare(_kernel("return probe.call();"), _policy(wall_ms=100))
        started = time.monotonic()
        result = await host.execute_async(plan)
        return result, time.monotonic() - started

    result, seconds = asyncio.run(main())
    assert _code(result) == ("Timeout", "R-BINDING-TIMEOUT")
    assert cancelled.is_set()
    assert 0.05 <= seconds < 5.0


def test_a_binding_exception_under_execute_async_is_sanitized() -> None:
    async def broken() -> int:
        await asyncio.sleep(0)
        raise ValueError("secret /etc/passwd detail")

    async def main() -> ExecutionResult:
        host = SandboxHost(bindings=[_binding(broken)])
        plan = host.prepare(_kernel("return probe.call();"), _policy())
        return await host.execute_async(plan)

    result = asyncio.run(main())
    assert _code(result) == ("BindingFailure", "R-BINDING-FAILED")
    assert "secret" not in str(result.to_json())


def test_cancelling_the_awaiting_task_cancels_the_run_and_applies_nothing() -> None:
    """Cancellation threat: a host task cancelled while its run waits in an async binding must end
    the run as Cancelled with none of its queued commands applied, write the RunSummary, cancel the
    awaited work, and let asyncio's cancellation propagate."""
    applied: list[int] = []
    observed: list[AuditEvent] = []
    waiting = asyncio.Event()
    awaited_cancelled: list[bool] = []

    async def slow(ctx: BindingContext) -> int:
        ctx.enqueue("probe.note", {}, lambda: applied.append(1))
        waiting.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            awaited_cancelled.append(True)
            raise
        return 1

    host = SandboxHost(bindings=[_binding(slow, context=True)], observers=[observed.append])
    plan = host.prepare(_kernel("a = probe.call(); return a;"), _policy())

    async def main() -> None:
        task = asyncio.create_task(host.execute_async(plan))
        await waiting.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()

    asyncio.run(main())
    assert applied == []
    assert awaited_cancelled == [True]
    summary = [e for e in observed if e.kind == "RunSummary"]
    assert len(summary) == 1 and summary[0].error_code == "Cancelled"
    assert summary[0].fields["code"] == "R-CANCELLED" and summary[0].fields["hostCalls"] == 1
    assert all(e.kind != "HostCommands" for e in observed)


def test_asyncio_timeout_around_execute_async_still_raises_timeout_error() -> None:
    """A caller's own ``asyncio.timeout`` keeps working: the run is cancelled inside it and the
    caller sees ``TimeoutError`` (the cancellation was not swallowed)."""

    async def slow() -> int:
        await asyncio.sleep(30)
        return 1

    async def main() -> None:
        host = SandboxHost(bindings=[_binding(slow)])
        plan = host.prepare(_kernel("return probe.call();"), _policy())
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await host.execute_async(plan)

    asyncio.run(main())


def test_a_cancel_token_still_stops_an_async_run() -> None:
    from dotboxd.host import CancelToken

    token = CancelToken()

    async def probe() -> int:
        token.cancel()
        await asyncio.sleep(0)
        return 1

    async def main() -> ExecutionResult:
        host = SandboxHost(bindings=[_binding(probe)])
        plan = host.prepare(_kernel("a = probe.call(); return a;"), _policy())
        return await host.execute_async(plan, cancel=token)

    assert _code(asyncio.run(main())) == ("Cancelled", "R-CANCELLED")


# --- the synchronous execute with a host-supplied loop ----------------------------------------------


@contextlib.contextmanager
def _loop_in_thread() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    loop.call_soon(ready.set)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    ready.wait()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_sync_execute_awaits_on_the_hosts_loop_without_a_thread_per_call() -> None:
    with _loop_in_thread() as loop:
        seen: list[asyncio.AbstractEventLoop] = []

        async def probe(x: int) -> int:
            seen.append(asyncio.get_running_loop())
            future: asyncio.Future[int] = loop.create_future()
            loop.call_soon(future.set_result, x + 1)
            return await future

        host = SandboxHost(bindings=[_binding(probe, params=("I32",))], async_loop=loop)
        plan = host.prepare(_kernel("return probe.call(x);", "main(x I32) -> I32"), _policy())
        before = threading.active_count()
        results = [host.execute(plan, "main", [x]) for x in range(20)]
        assert threading.active_count() == before
    assert [r.value for r in results] == [x + 1 for x in range(20)]
    assert seen == [loop] * 20


def test_sync_execute_on_its_own_loops_thread_fails_fast_instead_of_hanging() -> None:
    """Issue 13: ``execute`` called on the thread running the host's loop used to block that loop
    until the whole wall-time budget ran out; now it is refused at once (R-ASYNC-LOOP)."""

    async def probe() -> int:
        await asyncio.sleep(0)
        return 1

    async def main() -> tuple[ExecutionResult, float]:
        host = SandboxHost(bindings=[_binding(probe)], async_loop=asyncio.get_running_loop())
        plan = host.prepare(_kernel("return probe.call();"), _policy(wall_ms=10_000))
        started = time.monotonic()
        result = host.execute(plan)
        return result, time.monotonic() - started

    result, seconds = asyncio.run(main())
    assert _code(result) == ("HostFailure", "R-ASYNC-LOOP")
    assert seconds < 2.0


def test_sync_execute_refuses_a_loop_that_is_not_running() -> None:
    async def probe() -> int:
        return 1

    loop = asyncio.new_event_loop()
    try:
        host = SandboxHost(bindings=[_binding(probe)], async_loop=loop)
        plan = host.prepare(_kernel("return probe.call();"), _policy(wall_ms=10_000))
        assert _code(host.execute(plan)) == ("HostFailure", "R-ASYNC-LOOP")
    finally:
        loop.close()


def test_futures_of_another_loop_and_of_a_thread_pool_are_awaited_without_polling() -> None:
    """An ``asyncio.Future`` owned by another running loop is bridged by a done callback on its own
    loop (it used to be polled with ``time.sleep``); a ``concurrent.futures.Future`` is wrapped."""
    import concurrent.futures

    with _loop_in_thread() as other, concurrent.futures.ThreadPoolExecutor(1) as pool:

        def foreign(x: int) -> Any:
            future = asyncio.run_coroutine_threadsafe(_make_future(other, x), other).result(5)
            other.call_soon_threadsafe(lambda: other.call_later(0.005, future.set_result, x * 3))
            return future

        def pooled(x: int) -> Any:
            return pool.submit(lambda: (threading.Event().wait(0.005), x * 5)[1])

        def sleeping_in_awaiting(*args: object) -> None:
            raise AssertionError("awaiting must not poll")

        for fn, factor in ((foreign, 3), (pooled, 5)):
            host = SandboxHost(bindings=[_binding(fn, params=("I32",))])
            plan = host.prepare(_kernel("return probe.call(x);", "main(x I32) -> I32"), _policy())
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(time, "sleep", sleeping_in_awaiting)
                via_async = asyncio.run(host.execute_async(plan, "main", [2]))
            assert via_async.ok and via_async.value == 2 * factor, via_async.error
            sync = host.execute(plan, "main", [3])
            assert sync.ok and sync.value == 3 * factor, sync.error


async def _make_future(loop: asyncio.AbstractEventLoop, x: int) -> asyncio.Future[int]:
    return loop.create_future()
