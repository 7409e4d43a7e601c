"""Host binding calls follow spec/semantics.md section 7: plan membership, capability now, host-call charge, base fuel,
async backstop, invoke, return validation, audit; host exceptions never leak."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import time
from typing import Any

import pytest

from dotboxd.core.bindings import AuditLevel
from dotboxd.core.values import SandboxPath, SandboxUri
from dotboxd.host import BindingContext, BindingError, Cost, Effect, Policy, SandboxHost, host_binding
from dotboxd.runtime.binding_call import call_binding
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import SandboxError

from .kernels import module

CAP = "probe.cap"


def _binding(
    fn: Any,
    returns: str = "Bool",
    *,
    is_async: bool = False,
    context: bool = False,
    audit: AuditLevel | None = None,
    params: tuple[str, ...] = (),
) -> Any:
    return host_binding(
        id="probe.call",
        capability=CAP,
        effects=Effect.CPU | Effect.HOST_STATE_READ,
        cost=Cost(base_fuel=3),
        parameters=list(params),
        returns=returns,
        is_async=is_async,
        context=context,
        audit=audit,
    )(fn)


def _policy(asynchronous: bool = False, wall_ms: int = 60_000) -> Policy:
    builder = Policy.builder().grant(CAP).with_max_wall_time_ms(wall_ms)
    if asynchronous:
        builder = builder.allow_runtime_async()
    return builder.build()


def _run(binding: Any, returns: str = "Bool", pol: Policy | None = None, body: str = "return probe.call();"):  # type: ignore[no-untyped-def]
    host = SandboxHost(bindings=[binding])
    plan = host.prepare(module(body, f"main() -> {returns}"), pol or _policy())
    return host.execute(plan)


def _code(result: Any) -> tuple[str, str]:
    assert result.error is not None, result.value
    return result.error.category, result.error.code


def test_a_successful_call_is_charged_and_audited() -> None:
    result = _run(_binding(lambda: True))
    assert result.ok and result.value is True
    # stmt 1 + call 1 + base fuel 3
    assert result.usage.fuel_used == 5 and result.usage.host_calls == 1
    calls = [e for e in result.audit_events if e.kind == "BindingCall"]
    assert len(calls) == 1 and calls[0].success and calls[0].resource_id == "binding:probe.call"
    assert calls[0].capability_id == CAP


def test_binding_not_in_plan_is_a_validation_error() -> None:
    host = SandboxHost()
    plan = host.prepare(module("return 1;"))
    with pytest.raises(SandboxError) as info:
        call_binding(RunContext(plan), "probe.missing", ())
    assert (info.value.category, info.value.code) == ("ValidationError", "R-PLAN-BINDING")


def test_capability_revoked_mid_run_is_permission_denied() -> None:
    pol = _policy()

    def revoke_then_answer() -> bool:
        pol.revoke(CAP)
        return True

    body = "a = probe.call(); b = probe.call(); return 0;"
    result = _run(_binding(revoke_then_answer), "I32", pol, body)
    assert _code(result) == ("PermissionDenied", "R-CAPABILITY-DENIED")
    denied = [e for e in result.audit_events if e.kind == "PolicyDenied"]
    assert (
        len(denied) == 1 and denied[0].capability_id == CAP and denied[0].resource_id == f"capability:{CAP}"
    )
    assert result.usage.host_calls == 1


def test_revoked_before_the_run_never_runs() -> None:
    calls: list[int] = []
    pol = _policy()
    host = SandboxHost(bindings=[_binding(lambda: calls.append(1) or True)])
    plan = host.prepare(module("return probe.call();", "main() -> Bool"), pol)
    pol.revoke(CAP)
    result = host.execute(plan)
    assert _code(result) == ("PolicyDenied", "E-POLICY-REVOKED") and calls == []
    assert any(e.kind == "CapabilityRevoked" for e in result.audit_events)


def test_pending_coroutine_without_async_grant_fails_at_once_and_never_runs() -> None:
    started: list[bool] = []

    async def never() -> bool:
        started.append(True)
        await asyncio.sleep(3600)
        return True

    t0 = time.monotonic()
    result = _run(_binding(lambda: never()))
    assert _code(result) == ("BindingFailure", "R-BINDING-PENDING")
    assert started == [] and time.monotonic() - t0 < 5


def test_pending_future_without_async_grant_is_not_waited_for() -> None:
    future: concurrent.futures.Future[bool] = concurrent.futures.Future()
    t0 = time.monotonic()
    assert _code(_run(_binding(lambda: future))) == ("BindingFailure", "R-BINDING-PENDING")
    assert time.monotonic() - t0 < 5


def test_sync_binding_returning_pending_fails_at_once_even_with_the_async_grant() -> None:
    """T-NEG-003: only a binding declared async may be awaited; a grant that an async binding of the
    same module brings in does not make a sync binding's pending result acceptable."""
    future: concurrent.futures.Future[bool] = concurrent.futures.Future()

    async def later() -> bool:
        return True

    async_binding = host_binding(
        id="probe.later",
        capability=CAP,
        effects=Effect.CPU | Effect.HOST_STATE_READ,
        cost=Cost(base_fuel=3),
        parameters=[],
        returns="Bool",
        is_async=True,
    )(later)
    host = SandboxHost(bindings=[_binding(lambda: future), async_binding])
    body = "first = probe.later(); return probe.call();"
    plan = host.prepare(module(body, "main() -> Bool"), _policy(asynchronous=True, wall_ms=5_000))
    t0 = time.monotonic()
    result = host.execute(plan)
    assert _code(result) == ("BindingFailure", "R-BINDING-PENDING")
    assert time.monotonic() - t0 < 2


