"""Every limit at its boundary, through real kernels: N is allowed, N + 1 is refused, with the limit's
code, and the run stops exactly there (spec/costs.md)."""

from __future__ import annotations

import time

import pytest

from dotboxd.host import BindingContext, CancelToken, Cost, Policy, SandboxHost
from tests.probes import audit_probe, read_probe

from .kernels import module, policy, run


def _outcome(body: str, signature: str = "main() -> I32", args: tuple[object, ...] = (), **limits: int):  # type: ignore[no-untyped-def]
    return run(module(body, signature), args, policy(**limits))


CASES = [
    # (limit, needed, body, signature, code)
    ("max_fuel", 4, "return 1 + 2;", "main() -> I32", "R-QUOTA-FUEL"),
    ("max_loop_iterations", 5, "for i in 0 .. 5 { } return 0;", "main() -> I32", "R-QUOTA-LOOP"),
    ("max_allocated_bytes", 32, "x = list.of(1, 2); return 0;", "main() -> I32", "R-QUOTA-ALLOCATION"),
    ("max_list_length", 3, "x = list.of(1, 2, 3); return 0;", "main() -> I32", "R-QUOTA-LIST-LENGTH"),
    (
        "max_map_entries",
        2,
        "m = map.set(map.set(map.empty[Map<I32, I32>](), 1, 1), 2, 2); return 0;",
        "main() -> I32",
        "R-QUOTA-MAP-ENTRIES",
    ),
    (
        "max_collection_depth",
        2,
        "x = list.of(list.of(1)); return 0;",
        "main() -> I32",
        "R-QUOTA-COLLECTION-DEPTH",
    ),
    (
        "max_total_collection_elements",
        3,
        "x = list.of(1, 2, 3); return 0;",
        "main() -> I32",
        "R-QUOTA-COLLECTION-ELEMENTS",
    ),
    (
        "max_string_length",
        4,
        'return string.concatBudgeted("ab", "cd");',
        "main() -> String",
        "R-QUOTA-STRING-LENGTH",
    ),
    ("max_total_string_bytes", 8, 'return "abcd";', "main() -> String", "R-QUOTA-STRING-BYTES"),
]


@pytest.mark.parametrize(("limit", "needed", "body", "signature", "code"), CASES)
def test_limit_boundary(limit: str, needed: int, body: str, signature: str, code: str) -> None:
    assert _outcome(body, signature, **{limit: needed}).ok
    refused = _outcome(body, signature, **{limit: needed - 1})
    assert refused.error is not None
    assert (refused.error.category, refused.error.code) == ("QuotaExceeded", code)


def test_fuel_exhaustion_stops_at_the_refused_charge() -> None:
    refused = _outcome("return 1 + 2;", max_fuel=3)
    # stmt, binary, first literal were charged; the second literal's charge was refused
    assert refused.usage.fuel_used == 3 and refused.usage.max_fuel == 3


def test_loop_exhaustion_counts_the_refused_iteration() -> None:
    refused = _outcome("for i in 0 .. 5 { } return 0;", max_loop_iterations=4)
    # the fifth iteration is refused and counted (an attempt, as DotBoxD reports it); its fuel is not
    assert refused.usage.loop_iterations == 5
    assert refused.usage.fuel_used == 1 + 2 + 4 * 5


def test_call_depth_boundary() -> None:
    src = """module "t" version "1.0.0";
fn f2() -> I32 { return 1; }
fn f1() -> I32 { return f2(); }
entrypoint fn main() -> I32 { return f1(); }
"""
    assert run(src, (), policy(max_call_depth=3)).ok
    refused = run(src, (), policy(max_call_depth=2))
    assert refused.error is not None and refused.error.code == "R-QUOTA-CALL-DEPTH"
    assert not run(src, (), policy(max_call_depth=0)).ok


def _tick(calls_per_run: int | None = None):  # type: ignore[no-untyped-def]
    @read_probe("probe.tick", cost=Cost(base_fuel=1, max_calls_per_run=calls_per_run))
    def tick() -> bool:
        return True

    return tick


