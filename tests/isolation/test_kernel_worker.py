"""Kernels in an isolated worker: ``SandboxHost.execute(..., isolation="worker")``.

The kernel's body runs in a pooled worker behind the strict profile; bindings, commands and audit
stay in the host. These tests check that an isolated run is the in-process run (values, errors,
fuel, usage, commands, audit), that the host trusts nothing the worker says (a forged binding call,
an oversized frame, a meter gone backwards, a worker killed mid-run), and that the pool reuses,
recycles and closes its workers without leaving a process behind.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import (
    BindingContext,
    CancelToken,
    Cost,
    Effect,
    Int32,
    Policy,
    SandboxHost,
    host_binding,
    worker_execute,
)
from dotboxd.isolation import IsolationUnavailable, Profile
from dotboxd.isolation import worker as worker_module
from dotboxd.isolation.pool import WorkerLost, WorkerPool
from dotboxd.isolation.worker import group_members

from ..optimized.differential import observe
from .layers import expected_layers

pytestmark = pytest.mark.skipif(not Path("/proc/self/ns/net").exists(), reason="needs Linux namespaces")

KERNEL = (Path(__file__).resolve().parents[2] / "examples" / "game-world.dbk").read_text("utf-8")
CAPABILITY = "game.world.monster.write.kill"


class World:
    def __init__(self, monsters: set[int]) -> None:
        self.monsters = set(monsters)
        self.calls = 0
        self.on_call: Any = None


def kill_binding(world: World) -> BindingDescriptor:
    @host_binding(
        id="game.world.kill",
        capability=CAPABILITY,
        effects=Effect.CPU | Effect.HOST_STATE_WRITE,
        cost=Cost(base_fuel=10, max_calls_per_run=100),
        context=True,
    )
    def kill(ctx: BindingContext, monster: Int32) -> bool:
        world.calls += 1
        if world.on_call is not None:
            world.on_call(monster)
        if monster not in world.monsters:
            return False
        ctx.enqueue("kill", {"monster": monster}, apply=lambda: world.monsters.discard(monster))
        return True

    return kill


def game(monsters: set[int], max_fuel: int = 100_000) -> tuple[World, SandboxHost, Any]:
    world = World(monsters)
    host = SandboxHost(bindings=[kill_binding(world)])
    policy = Policy.builder().grant(CAPABILITY).with_limits(max_fuel=max_fuel, max_wall_time_ms=5_000).build()
    return world, host, host.prepare(KERNEL, policy)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=2, recycle_after=1_000) as shared:
        yield shared


def _isolated(isolation: str, pool: WorkerPool) -> dict[str, Any]:
    return {"isolation": "worker", "worker_pool": pool} if isolation == "worker" else {}


def test_worker_kernel_run_is_the_in_process_run_and_applies_its_commands(pool: WorkerPool) -> None:
    observed = []
    for isolation in ("none", "worker"):
        world, host, plan = game({1, 2, 3, 7})
        result = host.execute(plan, "main", [[1, 2, 3, 4]], **_isolated(isolation, pool))
        observed.append(observe(result))
        assert result.ok and result.value == 3 and world.monsters == {7} and world.calls == 4
        if isolation == "worker":
            assert set(result.isolation_layers) == expected_layers()
            assert result.to_json()["isolationLayers"] == list(result.isolation_layers)
        else:
            assert result.isolation_layers == ()
    assert observed[0] == observed[1]


def test_worker_kernel_failed_run_applies_no_command_all_or_nothing_on_the_host(pool: WorkerPool) -> None:
    observed = []
    for isolation in ("none", "worker"):
        # enough fuel for some kills, not for the whole list: the queued kills must all be dropped
        world, host, plan = game({1, 2, 3, 4, 5, 6}, max_fuel=60)
        result = host.execute(plan, "main", [[1, 2, 3, 4, 5, 6]], **_isolated(isolation, pool))
        observed.append(observe(result))
        assert not result.ok and result.error is not None and result.error.code == "R-QUOTA-FUEL"
        assert world.calls >= 1 and world.monsters == {1, 2, 3, 4, 5, 6} and result.commands_applied == 0
    assert observed[0] == observed[1]


def test_worker_revoked_capability_fails_at_the_host_gate_as_in_process(pool: WorkerPool) -> None:
    observed = []
    for isolation in ("none", "worker"):
        world, host, plan = game({1})
        plan.policy.revoke(CAPABILITY, "quest over")
        result = host.execute(plan, "main", [[1]], **_isolated(isolation, pool))
        assert not result.ok and result.error is not None and result.error.code == "E-POLICY-REVOKED"
        assert world.calls == 0
        observed.append(observe(result))
    assert observed[0] == observed[1]


def test_worker_expired_grant_fails_at_the_host_gate_not_at_the_workers_check(pool: WorkerPool) -> None:
    observed = []
    for isolation in ("none", "worker"):
        world = World({1})
        host = SandboxHost(bindings=[kill_binding(world)])
        # valid when the plan was prepared (at t = 1 s), long expired when it runs
        policy = Policy.builder().grant(CAPABILITY, expires_at_unix_ms=2_000).build()
        plan = host.prepare(KERNEL, policy, now_unix_ms=1_000)
        result = host.execute(plan, "main", [[1]], **_isolated(isolation, pool))
        assert not result.ok and result.error is not None and result.error.code.startswith("E-POLICY")
        assert world.calls == 0
        observed.append(observe(result))
    assert observed[0] == observed[1]


def test_worker_pool_reuses_a_worker_then_recycles_it_after_n_runs() -> None:
    _, host, plan = game({1})
    with WorkerPool(size=1, recycle_after=3) as small:
        pids = []
        for _ in range(4):
            assert host.execute(plan, "main", [[1]], isolation="worker", worker_pool=small).ok
            pids.append(small.pids())
        # three runs on one worker, retired after the third; the fourth started a new one
        assert pids[0] == pids[1] and pids[2] == [] and pids[3] != pids[0] and len(pids[3]) == 1
        assert small.started == 2 and small.retired == 1
        first = pids[0][0]
    assert group_members(first) == [] and small.pids() == []


def test_worker_pool_is_bounded_and_closes_without_leftover_processes() -> None:
    small = WorkerPool(size=2, prestart=2)
    try:
        a, b = small.acquire(5), small.acquire(5)
        with pytest.raises(WorkerLost) as busy:
            small.acquire(0.05)
        assert busy.value.code == "R-WORKER-TIMEOUT"
        small.release(a, healthy=True)
        assert small.acquire(1) is a
        small.release(a, healthy=True)
        small.release(b, healthy=True)
        pids = small.pids()
        assert len(pids) == 2 and all(group_members(p) for p in pids)
    finally:
        small.close()
    assert all(group_members(p) == [] for p in pids)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(WorkerLost):
        small.acquire(0.01)


def test_worker_startup_failure_fails_closed_with_isolation_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "pyseccomp.py"
    broken.write_text("raise ImportError('libseccomp.so.2: cannot open shared object file')\n")
    monkeypatch.setattr(
        worker_module, "_seccomp_module_path", lambda: str(broken)
    )  # pools launch through it too
    world, host, plan = game({1})
    with WorkerPool(size=1) as failing:
        with pytest.raises(IsolationUnavailable) as refused:
            host.execute(plan, "main", [[1]], isolation="worker", worker_pool=failing)
        assert set(refused.value.layers) == {"seccomp"} and failing.pids() == []
    assert world.calls == 0


def test_worker_kernel_lowered_profile_runs_and_reports_its_layers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "pyseccomp.py"
    broken.write_text("raise ImportError('no libseccomp here')\n")
    monkeypatch.setattr(worker_module, "_seccomp_module_path", lambda: str(broken))
    from dotboxd.isolation import strict

    _, host, plan = game({1})
    with WorkerPool(strict().lowered("seccomp"), size=1) as lowered:
        result = host.execute(plan, "main", [[1]], isolation="worker", worker_pool=lowered)
    assert result.ok and "seccomp" not in result.isolation_layers and "net-ns" in result.isolation_layers


def signal_worker_on_first_call(world: World, pool: WorkerPool, signum: signal.Signals) -> list[int]:
    """From the run's first binding call on, send ``signum`` to every pooled worker's process group
    (once): the worker dies or freezes mid-run. Returns the signalled pids, filled in at that call."""
    signalled: list[int] = []

    def signal_the_worker(monster: int) -> None:
        if not signalled:
            for pid in pool.pids():
                os.killpg(pid, signum)
                signalled.append(pid)

    world.on_call = signal_the_worker
    return signalled


def test_worker_killed_mid_run_is_a_clear_error_and_the_host_stays_healthy(pool: WorkerPool) -> None:
    world, host, plan = game({1, 2, 3})
    killed = signal_worker_on_first_call(world, pool, signal.SIGKILL)
    result = host.execute(plan, "main", [[1, 2, 3]], isolation="worker", worker_pool=pool)
    assert not result.ok and result.error is not None and result.error.code == "R-WORKER-KILLED"
    assert result.error.category == "QuotaExceeded" and result.commands_applied == 0
    assert world.monsters == {1, 2, 3}  # the kill the binding queued was dropped with the run
    assert killed and all(group_members(p) == [] for p in killed)
    world.on_call = None
    again = host.execute(plan, "main", [[1, 2, 3]], isolation="worker", worker_pool=pool)
    assert again.ok and again.value == 3 and world.monsters == set()


def test_worker_cancel_reaches_the_run_at_its_next_binding_call_as_in_process(pool: WorkerPool) -> None:
    observed = []
    for isolation in ("none", "worker"):
        world, host, plan = game({1, 2, 3})
        token = CancelToken()
        world.on_call = lambda monster, token=token: token.cancel() if monster == 2 else None
        result = host.execute(plan, "main", [[1, 2, 3]], cancel=token, **_isolated(isolation, pool))
        assert not result.ok and result.error is not None and result.error.code == "R-CANCELLED"
        assert world.monsters == {1, 2, 3}
        observed.append(observe(result))
    assert observed[0] == observed[1]


def test_worker_that_hangs_is_stopped_by_the_watchdog_and_retired(pool: WorkerPool) -> None:
    world, host, plan = game({1, 2})
    stopped = signal_worker_on_first_call(world, pool, signal.SIGSTOP)
    policy = Policy.builder().grant(CAPABILITY).with_limits(max_wall_time_ms=300).build()
    plan = host.prepare(KERNEL, policy)
    started = time.monotonic()
    result = host.execute(plan, "main", [[1, 2]], isolation="worker", worker_pool=pool)
    waited = time.monotonic() - started
    assert not result.ok and result.error is not None and result.error.code == "R-WORKER-TIMEOUT"
    assert waited < 0.3 + worker_execute.WATCHDOG_GRACE_S + 2 and world.monsters == {1, 2}
    assert stopped and all(group_members(p) == [] for p in stopped)  # killed, stopped or not
    world.on_call = None
    assert host.execute(plan, "main", [[1, 2]], isolation="worker", worker_pool=pool).ok


def test_worker_default_pool_is_strict_and_shared() -> None:
    _, host, plan = game({1})
    result = host.execute(plan, "main", [[1]], isolation="worker")
    assert result.ok and set(result.isolation_layers) == expected_layers()
    shared = worker_execute.default_pool()
    assert shared is worker_execute.default_pool() and shared.profile.name == "strict"
    assert len(shared.pids()) == 1


def test_worker_execute_async_refuses_isolation_with_a_clear_error() -> None:
    _, host, plan = game({1})
    with pytest.raises(DotBoxDError) as refused:
        asyncio.run(host.execute_async(plan, "main", [[1]], isolation="worker"))
    assert refused.value.code == "E-ISOLATION-PROFILE" and "to_thread" in refused.value.diagnostic.hint


def test_worker_unknown_isolation_mode_is_refused() -> None:
    _, host, plan = game({1})
    with pytest.raises(DotBoxDError) as refused:
        host.execute(plan, "main", [[1]], isolation="container")
    assert refused.value.code == "E-ISOLATION-PROFILE"


def test_worker_tampered_plan_is_refused_by_the_worker_before_it_runs(
    pool: WorkerPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, host, plan = game({1})
    real = worker_execute._SPECS.of

    def tampered(of_plan: Any) -> tuple[dict[str, str], str]:
        spec, _ = real(of_plan)
        # the module bytes of another kernel under this plan's hashes
        forged = dict(spec, module=spec["module"].replace('"killed"', '"slain"'))
        return forged, worker_execute.spec_key(forged)

    monkeypatch.setattr(worker_execute._SPECS, "of", tampered)
    result = host.execute(plan, "main", [[1]], isolation="worker", worker_pool=pool)
    assert not result.ok and result.error is not None and result.error.code == "R-WORKER-INTEGRITY"
    assert "module hash" in result.error.safe_message and world.calls == 0


# --- a compromised worker: scripted frames against the host's checks -----------------------------


class ScriptedWorker:
    """Stands in for a compromised worker: answers each host frame with the next scripted one."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.sent: list[dict[str, Any]] = []
        self.layers = ("interpreter",)
        self.closed = False
        self.cpu_ms = 0
        self.plans: OrderedDict[str, None] = OrderedDict()

    def send(self, frame: dict[str, Any]) -> None:
        self.sent.append(frame)

    def receive(self, deadline: float) -> dict[str, Any]:
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return step(self.sent[-1]) if callable(step) else step


