"""The per-call fast path of ``SandboxHost.execute``: what is kept between calls never stands in for a
check that must run on every call (gates, inputs, bounds, charges), the lazily built ``RunSummary``
equals the one written at once, and the result says which tier ran."""

from __future__ import annotations

import asyncio
import copy
import re
from typing import Any

import pytest

from dotboxd.core.bindings import ASYNC_CAPABILITY, AuditLevel
from dotboxd.host import Cost, Effect, Policy, SandboxHost, host_binding
from dotboxd.runtime.context import PlanRunFacts, RunContext
from dotboxd.runtime.execution import execute_plan
from dotboxd.runtime.reference import ReferenceBackend

from .spies import count_preparations

CAP = "probe.read"
SRC = 'module "t" version "1.0.0";\nentrypoint fn main(n I32) -> Bool { return probe.read(n); }\n'
PURE = 'module "t" version "1.0.0";\nentrypoint fn main(a I32, s String) -> I32 { return a + string.length(s); }\n'


def _probe(calls: list[int], base_fuel: int = 2) -> Any:
    @host_binding(
        id="probe.read",
        capability=CAP,
        effects=Effect.CPU | Effect.HOST_STATE_READ,
        cost=Cost(base_fuel=base_fuel),
        parameters=["I32"],
        returns="Bool",
    )
    def read(n: int) -> bool:
        calls.append(n)
        return n > 0

    return read


def _pure_probe() -> Any:
    """A pure, audited binding: usable under a deterministic policy and writes its own events."""

    @host_binding(
        id="probe.read",
        effects=Effect.CPU,
        cost=Cost(base_fuel=1),
        parameters=["I32"],
        returns="Bool",
        audit=AuditLevel.PER_CALL,
    )
    def read(n: int) -> bool:
        return n > 0

    return read


def _policy(**grant: Any) -> Policy:
    return Policy.builder().grant(CAP, **grant).with_max_wall_time_ms(60_000).build()


def _codes(result: Any) -> tuple[str, str] | None:
    return None if result.error is None else (result.error.category, result.error.code)


def test_revocation_after_cached_calls_stops_the_next_run() -> None:
    calls: list[int] = []
    pol = _policy()
    host = SandboxHost(bindings=[_probe(calls)])
    plan = host.prepare(SRC, pol)
    for n in (1, 2):
        assert host.execute(plan, "main", [n]).ok
    pol.revoke(CAP)
    result = host.execute(plan, "main", [3])
    assert _codes(result) == ("PolicyDenied", "E-POLICY-REVOKED") and calls == [1, 2]
    assert [e.kind for e in result.audit_events] == ["CapabilityRevoked", "RunSummary"]


def test_grant_expiry_after_cached_calls_stops_the_next_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from dotboxd.validator import plan as plan_module
    from dotboxd.validator import policy_model

    calls: list[int] = []
    now = [1_000_000]
    monkeypatch.setattr(plan_module, "now_ms", lambda: now[0])
    monkeypatch.setattr(policy_model, "now_ms", lambda: now[0])
    host = SandboxHost(bindings=[_probe(calls)])
    plan = host.prepare(SRC, _policy(expires_at_unix_ms=1_000_500), now_unix_ms=now[0])
    assert host.execute(plan, "main", [1]).ok
    now[0] = 1_000_500
    assert _codes(host.execute(plan, "main", [2])) == ("PolicyDenied", "E-POLICY-CAP")
    assert calls == [1]


def test_a_replaced_catalog_is_checked_again() -> None:
    host = SandboxHost(bindings=[_probe([])])
    plan = host.prepare(SRC, _policy())
    assert host.execute(plan, "main", [1]).ok
    host.catalog = SandboxHost(bindings=[_probe([], base_fuel=5)]).catalog
    assert _codes(host.execute(plan, "main", [1])) == ("ValidationError", "E-PLAN-BINDINGS")


