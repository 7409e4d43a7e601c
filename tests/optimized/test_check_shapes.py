"""The cheaper inline overflow tests of issue 16 (``bounds.py``, ``codegen._range_checks``,
operand sign facts through inlined calls) fail exactly where the reference fails.

Three code shapes are new: every test against an I32/I64 limit is guarded by a comparison against
the largest compact int (``t > 1073741823 and t > 2147483647``); an addition or subtraction with an
operand known to be non-negative tests one side only; and an inlined callee's parameter carries its
argument's sign (``sq(i % 100)``). Values are driven into the band between the compact bound and
the limit (where only the guard passes) and across the limit, from both sides, on I32 and I64, and
every observable (value, error and its location, fuel, loop iterations, every usage counter) is
compared with the reference interpreter, also at every fuel budget around the failure.
"""

from __future__ import annotations

import pytest

from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.bounds import COMPACT_MAX

from .differential import assert_agree, assert_agree_at_every_fuel_budget, run_plan_both
from .kernels import prepare

I32_MAX = 2**31 - 1
I32_MIN = -(2**31)
I64_MAX = 2**63 - 1
I64_MIN = -(2**63)

SIGNED = """module "signed" version "1.0.0";
entrypoint fn main(a I32, b I32, c I32, n I32) -> I32 {
    up = a;
    lo = b;
    hi = 0;
    for i in 0 .. n {
        up = up + i * 2;
        lo = lo - i;
        hi = i - c;
    }
    return up % 1000 + lo % 1000 + hi % 1000;
}"""
"""``up + i * 2`` (right operand >= 0: upper test only), ``lo - i`` (lower only), ``i - c`` (left
operand >= 0: upper only)."""

SIGNED_VECTORS = [
    [0, 0, 0, 300],
    [I32_MAX - 5000, 0, 0, 3000],  # ``up`` overflows part way through a chunk
    [COMPACT_MAX - 1000, 0, 0, 3000],  # ``up`` crosses into the band above the compact bound
    [I32_MAX - 2, 0, 0, 3],  # the band's top, never over
    [0, I32_MIN + 3000, 0, 3000],  # ``lo`` underflows
    [0, -COMPACT_MAX + 100, 0, 300],  # ``lo`` goes below the compact bound, never under
    [0, 0, I32_MIN + 600, 3000],  # ``hi = i - c`` overflows at i = 1000... (first i > MAX + c)
    [0, 0, -COMPACT_MAX - 5, 50],  # ``hi`` in the band, never over
]

INLINED = """module "inlined" version "1.0.0";
fn sq(x I32, k I32) -> I32 { return x * x + k; }
entrypoint fn main(k I32, n I32, m I32) -> I32 {
    acc = 0;
    for i in 0 .. n { acc = (acc + sq(i % m, k)) % 1000003; }
    return acc;
}"""
"""``x`` is the argument ``i % m`` (>= 0; ``m`` a parameter, so no range bounds its size):
``x * x`` and ``x * x + k`` test their upper side only; ``acc + sq(..)`` both sides (``k`` may be
negative)."""

INLINED_VECTORS = [
    [1, 2000, 100],
    [I32_MAX - 50, 300, 100],  # ``x * x + k`` overflows at x = 8
    [COMPACT_MAX, 300, 100],  # in the band, never over
    [I32_MIN, 300, 100],  # ``acc + sq(..)`` underflows once acc is negative
    [I32_MIN + 20000, 500, 100],
    [0, 46400, 50000],  # ``x * x`` overflows at x = 46341
]

WIDE = """module "wide" version "1.0.0";
entrypoint fn main(a I64, d I64, n I32) -> I64 {
    c = a;
    for i in 0 .. n { c = c * 2L + d; }
    return c;
}"""

WIDE_VECTORS = [
    [3, 1, 40],
    [2**61, 0, 5],  # ``c * 2L`` overflows at the second doubling
    [-(2**61), 0, 5],  # and underflows
    [2**62 - 10, 9, 3],  # ``c * 2L + d`` overflows on the addition
    [-(2**62), -1, 3],  # and underflows on it
    [COMPACT_MAX, 0, 30],  # through the 2- and 3-digit bands, never over
]


def test_one_sided_tests_fail_exactly() -> None:
    assert_agree(run_plan_both(prepare(SIGNED), "main", SIGNED_VECTORS), "one-sided tests")


def test_inlined_argument_signs_fail_exactly() -> None:
    assert_agree(run_plan_both(prepare(INLINED), "main", INLINED_VECTORS), "inlined signs")