def _tick_policy(**limits: int) -> Policy:
    limits.setdefault("max_wall_time_ms", 60_000)
    return Policy.builder().grant("probe.tick").with_limits(**limits).build()


TWO_TICKS = module("a = probe.tick(); b = probe.tick(); return 0;")


def test_host_call_boundary() -> None:
    assert run(TWO_TICKS, (), _tick_policy(max_host_calls=2), [_tick()]).ok
    refused = run(TWO_TICKS, (), _tick_policy(max_host_calls=1), [_tick()])
    assert refused.error is not None and refused.error.code == "R-QUOTA-HOST-CALLS"
    assert refused.usage.host_calls == 2  # the refused second call is counted


def test_per_binding_call_boundary() -> None:
    assert run(TWO_TICKS, (), _tick_policy(), [_tick(2)]).ok
    refused = run(TWO_TICKS, (), _tick_policy(), [_tick(1)])
    assert refused.error is not None and refused.error.code == "R-QUOTA-BINDING-CALLS"
    assert refused.binding_calls == {"probe.tick": 2}  # the refused second call is counted


def _logger():  # type: ignore[no-untyped-def]
    @audit_probe("probe.log")
    def log(ctx: BindingContext, message: str) -> None:
        ctx.charge_log_event(message)

    return log


def test_log_event_and_message_boundaries() -> None:
    src = module('probe.log("abc"); probe.log("de"); return 0;')

    def pol(**limits: int) -> Policy:
        return Policy.builder().grant("probe.log").with_limits(max_wall_time_ms=60_000, **limits).build()

    assert run(src, (), pol(max_log_events=2, max_log_message_length=3), [_logger()]).ok
    refused = run(src, (), pol(max_log_events=1), [_logger()])
    assert refused.error is not None and refused.error.code == "R-QUOTA-LOG-EVENTS"
    refused = run(src, (), pol(max_log_message_length=2), [_logger()])
    assert refused.error is not None and refused.error.code == "R-QUOTA-LOG-MESSAGE"
    assert refused.usage.log_events == 0


def test_inputs_are_charged_before_any_kernel_code() -> None:
    refused = _outcome("return 0;", "main(s String) -> I32", ("abcde",), max_string_length=4)
    assert refused.error is not None and refused.error.code == "R-QUOTA-STRING-LENGTH"
    assert refused.usage.fuel_used == 0
    assert _outcome("return 0;", "main(s String) -> I32", ("abcd",), max_string_length=4).ok


def test_infinite_loop_times_out() -> None:
    start = time.monotonic()
    result = run(
        module("while true { } return 0;"),
        (),
        policy(max_wall_time_ms=50, max_fuel=10**12, max_loop_iterations=10**12),
    )
    assert result.error is not None and (result.error.category, result.error.code) == ("Timeout", "R-TIMEOUT")
    assert time.monotonic() - start < 5  # generous: it must stop, not run to the fuel budget


def test_infinite_loop_without_time_budget_runs_out_of_fuel() -> None:
    result = run(module("while true { } return 0;"), (), policy(max_fuel=1000))
    assert result.error is not None and result.error.code == "R-QUOTA-FUEL"


def test_blocking_binding_past_the_deadline_is_timeout() -> None:
    @read_probe("probe.slow")
    def slow() -> bool:
        time.sleep(0.08)
        return True

    pol = Policy.builder().grant("probe.slow").with_max_wall_time_ms(20).build()
    result = run(module("x = probe.slow(); return 0;"), (), pol, [slow])
    assert result.error is not None and result.error.category == "Timeout"


def test_cancellation_stops_the_run() -> None:
    token = CancelToken()

    @read_probe("probe.cancel")
    def cancel() -> bool:
        token.cancel()
        return True

    pol = Policy.builder().grant("probe.cancel").with_max_wall_time_ms(60_000).build()
    host = SandboxHost(bindings=[cancel])
    plan = host.prepare(module("x = probe.cancel(); return 1 + 2;"), pol)
    result = host.execute(plan, "main", [], cancel=token)
    assert result.error is not None and (result.error.category, result.error.code) == (
        "Cancelled",
        "R-CANCELLED",
    )