def test_inputs_bounds_and_charges_apply_on_every_cached_call() -> None:
    pol = Policy.builder().with_max_wall_time_ms(60_000).with_input_bounds("main", a=(0, 10)).build()
    host = SandboxHost()
    plan = host.prepare(PURE, pol)
    first = host.execute(plan, "main", [3, "abc"])
    again = host.execute(plan, "main", [3, "abc"])
    assert first.ok and again.ok and first.value == again.value == 6
    assert first.usage == again.usage and again.usage.string_bytes == 6  # the String input is charged
    wrong = host.execute(plan, "main", [3, 4])
    assert _codes(wrong) == ("InvalidInput", "R-VALUE-TYPE") and wrong.error is not None
    assert wrong.error.safe_message.startswith("input 2:")
    for bad in ([True, "a"], [2**31, "a"], [1.0, "a"]):
        result = host.execute(plan, "main", bad)
        assert _codes(result) == ("InvalidInput", "R-VALUE-TYPE"), bad
        assert result.error is not None and result.error.safe_message.startswith("input 1:")
    assert _codes(host.execute(plan, "main", [11, "a"])) == ("InvalidInput", "R-INPUT-BOUND")
    assert _codes(host.execute(plan, "main", [3, "\ud800"])) == ("InvalidInput", "R-VALUE-TYPE")
    assert _codes(host.execute(plan, "main", [3])) == ("InvalidInput", "R-ENTRY-ARITY")
    assert _codes(host.execute(plan, "main", "ab")) == ("InvalidInput", "R-ENTRY-ARITY")
    assert host.execute(plan, "main", [3, "\U0001f600"]).value == 5  # astral: two UTF-16 units


def test_an_unknown_entrypoint_fails_on_every_call() -> None:
    host = SandboxHost()
    plan = host.prepare(PURE)
    for _ in range(2):
        result = host.execute(plan, "nope", [])
        assert _codes(result) == ("InvalidInput", "R-ENTRY-UNKNOWN") and result.return_type is None


def _twice(body: str, signature: str, args: list[Any]) -> tuple[Any, Any]:
    """The same run on a host with an observer (summary written at once) and one without (built on
    first read); deterministic clock and fixed run ids make the two comparable field by field."""
    pol = Policy.builder().deterministic(1_700_000_000_000, 3).with_max_wall_time_ms(60_000).build()
    src = f'module "t" version "1.0.0";\nentrypoint fn {signature} {{ {body} }}\n'
    seen: list[Any] = []
    observed = SandboxHost(bindings=[_pure_probe()], observers=[seen.append])
    quiet = SandboxHost(bindings=[_pure_probe()])
    a = observed.execute(observed.prepare(src, pol), "main", args, run_id="a" * 32)
    b = quiet.execute(quiet.prepare(src, pol), "main", args, run_id="a" * 32)
    assert seen == list(a.audit_events)
    return a, b


@pytest.mark.parametrize(
    ("body", "signature", "args"),
    [
        ("return probe.read(n);", "main(n I32) -> Bool", [4]),
        ("return 1 / n;", "main(n I32) -> I32", [0]),
        ('return string.length("abc") + n;', "main(n I32) -> I32", [2]),
    ],
)
def test_a_lazily_built_summary_equals_the_one_written_at_once(
    body: str, signature: str, args: list[Any]
) -> None:
    eager, lazy = _twice(body, signature, args)
    assert len(lazy.audit_events) == len(eager.audit_events)
    assert lazy.audit_events == eager.audit_events == tuple(eager.audit_events)
    assert [e.to_json() for e in lazy.audit_events] == [e.to_json() for e in eager.audit_events]
    summary = lazy.audit_events[-1]
    assert summary.kind == "RunSummary" and summary.fields["fuelUsed"] == lazy.usage.fuel_used
    assert lazy.audit_events[-1] is summary  # built once, then kept
    assert repr(lazy.audit_events) == repr(tuple(eager.audit_events))


def test_execute_plan_still_returns_a_run_outcome() -> None:
    host = SandboxHost()
    plan = host.prepare(PURE)
    outcome = execute_plan(plan, "main", [1, "ab"], ReferenceBackend(), run_id="b" * 32)
    assert outcome.ok and outcome.value == 3 and outcome.executed_by == "reference"
    assert [e.kind for e in outcome.audit_events] == ["RunSummary"] and outcome.run_id == "b" * 32


def test_run_ids_are_unique_32_digit_hex() -> None:
    host = SandboxHost()
    plan = host.prepare(PURE)
    ids = {host.execute(plan, "main", [1, "a"]).run_id for _ in range(500)}
    assert len(ids) == 500 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


def test_async_is_asked_of_the_policy_on_every_run_when_it_could_be_granted() -> None:
    granted = (
        Policy.builder().allow_runtime_async().tolerate_unused_grants().with_max_wall_time_ms(60_000).build()
    )
    plan = SandboxHost().prepare(PURE, granted)
    facts = PlanRunFacts(plan)
    assert facts.async_possible and RunContext(plan, facts=facts).async_enabled
    granted.revoke(ASYNC_CAPABILITY)
    assert not RunContext(plan, facts=facts).async_enabled
    never = SandboxHost().prepare(PURE)
    assert not PlanRunFacts(never).async_possible and not RunContext(never).async_enabled