class ScriptedPool:
    def __init__(self, worker: ScriptedWorker) -> None:
        self.worker = worker
        self.released: list[bool] = []

    def acquire(self, timeout_s: float) -> ScriptedWorker:
        return self.worker

    def release(self, worker: Any, *, healthy: bool) -> None:
        self.released.append(healthy)


def _call(run_request: dict[str, Any], **changes: Any) -> dict[str, Any]:
    frame = {"t": "call", "id": "game.world.kill", "args": [1], "meter": run_request["meter"], "events": []}
    frame.update(changes)
    return frame


def run_scripted(script: list[Any]) -> tuple[Any, World, ScriptedPool]:
    world, host, plan = game({1, 2})
    fake = ScriptedPool(ScriptedWorker([{"t": "ready"}, *script]))
    result = host.execute(plan, "main", [[1, 2]], isolation="worker", worker_pool=fake)  # type: ignore[arg-type]
    return result, world, fake


def _refused(result: Any, fake: ScriptedPool, world: World) -> None:
    assert not result.ok and result.error.code == "R-WORKER-RESULT" and result.error.category == "HostFailure"
    assert fake.released == [False] and world.monsters == {1, 2} and result.commands_applied == 0


def test_worker_forged_call_of_a_binding_not_in_the_plan_is_refused() -> None:
    result, world, fake = run_scripted([lambda run: _call(run, id="game.world.spawn")])
    _refused(result, fake, world)
    assert world.calls == 0 and "not in the plan" in result.error.safe_message


