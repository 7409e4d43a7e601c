"""Counter-capped bulk chunks (``codegen.counter_room``, ``stubs.reserve`` with ``most``).

A leaf loop whose body only steps a local by constants (``c = c + k``) runs its chunks without the
overflow check of those steps: each chunk reserves no more iterations than the counters have room
for, and the step that would overflow runs on the exact path. Here counters are driven right up to
their limits, in both directions, with several steps per iteration, in ``for`` and ``while`` loops,
and every observable (value, error and its location, fuel, loop iterations, every usage counter) is
compared with the reference interpreter, also at every fuel budget around the failure.
"""

from __future__ import annotations

import dataclasses

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import compile_plan

from .differential import assert_agree, assert_agree_at_every_fuel_budget, backend, observe, run_plan_both
from .kernels import policy, prepare

I32_MAX = 2**31 - 1
I32_MIN = -(2**31)
I64_MAX = 2**63 - 1

COUNTERS = """module "counters" version "1.0.0";
entrypoint fn main(start I32, n I32) -> I32 {
    up = start;
    down = 0 - start - 1;
    for i in 0 .. n {
        if i % 3 == 0 { up = up + 7; } else { up = up + 1; }
        down = down - 2;
        up = up - 1;
    }
    w = 0;
    while w < n { w = w + 1; up = up + 3; }
    return up % 1000 + down % 1000;
}"""

WIDE = """module "wide" version "1.0.0";
entrypoint fn main(start I64, n I32) -> I64 {
    c = start;
    for i in 0 .. n { c = c + 1000000L; }
    return c;
}"""

VECTORS_I32 = [
    [0, 300],
    [I32_MAX - 5000, 3000],  # the for loop's counter overflows part way through a chunk
    [I32_MAX - 2, 10],  # no room at all: every iteration on the exact path
    [I32_MAX - 3 * 700 - 10, 700],  # the for loop fits; the while loop's += 3 overflows
    [I32_MIN + 500, 400],  # ``down`` underflows (it starts at -start - 1)
    [-5, 5000],  # more than one chunk, no overflow
]


def test_counter_overflow_is_exact_on_both_backends() -> None:
    assert_agree(run_plan_both(prepare(COUNTERS), "main", VECTORS_I32), "counters")


def test_wide_counter_overflow_is_exact_on_both_backends() -> None:
    vectors = [[0, 100], [I64_MAX - 1000000 * 50, 80], [I64_MAX, 3]]
    assert_agree(run_plan_both(prepare(WIDE), "main", vectors), "I64 counter")


def test_counter_chunks_drop_the_step_checks_and_cap_the_reservation() -> None:
    """The generated code really takes the capped path (else the tests above prove nothing new):
    both loops reserve with ``_s_capm``, and the ``+ 1`` step, which would otherwise need an
    overflow check calling a chunk fault stub, is a bare ``v = v + 1``."""
    source = compile_plan(prepare(COUNTERS), keep_module=True).source()
    assert source.count("_s_capm(") == 2, source
    assert "_s_cap(" not in source, source
    step = next(line.strip() for line in source.splitlines() if line.strip().endswith("+ 1") and "=" in line)
    name = step.split("=")[0].strip()
    assert step == f"{name} = {name} + 1", source


@pytest.mark.parametrize("start", [I32_MAX - 5000, I32_MIN + 500])
def test_counter_overflow_fails_at_the_same_charge_for_every_fuel_budget(start: int) -> None:
    """Fuel budgets around the failure point: the run stops at the same charge (quota or overflow,
    whichever the reference meets first) with the same usage."""
    base = prepare(COUNTERS)
    host = SandboxHost(backends={"optimized": backend()})
    needed = host.execute(base, "main", [start, 3000]).usage.fuel_used
    for fuel in range(max(0, needed - 40), needed + 2):
        plan = dataclasses.replace(base, policy=policy(max_fuel=fuel))
        reference = observe(host.execute(plan, "main", [start, 3000]))
        optimized = observe(host.execute(plan, "main", [start, 3000], backend="optimized"))
        assert reference == optimized, fuel