def test_the_dispatch_cache_is_bounded() -> None:
    host = SandboxHost(dispatch_cache_size=16)
    plan = host.prepare(PURE)
    for i in range(16 + 20):
        host.execute(plan, f"e{i}", [])
    assert len(host._dispatch) <= 16
    assert host.execute(plan, "main", [1, "a"]).ok


# --- which tier ran -------------------------------------------------------------------------------


def _summary_mode(result: Any) -> str:
    mode: str = result.audit_events[-1].fields["executionMode"]
    return mode


def test_executed_by_names_the_tier_that_ran() -> None:
    host = SandboxHost()
    plan = host.prepare(PURE)
    reference = host.execute(plan, "main", [1, "a"])
    assert (reference.backend, reference.executed_by, _summary_mode(reference)) == ("reference",) * 3
    optimized = host.execute(plan, "main", [1, "a"], backend="optimized")
    assert optimized.backend == "optimized" and optimized.executed_by == _summary_mode(optimized)
    assert optimized.executed_by == "optimized"
    refused = host.execute(plan, "main", [1, "a"], backend="no-such-backend")
    assert refused.executed_by == "" and not refused.ok


def test_auto_mode_reports_its_interpreted_runs_as_reference() -> None:
    from dotboxd.runtime.optimized import ArtifactCache, AutoBackend

    backend = AutoBackend(cache=ArtifactCache(), hotness_threshold=2)
    host = SandboxHost(backends={"auto": backend})
    plan = host.prepare(PURE)
    tiers = [host.execute(plan, "main", [1, "a"], backend="auto") for _ in range(3)]
    assert [r.executed_by for r in tiers[:2]] == ["reference", "reference"]
    assert [_summary_mode(r) for r in tiers[:2]] == ["reference", "reference"]
    assert tiers[2].executed_by == "optimized" == _summary_mode(tiers[2])
    assert "auto" in SandboxHost().backend_names()


def test_a_fallback_run_is_reported_as_run_by_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
    from dotboxd.runtime.optimized import artifact as artifact_module
    from dotboxd.runtime.optimized.errors import VerifierFailure

    def refuse(*args: object, **kwargs: object) -> None:
        raise VerifierFailure("refused for the test")

    monkeypatch.setattr(artifact_module, "verify_module", refuse)
    backend = OptimizedBackend(cache=ArtifactCache(), allow_fallback=True)
    host = SandboxHost(backends={"optimized": backend})
    result = host.execute(host.prepare(PURE), "main", [1, "a"], backend="optimized")
    assert result.ok and result.backend == "optimized" and result.executed_by == "reference"
    assert _summary_mode(result) == "reference"
    assert "ExecutionFallback" in [e.kind for e in result.audit_events]


def test_the_dispatch_cache_drops_the_least_recently_used_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    host = SandboxHost(dispatch_cache_size=2)
    a, b, c = (host.prepare(PURE.replace('"t"', f'"{name}"')) for name in "abc")
    misses = count_preparations(host, monkeypatch)
    for plan in (a, b, a, c, a, b):  # c evicts b (a was used more recently), then b evicts c
        assert host.execute(plan, "main", [1, "x"]).value == 2
    assert misses == [id(a), id(b), id(c), id(b)]


def test_execute_async_and_execute_share_one_lru_dispatch_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    host = SandboxHost(dispatch_cache_size=2)
    a, b, c = (host.prepare(PURE.replace('"t"', f'"{name}"')) for name in "abc")
    misses = count_preparations(host, monkeypatch)

    async def run_async(plan: Any) -> Any:
        return await host.execute_async(plan, "main", [1, "x"])

    # the same order as the synchronous test above, alternating the two calls: one cache, one LRU
    for plan, is_async in ((a, False), (b, True), (a, True), (c, False), (a, False), (b, True)):
        result = asyncio.run(run_async(plan)) if is_async else host.execute(plan, "main", [1, "x"])
        assert result.value == 2
        assert len(host._dispatch) <= 2
    assert misses == [id(a), id(b), id(c), id(b)]


def test_a_host_round_robin_within_its_dispatch_cache_size_never_misses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = SandboxHost(dispatch_cache_size=300)
    plans = [host.prepare(PURE.replace('"t"', f'"p{i}"')) for i in range(3)]
    plans += [copy.copy(plans[i % 3]) for i in range(297)]  # 300 identity-distinct plans
    misses = count_preparations(host, monkeypatch)
    for _ in range(2):
        for plan in plans:
            assert host.execute(plan, "main", [1, "ab"]).value == 3
    assert len(misses) == 300


@pytest.mark.parametrize("size", [0, -1, True, 2.5])
def test_a_bad_dispatch_cache_size_is_refused(size: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        SandboxHost(dispatch_cache_size=size)