def test_i64_guarded_tests_fail_exactly() -> None:
    assert_agree(run_plan_both(prepare(WIDE), "main", WIDE_VECTORS), "I64 guarded tests")


def _chunk_body(source: str) -> str:
    """The body of the first bulk chunk (``for ... in _range(k, k + n):``) of ``source``."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if "in _range(" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(i for i in range(start + 1, len(lines)) if len(lines[i]) - len(lines[i].lstrip()) <= indent)
    return "\n".join(lines[start + 1 : end])


def test_generated_code_takes_the_new_shapes() -> None:
    """Else the agreement tests above prove nothing new: in the chunk bodies every limit test is
    guarded by the compact bound, the signed kernel's three tests are one-sided (upper, lower,
    upper), and in the inlined call only ``acc + sq(..)`` tests both sides."""
    signed = _chunk_body(compile_plan(prepare(SIGNED), keep_module=True).source())
    assert signed.count(f"> {COMPACT_MAX} and ") == 3, signed  # ``i * 2``, ``up + ..``, ``i - c``
    assert signed.count(f"< -{COMPACT_MAX} and ") == 1, signed  # ``lo - i``
    assert f"> {COMPACT_MAX} or " not in signed, signed
    inlined = _chunk_body(compile_plan(prepare(INLINED), keep_module=True).source())
    assert "_fn1(" not in inlined, inlined  # the call is inlined
    assert inlined.count(f"> {COMPACT_MAX} and ") == 2, inlined  # ``x * x``, ``.. + k``
    assert inlined.count(f"> {COMPACT_MAX} or ") == 1, inlined  # only ``acc + sq(..)``
    wide = _chunk_body(compile_plan(prepare(WIDE), keep_module=True).source())
    assert wide.count(f"> {COMPACT_MAX} or ") == 2, wide


@pytest.mark.parametrize(
    ("text", "args"),
    [
        (SIGNED, [I32_MAX - 5000, 0, 0, 3000]),
        (SIGNED, [0, I32_MIN + 3000, 0, 3000]),
        (INLINED, [I32_MAX - 50, 300]),
        (WIDE, [2**62 - 10, 9, 3]),
    ],
)
def test_failure_is_at_the_same_charge_for_every_fuel_budget(text: str, args: list[int]) -> None:
    assert_agree_at_every_fuel_budget(prepare(text), "main", args)


FUSED = """module "fused" version "1.0.0";
fn five(x I32) -> I32 { return 3 * x + 5; }
fn one(x I32) -> I32 { return 3 * x + 1; }
entrypoint fn main(which I32, n I32) -> I32 {
    total = 0;
    for i in 0 .. n {
        x = i + 715827870;
        if which == 5 { total = five(x) % 1000 + total % 1000; }
        else { total = one(x) % 1000 + total % 1000; }
    }
    return total;
}"""
"""``3 * x + k`` with ``x >= 0``: the product's upper test runs only under the step's
(``codegen.fused_step``). ``3 * x + 5`` first overflows on the addition (x = 715827881: the product
2147483643 fits), ``3 * x + 1`` on the multiplication (x = 715827883), never on its addition."""


def test_fused_step_tests_fail_at_the_first_overflow() -> None:
    vectors = [[5, 10], [5, 12], [5, 3000], [1, 13], [1, 14], [1, 3000]]
    assert_agree(run_plan_both(prepare(FUSED), "main", vectors), "fused step tests")


def test_fused_step_nests_the_product_test() -> None:
    """Else the test above proves nothing new: each step tests the product's operand against
    ``(MAX - step) // 3`` (``scaled_steps.py``), and under it the product and its own test."""
    source = _chunk_body(compile_plan(prepare(FUSED), keep_module=True).source())
    lines = [line.strip() for line in source.splitlines()]
    for step in (5, 1):
        heads = [i for i, line in enumerate(lines) if line.endswith(f"> {(I32_MAX - step) // 3}:")]
        assert len(heads) == 1, source
        assert all(" = 3 * " in lines[i + 1] and lines[i + 2].endswith(f"> {I32_MAX}:") for i in heads), (
            source
        )


@pytest.mark.parametrize("args", [[5, 3000], [1, 3000]])
def test_fused_step_failure_is_at_the_same_charge_for_every_fuel_budget(args: list[int]) -> None:
    assert_agree_at_every_fuel_budget(prepare(FUSED), "main", args)