RESETS = """module "resets" version "1.0.0";
entrypoint fn main(start I32, n I32, every I32) -> I32 {
    acc = start;
    up = start;
    for i in 0 .. n {
        if i % every == every - 1 { acc = (acc + i) % 1000; } else { acc = acc - 3; }
        if i % every == 0 { up = up % 77; }
        up = up + 5;
    }
    w = 0;
    while w < n {
        w = w + 1;
        if w % every == 0 { acc = w % 100; }
        acc = acc - 2;
    }
    return acc % 1000 + up % 1000;
}"""
"""Counters reset by a remainder (``codegen.counter_room``): ``acc`` steps down by 3 and is reset to
within 999 of zero every ``every`` iterations, ``up`` steps up by 5 after a reset at iteration 0,
and the ``while`` loop resets and steps ``acc`` again."""

WIDE_RESET = """module "wideReset" version "1.0.0";
entrypoint fn main(start I64, n I32, m I64) -> I64 {
    c = start;
    for i in 0 .. n {
        if i % 7 == 6 { c = c % 1000L; } else { c = c + 1000000L; }
        d = c % m;
        c = c + d % 3L;
    }
    return c;
}"""
"""An I64 counter reset by a literal remainder, and ``d % m`` (a variable divisor: no reset, so
``c = c + ...`` of a non-literal keeps its checks)."""

BIG_RESET = """module "bigReset" version "1.0.0";
entrypoint fn main(start I32, n I32) -> I32 {
    c = 0;
    for i in 0 .. n {
        if i == 5 { c = start % 2147483000; }
        c = c + 1000;
    }
    return c;
}"""
"""A reset whose divisor leaves less than a chunk of room (``2147482999 + 1000`` overflows): ``c``
is no counter, its step keeps its check."""

RESET_VECTORS = [
    [0, 300, 50],
    [I32_MIN + 100, 3000, 10000],  # ``acc`` underflows before its first reset, mid-chunk
    [I32_MIN + 100, 3000, 20],  # reset in time: never underflows
    [I32_MAX - 200, 3000, 10000],  # ``up`` is reset at 0 first: never overflows
    [I32_MIN + 5000, 4000, 2500],  # the for loop survives; the while loop's ``acc - 2`` underflows
    [7, 5000, 3],
]


def test_counter_resets_are_exact_on_both_backends() -> None:
    assert_agree(run_plan_both(prepare(RESETS), "main", RESET_VECTORS), "counter resets")


def test_wide_counter_resets_are_exact_on_both_backends() -> None:
    vectors = [[0, 100, 5], [I64_MAX - 1000000 * 3, 10, 9], [I64_MAX - 10, 3, 1], [5, 40, -4]]
    assert_agree(run_plan_both(prepare(WIDE_RESET), "main", vectors), "I64 counter resets")


def test_counter_resets_drop_the_step_checks() -> None:
    """The reset counters really are counters: every loop reserves with ``_s_capm`` and the steps
    ``acc - 3``, ``up + 5`` and ``acc - 2`` are bare."""
    source = compile_plan(prepare(RESETS), keep_module=True).source()
    assert source.count("_s_capm(") == 2, source
    assert "_s_cap(" not in source, source
    for step in (" - 3", " + 5", " - 2"):
        line = next(line.strip() for line in source.splitlines() if line.strip().endswith(step))
        name = line.split(" = ")[0]
        assert line == f"{name} = {name}{step}", source


def test_a_reset_without_a_chunk_of_room_keeps_the_step_checked() -> None:
    vectors = [[2147482999, 100], [-2147482999, 100], [12, 3000]]
    assert_agree(run_plan_both(prepare(BIG_RESET), "main", vectors), "big reset")
    source = compile_plan(prepare(BIG_RESET), keep_module=True).source()
    assert "_s_capm(" not in source, source


@pytest.mark.parametrize("args", [[I32_MIN + 100, 3000, 10000], [I32_MIN + 5000, 4000, 2500]])
def test_counter_reset_failure_is_at_the_same_charge_for_every_fuel_budget(args: list[int]) -> None:
    assert_agree_at_every_fuel_budget(prepare(RESETS), "main", args)