def test_worker_forged_call_with_wrong_argument_types_is_refused() -> None:
    result, world, fake = run_scripted([lambda run: _call(run, args=["1"])])
    _refused(result, fake, world)
    assert world.calls == 0


def test_worker_forged_meter_that_goes_backwards_or_over_the_limit_is_refused() -> None:
    def first_call(run: dict[str, Any]) -> dict[str, Any]:
        return _call(run, meter=dict(run["meter"], fuel_used=50))

    def then_less(reply: dict[str, Any]) -> dict[str, Any]:
        return _call(reply, meter=dict(reply["meter"], fuel_used=0))

    result, world, fake = run_scripted([first_call, then_less])
    _refused(result, fake, world)
    assert world.calls == 1  # the first, well-formed call was made; its queued kill was dropped

    def over_the_limit(run: dict[str, Any]) -> dict[str, Any]:
        return _call(run, meter=dict(run["meter"], fuel_used=10**9))

    result, world, fake = run_scripted([over_the_limit])
    _refused(result, fake, world)
    assert world.calls == 0


def test_worker_forged_host_binding_count_is_refused() -> None:
    def claims_calls(run: dict[str, Any]) -> dict[str, Any]:
        meter = dict(run["meter"], calls_by_binding={"game.world.kill": 7})
        return _call(run, meter=meter)

    result, world, fake = run_scripted([claims_calls])
    _refused(result, fake, world)


