"""The standard ``time.nowUnixMillis``, ``random.nextI32``, ``log.info``/``log.warn`` facades and the
``net.http.get`` refusals: each facade through the runtime's binding call path (``call_binding`` on
a ``RunContext``, the path both backends use), and whole kernels through ``SandboxHost`` on both
backends, which must agree on value, error, usage and audit events."""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import replace
from types import SimpleNamespace
from typing import Any, cast

import pytest

from dotboxd.core.bindings import standard_bindings
from dotboxd.core.values import I32_MAX, I32_MIN, SandboxUri
from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.audit import MAX_TEXT, AuditEvent
from dotboxd.runtime.binding_call import call_binding
from dotboxd.runtime.context import BindingContext, RunContext
from dotboxd.runtime.errors import BindingError, SandboxError
from dotboxd.runtime.facades import STANDARD_FACADES, attach_standard_facades, randomness
from dotboxd.runtime.facades.clock import now_unix_millis
from dotboxd.runtime.facades.randomness import next_i32, seeded_draw
from dotboxd.runtime.facades.sandbox_log import clean_message, log_info
from dotboxd.validator.plan import ExecutionPlan

BACKENDS = ("reference", "optimized")

CLOCK = """module "clock" version "1.0.0";
entrypoint fn main() -> I64 {
    return time.nowUnixMillis();
}
"""

DRAWS = """module "draws" version "1.0.0";
entrypoint fn main(lo I32, hi I32, n I32) -> List<I32> {
    out = list.empty[I32]();
    for i in 0..n {
        out = list.add(out, random.nextI32(lo, hi));
    }
    return out;
}
"""

LOGS = """module "logs" version "1.0.0";
entrypoint fn main(message String, n I32, warn Bool) -> I32 {
    for i in 0..n {
        if warn {
            log.warn(message);
        } else {
            log.info(message);
        }
    }
    return n;
}
"""

HTTP = """module "http" version "1.0.0";
entrypoint fn main(u SandboxUri) -> String {
    return net.http.get(u);
}
"""

MIXED = """module "mixed" version "1.0.0";
entrypoint fn main(lo I32, hi I32) -> I64 {
    log.info("start");
    a = random.nextI32(lo, hi);
    b = random.nextI32(lo, hi);
    log.warn(int32.toStringInvariant(a));
    return time.nowUnixMillis() + numeric.toI64(a) * 1000L + numeric.toI64(b);
}
"""


def _host() -> SandboxHost:
    return SandboxHost(standard_bindings())


def _policy(
    *, now: int | None = None, seed: int | None = None, deterministic: bool = False, **limits: int
) -> Policy:
    builder = Policy.builder().grant_time_now().grant_random().grant_logging().tolerate_unused_grants()
    # No test here is about the wall-time budget, and the default 100 ms also covers the optimized
    # backend's compile and any full collection of the test process's heap: under CI load that made
    # a first optimized run time out (R-TIMEOUT) once. A generous budget keeps the tests about draws.
    limits.setdefault("max_wall_time_ms", 30_000)
    builder = builder.with_limits(**limits)
    if deterministic:
        builder = builder.deterministic(now, seed)
    return builder.build()


def _run(source: str, policy: Policy, args: list[Any], backend: str = "reference") -> ExecutionResult:
    host = _host()
    return host.execute(host.prepare(source, policy), "main", args, backend=backend)


def _plan(source: str, policy: Policy) -> ExecutionPlan:
    return _host().prepare(source, policy)


def _event_view(e: AuditEvent, with_time: bool) -> tuple[Any, ...]:
    # the RunSummary names the backend that ran (executionMode); everything else must be equal
    fields = {k: v for k, v in e.fields.items() if k != "executionMode"}
    view = (e.kind, e.success, e.binding_id, e.resource_id, e.error_code, e.message, e.bytes, fields)
    return (*view, e.timestamp) if with_time else view


def _both(source: str, policy: Policy, args: list[Any], *, with_time: bool = False) -> ExecutionResult:
    """Run on both backends; everything observable must agree (timestamps only when logical)."""
    ref, opt = (_run(source, policy, args, backend) for backend in BACKENDS)
    assert (ref.ok, ref.error) == (opt.ok, opt.error)
    assert ref.usage == opt.usage
    assert dict(ref.binding_calls) == dict(opt.binding_calls)
    assert [_event_view(e, with_time) for e in ref.audit_events] == [
        _event_view(e, with_time) for e in opt.audit_events
    ]
    return ref


def _code(result: ExecutionResult) -> tuple[str, str]:
    assert result.error is not None, result
    return result.error.category, result.error.code


# --- wiring -----------------------------------------------------------------------------------