def test_completed_future_is_accepted_without_the_grant() -> None:
    future: concurrent.futures.Future[bool] = concurrent.futures.Future()
    future.set_result(True)
    assert _run(_binding(lambda: future)).value is True


def test_async_binding_with_the_grant_is_awaited() -> None:
    async def later() -> bool:
        await asyncio.sleep(0.001)
        return True

    result = _run(_binding(later, is_async=True), pol=_policy(asynchronous=True))
    assert result.ok and result.value is True


def test_async_binding_that_never_finishes_times_out() -> None:
    async def never() -> bool:
        await asyncio.Event().wait()
        return True

    result = _run(_binding(never, is_async=True), pol=_policy(asynchronous=True, wall_ms=100))
    assert _code(result) == ("Timeout", "R-BINDING-TIMEOUT")


def test_async_backstop_denies_async_without_the_grant() -> None:
    async def later() -> bool:
        return True

    host = SandboxHost(bindings=[_binding(later, is_async=True)])
    plan = host.prepare(module("return probe.call();", "main() -> Bool"), _policy(asynchronous=True))
    run = RunContext(plan)
    run.async_enabled = False  # as if the grant vanished between prepare and the call
    with pytest.raises(SandboxError) as info:
        call_binding(run, "probe.call", ())
    assert info.value.code == "R-ASYNC-DENIED" and info.value.category == "PermissionDenied"


@pytest.mark.parametrize(
    ("returns", "raw"),
    [
        ("I32", "7"),
        ("I32", True),
        ("I32", 2**31),
        ("F64", math.nan),
        ("F64", math.inf),
        ("String", b"bytes"),
        ("String", "\ud800"),
        ("SandboxPath", "../secret.txt"),
        ("SandboxPath", SandboxPath("/etc/passwd")),
        ("SandboxUri", "https://user:pw@example.com/"),
        ("SandboxUri", SandboxUri("file:///etc/passwd\\x")),
        ("Bool", object()),
        ("List<I32>", [1, "2"]),
        ("Map<String, I32>", {1: 1}),
    ],
)
def test_lying_return_values_are_binding_failures(returns: str, raw: object) -> None:
    result = _run(_binding(lambda: raw, returns), returns)
    assert _code(result) == ("BindingFailure", "R-BINDING-RETURN")


def test_host_exceptions_are_sanitized() -> None:
    secret = "/srv/tenant-9/keys.pem password=hunter2"

    def explode() -> bool:
        raise PermissionError(secret)

    result = _run(_binding(explode))
    assert _code(result) == ("BindingFailure", "R-BINDING-FAILED")
    text = json.dumps(result.to_json()) + json.dumps([e.to_json() for e in result.audit_events])
    for fragment in ("hunter2", "/srv", "keys.pem", "PermissionError", "Traceback"):
        assert fragment not in text
    failures = [e for e in result.audit_events if e.kind == "BindingCall" and not e.success]
    assert len(failures) == 1 and failures[0].resource_id == "binding:probe.call"


@pytest.mark.parametrize(
    ("category", "code"),
    [
        ("NotFound", "R-BINDING-NOT-FOUND"),
        ("PermissionDenied", "R-BINDING-DENIED"),
        ("InvalidInput", "R-BINDING-INVALID"),
        ("QuotaExceeded", "R-BINDING-QUOTA"),
    ],
)
def test_deliberate_binding_refusals(category: str, code: str) -> None:
    def refuse() -> bool:
        raise BindingError(category, "no such monster")

    result = _run(_binding(refuse))
    assert _code(result) == (category, code)
    assert result.error is not None and result.error.safe_message == "no such monster"


def test_binding_error_rejects_other_categories() -> None:
    with pytest.raises(ValueError):
        BindingError("HostFailure", "x")


def test_per_resource_bindings_must_audit_themselves() -> None:
    def silent(ctx: BindingContext) -> bool:
        return True

    def audited(ctx: BindingContext) -> bool:
        ctx.audit("player:57")
        return True

    result = _run(_binding(silent, context=True, audit=AuditLevel.PER_RESOURCE))
    assert _code(result) == ("BindingFailure", "R-BINDING-AUDIT")
    result = _run(_binding(audited, context=True, audit=AuditLevel.PER_RESOURCE))
    assert result.ok
    assert [e.resource_id for e in result.audit_events if e.kind == "BindingCall"] == ["player:57"]


def test_arguments_arrive_as_sandbox_values() -> None:
    seen: list[Any] = []

    def record(xs: Any, n: Any) -> bool:
        seen.append((xs, n))
        return True

    binding = _binding(record, params=("List<I32>", "I32"))
    result = _run(binding, body="return probe.call(list.of(1, 2), 3);")
    assert result.ok
    xs, n = seen[0]
    assert list(xs) == [1, 2] and n == 3


def test_context_is_dead_after_its_call() -> None:
    kept: list[BindingContext] = []

    def keep(ctx: BindingContext) -> bool:
        kept.append(ctx)
        return True

    assert _run(_binding(keep, context=True)).ok
    with pytest.raises(RuntimeError):
        kept[0].enqueue("late", {})