def test_worker_forged_result_and_audit_event_are_refused() -> None:
    def done(value: Any, **extra: Any) -> Any:
        return lambda run: {
            "t": "done",
            "ok": True,
            "value": value,
            "meter": run["meter"],
            "events": [],
            "executedBy": "reference",
            "cpuMs": 1,
            **extra,
        }

    result, world, fake = run_scripted([done("three")])
    _refused(result, fake, world)
    forged_event = {"kind": "PolicyDenied", "success": False, "fields": {}}
    result, world, fake = run_scripted([done(2, events=[forged_event])])
    _refused(result, fake, world)
    error = {"code": "R-WORKER-KILLED", "message": "pretend"}
    result, world, fake = run_scripted(
        [lambda run: {**done(None)(run), "ok": False, "error": error, "value": None}]
    )
    _refused(result, fake, world)


def test_worker_that_keeps_calling_bindings_cannot_hold_the_host_past_the_watchdog() -> None:
    world, host, _ = game({1, 2})
    policy = (
        Policy.builder().grant(CAPABILITY).with_limits(max_wall_time_ms=200, max_host_calls=1_000_000).build()
    )
    plan = host.prepare(KERNEL, policy)

    def endless(sent: dict[str, Any]) -> dict[str, Any]:
        return _call(sent, meter=sent["meter"])

    class Endless(ScriptedWorker):
        def receive(self, deadline: float) -> dict[str, Any]:
            if self.script:
                return super().receive(deadline)
            if time.monotonic() - started > 20:  # fail, rather than hang, if the host never stops
                raise AssertionError("the host kept serving a worker past its run's wall time")
            return endless(self.sent[-1])  # a call after every reply, forever

    fake = ScriptedPool(Endless([{"t": "ready"}]))
    started = time.monotonic()
    result = host.execute(plan, "main", [[1, 2]], isolation="worker", worker_pool=fake)  # type: ignore[arg-type]
    assert time.monotonic() - started < 0.2 + worker_execute.WATCHDOG_GRACE_S + 2
    assert not result.ok and result.error is not None and result.error.code == "R-WORKER-TIMEOUT"
    assert fake.released == [False] and world.monsters == {1, 2} and world.calls >= 1


def test_worker_oversized_frame_is_refused_before_it_is_read() -> None:
    from dotboxd.isolation import frames
    from dotboxd.isolation.pool import FRAME_CAP, KernelWorker

    read_fd, write_fd = os.pipe()
    try:
        reader = object.__new__(KernelWorker)
        reader._read_fd = read_fd  # type: ignore[attr-defined]
        reader._buffer = bytearray()  # type: ignore[attr-defined]
        import selectors
        import time

        reader._selector = selectors.DefaultSelector()  # type: ignore[attr-defined]
        reader._selector.register(read_fd, selectors.EVENT_READ)  # type: ignore[attr-defined]
        os.write(write_fd, frames.HEADER.pack(FRAME_CAP + 1) + b"{")
        with pytest.raises(WorkerLost) as lost:
            reader.receive(time.monotonic() + 5)
        assert lost.value.code == "R-WORKER-RESULT" and "over the cap" in lost.value.message
        os.write(write_fd, b"")
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_worker_profile_can_only_be_lowered_explicitly() -> None:
    pool = WorkerPool(size=1)
    try:
        assert isinstance(pool.profile, Profile) and pool.profile.name == "strict"
        assert pool.profile.required == pool.profile.attempt
    finally:
        pool.close()