def test_every_standard_binding_gets_its_facade_and_a_host_invoker_is_kept() -> None:
    declared = {d.id for d in standard_bindings()}
    assert set(STANDARD_FACADES) == declared
    catalog = _host().catalog
    for bid, facade in STANDARD_FACADES.items():
        assert catalog[bid].invoke is facade and catalog[bid].takes_context

    def own() -> int:
        return 5

    mine = SandboxHost(
        [replace(d, invoke=own) if d.id == "time.nowUnixMillis" else d for d in standard_bindings()]
    )
    assert mine.catalog["time.nowUnixMillis"].invoke is own
    plain = SandboxHost(standard_bindings(), standard_facades=False).catalog
    assert attach_standard_facades(plain).manifest_hash == plain.manifest_hash


# --- time.nowUnixMillis -----------------------------------------------------------------------


@pytest.mark.parametrize("now", [0, 1_700_000_123_456, -5, 2**63 - 1])
def test_deterministic_clock_returns_the_logical_time_on_both_backends(now: int) -> None:
    result = _both(CLOCK, _policy(deterministic=True, now=now), [], with_time=True)
    assert result.value == now
    assert all(e.timestamp == now / 1000.0 for e in result.audit_events)


def test_wall_clock_reads_unix_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    values = [_run(CLOCK, _policy(), [], backend).value for backend in BACKENDS]
    after = time.time_ns() // 1_000_000
    assert all(before <= v <= after for v in values), (before, values, after)


def test_clock_audits_each_call_as_a_binding_call() -> None:
    result = _both(CLOCK, _policy(deterministic=True, now=7), [], with_time=True)
    calls = [e for e in result.audit_events if e.binding_id == "time.nowUnixMillis"]
    assert [(e.kind, e.success, e.resource_id) for e in calls] == [
        ("BindingCall", True, "binding:time.nowUnixMillis")
    ]


def test_deterministic_clock_without_logical_time_fails_closed() -> None:
    # The validator refuses such a policy for a module that reads the clock (E-POLICY-DETERMINISM);
    # the facade must still refuse rather than fall back to the wall clock.
    ctx = cast(BindingContext, SimpleNamespace(deterministic=(True, None, None)))
    with pytest.raises(BindingError) as refused:
        now_unix_millis(ctx)
    assert refused.value.category == "PermissionDenied"


def test_a_deterministic_policy_without_logical_time_is_rejected_before_running() -> None:
    from dotboxd.core.diagnostics import DotBoxDError

    with pytest.raises(DotBoxDError) as rejected:
        _plan(CLOCK, _policy(deterministic=True, seed=1))
    assert "E-POLICY-DETERMINISM" in {d.code for d in rejected.value.diagnostics}


# --- random.nextI32 ---------------------------------------------------------------------------


def _reference_draw(seed: int, k: int, lo: int, hi: int) -> int:
    """The documented algorithm (spec/semantics.md section 13), spelled out independently."""
    span = hi - lo
    attempt = 0
    while True:
        text = "dotboxd.random.nextI32:" + str(seed) + ":" + str(k) + ":" + str(attempt)
        x = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        if x < 2**64 - (2**64 % span):
            return lo + x % span
        attempt += 1


@pytest.mark.parametrize(("lo", "hi"), [(0, 10), (-3, 4), (I32_MIN, I32_MAX), (I32_MAX - 1, I32_MAX), (5, 6)])
def test_deterministic_draws_follow_the_documented_sequence_on_both_backends(lo: int, hi: int) -> None:
    seed = 20240611
    result = _both(DRAWS, _policy(deterministic=True, seed=seed), [lo, hi, 12], with_time=True)
    expected = [_reference_draw(seed, k, lo, hi) for k in range(1, 13)]
    assert list(result.value) == expected
    assert all(lo <= v < hi for v in expected)


def test_deterministic_draws_replay_run_after_run_and_depend_on_the_seed() -> None:
    host = _host()
    plan = host.prepare(DRAWS, _policy(deterministic=True, seed=7))
    runs = [list(host.execute(plan, "main", [0, 1000, 20], backend=b).value) for b in BACKENDS * 3]
    assert all(r == runs[0] for r in runs)
    assert len(set(runs[0])) > 10  # a sequence, not one value repeated
    other = list(_run(DRAWS, _policy(deterministic=True, seed=8), [0, 1000, 20]).value)
    assert other != runs[0]


def test_seeded_draw_retries_a_word_in_the_biased_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bytes] = []
    real = hashlib.sha256

    class Tail:
        """attempt 0 yields the largest 64-bit word (always rejected for span 3); later ones are real."""

        def __init__(self, data: bytes) -> None:
            seen.append(data)
            self._data = data

        def digest(self) -> bytes:
            return b"\xff" * 32 if self._data.endswith(b":0") else real(self._data).digest()

    monkeypatch.setattr(randomness.hashlib, "sha256", Tail)
    value = seeded_draw(1, 1, 0, 3)
    assert seen == [b"dotboxd.random.nextI32:1:1:0", b"dotboxd.random.nextI32:1:1:1"]
    assert value == int.from_bytes(real(b"dotboxd.random.nextI32:1:1:1").digest()[:8], "big") % 3


def test_random_state_is_per_run_even_when_runs_interleave() -> None:
    plan = _plan(DRAWS, _policy(deterministic=True, seed=99))
    expected = [seeded_draw(99, k, 0, 1 << 30) for k in range(1, 9)]
    first, second = RunContext(plan), RunContext(plan)
    got: dict[int, list[int]] = {0: [], 1: []}
    for _ in range(8):  # alternate the two runs' calls: neither advances the other's sequence
        for i, run in enumerate((first, second)):
            got[i].append(cast(int, call_binding(run, "random.nextI32", (0, 1 << 30))))
    assert got[0] == expected and got[1] == expected


def test_concurrent_runs_on_threads_each_replay_the_whole_sequence() -> None:
    host = _host()
    plan = host.prepare(DRAWS, _policy(deterministic=True, seed=3))
    expected = [seeded_draw(3, k, -50, 50) for k in range(1, 41)]
    results: list[list[int]] = []
    lock = threading.Lock()

    def worker(backend: str) -> None:
        for _ in range(5):
            value = list(host.execute(plan, "main", [-50, 50, 40], backend=backend).value)
            with lock:
                results.append(value)

    threads = [threading.Thread(target=worker, args=(BACKENDS[i % 2],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 30 and all(r == expected for r in results)


def test_unseeded_draws_stay_in_range_cover_it_and_differ_between_runs() -> None:
    policy = _policy(max_host_calls=200)
    values = [list(_run(DRAWS, policy, [-2, 2, 200], backend).value) for backend in BACKENDS]
    for drawn in values:
        assert set(drawn) == {-2, -1, 0, 1}  # 200 draws miss a value with probability < 1e-24
    wide = [list(_run(DRAWS, _policy(), [I32_MIN, I32_MAX, 8], b).value) for b in BACKENDS]
    assert all(I32_MIN <= v < I32_MAX for v in wide[0] + wide[1])
    assert wide[0] != wide[1]  # two independent 8-draw sequences over 2**32 values


@pytest.mark.parametrize(("lo", "hi"), [(5, 5), (6, 5), (I32_MAX, I32_MIN)])
@pytest.mark.parametrize("deterministic", [False, True])
def test_an_empty_range_is_invalid_input_on_both_backends(lo: int, hi: int, deterministic: bool) -> None:
    policy = _policy(deterministic=True, seed=1) if deterministic else _policy()
    result = _both(DRAWS, policy, [lo, hi, 3])
    assert _code(result) == ("InvalidInput", "R-BINDING-INVALID")
    assert result.error is not None and "minInclusive < maxExclusive" in result.error.safe_message
    assert dict(result.binding_calls) == {"random.nextI32": 1}
    failed = [e for e in result.audit_events if e.binding_id == "random.nextI32"]
    assert [(e.success, e.error_code, e.resource_id) for e in failed] == [
        (False, "InvalidInput", "binding:random.nextI32")
    ]


def test_next_i32_refuses_bounds_that_are_not_i32() -> None:
    ctx = cast(BindingContext, SimpleNamespace())
    for lo, hi in ((True, 3), (0, 2**31), (I32_MIN - 1, 0), (0.0, 1)):
        with pytest.raises(BindingError) as refused:
            next_i32(ctx, cast(int, lo), cast(int, hi))
        assert refused.value.category == "InvalidInput"


# --- log.info / log.warn ----------------------------------------------------------------------


def _log_events(result: ExecutionResult) -> list[AuditEvent]:
    return [e for e in result.audit_events if e.resource_id in ("log:info", "log:warn")]


@pytest.mark.parametrize("warn", [False, True])
def test_each_log_call_writes_one_sanitized_sandbox_log_event(warn: bool) -> None:
    level = "warn" if warn else "info"
    message = "line\nforged\x1b[31m\u202eevil\u0085"
    result = _both(LOGS, _policy(deterministic=True), [message, 2, warn])
    assert result.value == 2 and result.usage.log_events == 2
    records = _log_events(result)
    assert [(e.kind, e.success, e.binding_id, e.resource_id) for e in records] == [
        ("SandboxLog", True, f"log.{level}", f"log:{level}")
    ] * 2
    assert records[0].message == "line forged [31m evil "
    assert dict(records[0].fields) == {"level": level, "length": len(message)}
    calls = [e for e in result.audit_events if e.resource_id == f"binding:log.{level}"]
    assert len(calls) == 2 and all(e.kind == "SandboxLog" and e.success for e in calls)


def test_log_messages_are_redacted_and_bounded_in_the_audit_log() -> None:
    secret = "password=hunter2 " + "x" * 1000
    record = _log_events(_both(LOGS, _policy(), [secret, 1, False]))[0]
    assert record.message is not None
    assert "hunter2" not in record.message and len(record.message) == MAX_TEXT
    assert record.fields["length"] == len(secret)


def test_clean_message_replaces_lone_surrogates_and_keeps_pairs() -> None:
    assert clean_message("a\ud83d") == "a\ufffd"
    assert clean_message("\ud83d\ude00!") == "\U0001f600!"
    assert clean_message("ok\tok\u2028\u2066") == "ok ok  "
    assert clean_message("caf\u00e9") == "caf\u00e9"


def test_log_message_length_at_the_limit_passes_and_one_more_unit_is_refused() -> None:
    at = _both(LOGS, _policy(max_log_message_length=8), ["\U0001f600" * 4, 1, False])  # 8 UTF-16 units
    assert at.ok and at.usage.log_events == 1
    over = _both(LOGS, _policy(max_log_message_length=8), ["abcdefghi", 1, False])
    assert _code(over) == ("QuotaExceeded", "R-QUOTA-LOG-MESSAGE")
    assert over.usage.log_events == 0 and _log_events(over) == []
    failed = [e for e in over.audit_events if e.binding_id == "log.info"]
    assert [(e.kind, e.success, e.error_code) for e in failed] == [("SandboxLog", False, "QuotaExceeded")]


def test_log_event_count_at_the_limit_passes_and_one_more_is_refused() -> None:
    at = _both(LOGS, _policy(max_log_events=3), ["m", 3, True])
    assert at.ok and at.usage.log_events == 3 and len(_log_events(at)) == 3
    over = _both(LOGS, _policy(max_log_events=3), ["m", 4, True])
    assert _code(over) == ("QuotaExceeded", "R-QUOTA-LOG-EVENTS")
    # the refused fourth event is counted (an attempt, spec/costs.md 9) but never written
    assert over.usage.log_events == 4 and len(_log_events(over)) == 3


def test_log_refuses_a_message_that_is_not_text() -> None:
    with pytest.raises(BindingError) as refused:
        log_info(cast(BindingContext, SimpleNamespace()), cast(str, 3))
    assert refused.value.category == "InvalidInput"


# --- net.http.get: the standard facade's refusals that need no network -------------------------


def test_standard_http_get_refuses_a_host_outside_the_grant_without_leaking_the_uri() -> None:
    policy = Policy.builder().grant_http_get(["example.com"], max_response_bytes=100).build()
    result = _both(HTTP, policy, [SandboxUri("https://example.org/a?token=s3cret")])
    assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")
    assert result.error is not None
    assert result.error.safe_message == "the uri's host or port is not allowed by the grant"
    assert dict(result.binding_calls) == {"net.http.get": 1}
    assert result.usage.network_bytes_written == 0 and result.usage.network_bytes_read == 0
    failed = [e for e in result.audit_events if e.binding_id == "net.http.get"]
    assert [(e.success, e.resource_id) for e in failed] == [(False, "http:https://example.org:443")]
    assert "s3cret" not in repr(result.audit_events)


def test_a_host_http_invoker_replaces_the_standard_facade() -> None:
    def fetch(ctx: BindingContext, uri: SandboxUri) -> str:
        ctx.audit("http:example.com")  # the binding is PerResource: it audits what it fetched
        return "body of " + uri.text

    host = SandboxHost(
        [
            replace(d, invoke=fetch, takes_context=True) if d.id == "net.http.get" else d
            for d in standard_bindings()
        ]
    )
    policy = Policy.builder().grant_http_get(["example.com"], max_response_bytes=100).build()
    uri = SandboxUri("https://example.com/a")
    result = host.execute(host.prepare(HTTP, policy), "main", [uri], backend="optimized")
    assert result.value == "body of https://example.com/a"


# --- all together ------------------------------------------------------------------------------


def test_a_mixed_deterministic_kernel_is_identical_on_both_backends_and_across_runs() -> None:
    policy = _policy(deterministic=True, now=1_000_000, seed=42)
    first = _both(MIXED, policy, [0, 100], with_time=True)
    again = _both(MIXED, policy, [0, 100], with_time=True)
    a, b = seeded_draw(42, 1, 0, 100), seeded_draw(42, 2, 0, 100)
    assert first.value == again.value == 1_000_000 + a * 1000 + b
    assert [e.message for e in _log_events(first)] == ["start", str(a)]
    assert first.usage == again.usage


def test_facade_errors_are_sandbox_errors_with_registered_codes() -> None:
    plan = _plan(DRAWS, _policy())
    with pytest.raises(SandboxError) as failed:
        call_binding(RunContext(plan), "random.nextI32", (1, 1))
    assert (failed.value.category, failed.value.code) == ("InvalidInput", "R-BINDING-INVALID")
