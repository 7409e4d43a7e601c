"""Overflow checks dropped by value ranges (``value_ranges.py``, issue 16).

The generator drops the check of an I32/I64 ``+ - *`` whose operands' intervals cannot overflow,
and treats a node whose interval is non-negative as known non-negative. Each kernel here sits on
an edge of what the intervals allow - a square one below and one above the largest that fits, a
remainder of a negative dividend, a parameter bounded by the policy exactly at the limit, a result
passed through a function, an accumulator reset by a remainder inside its loop - and is compared with the
reference interpreter (value, error and its location, fuel, every usage counter), including at
every fuel budget around the failure; the shape tests make sure the checks really are gone where
the intervals fit and kept where they do not.
"""

from __future__ import annotations

import pytest

from dotboxd.runtime.optimized import compile_plan
from dotboxd.validator.policy import Policy

from .differential import assert_agree, assert_agree_at_every_fuel_budget, run_plan_both
from .kernels import prepare

I32_MAX = 2**31 - 1


def _squares(modulus: int) -> str:
    return f"""module "squares" version "1.0.0";
fn sq(x I32) -> I32 {{ return x * x; }}
entrypoint fn main(n I32) -> I32 {{
    acc = 0;
    for i in 0 .. n {{ acc = (acc + sq(i % {modulus})) % 1000003; }}
    return acc;
}}"""


FITS = _squares(46341)
"""``x`` in ``[0, 46340]``: ``x * x <= 2147395600`` fits (``acc + x * x`` does not: it keeps its check)."""

OVER = _squares(46342)
"""``x`` reaches 46341: ``46341 * 46341 = 2147488281`` overflows at ``i = 46341``."""

NEGATIVE = """module "negativeRemainder" version "1.0.0";
entrypoint fn main(n I32, k I32) -> I32 {
    acc = 0;
    for i in 0 .. n {
        acc = (acc - i) % 1000;
        b = acc * 2000000;
        c = acc * k;
        acc = (b + c) % 1000;
    }
    return acc;
}"""
"""``acc`` in ``[-999, 999]`` (a truncating remainder of a negative dividend is negative):
``acc * 2000000`` fits both ways and is unchecked; ``acc * k`` is checked and overflows for a
large ``k`` once ``acc`` is far enough from 0, below as well as above."""


MIXED = """module "mixed" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n {
        x = 0 - i % 50000;
        y = i % 1000000;
        acc = (acc + x * y % 1000) % 1000;
    }
    return acc;
}"""
"""``x`` in ``[-49999, 0]``, ``y`` in ``[0, 999999]``: only the mixed corner ``x_low * y_high`` leaves
I32, so ``x * y`` keeps its check and underflows at ``i = 46341``."""


def _result(multiplier: int) -> str:
    return f"""module "result" version "1.0.0";
fn small(i I32) -> I32 {{ if i % 2 == 0 {{ return i % 40000; }} return 0 - (i % 40000); }}
entrypoint fn main(n I32) -> I32 {{
    acc = 0;
    for i in 0 .. n {{
        s = small(i);
        acc = (acc + s * {multiplier}) % 1000003;
    }}
    return acc;
}}"""


RESULT = _result(53688)
"""A function result joined over two returns, ``[-39999, 39999]``: ``s * 53688`` stays within
``[-2147466312, 2147466312]`` and is unchecked (``acc + ..`` is not: ``acc`` may be near the top)."""

RESULT_OVER = _result(53689)
"""``39999 * 53689 = 2147506311``: the product keeps its check, and overflows at ``i = 39999``."""


def _bounded_square(high: int) -> Policy:
    return (
        Policy.builder()
        .with_limits(max_wall_time_ms=60_000)
        .with_input_bounds("main", n=(-high, high))
        .build()
    )


BOUNDED = """module "bounded" version "1.0.0";
entrypoint fn main(n I32) -> I32 { return n * n - 1; }"""


def test_kernels_on_the_edges_agree_with_the_reference() -> None:
    assert_agree(run_plan_both(prepare(FITS), "main", [[0], [5000], [46345]]), "fits")
    assert_agree(run_plan_both(prepare(OVER), "main", [[5000], [46341], [46342]]), "over")
    vectors = [[0, 0], [3000, 1000], [3000, 3000000], [3000, -3000000], [50, 2147483]]
    assert_agree(run_plan_both(prepare(NEGATIVE), "main", vectors), "negative remainder")
    assert_agree(run_plan_both(prepare(MIXED), "main", [[1000], [46340], [46342]]), "mixed corners")
    assert_agree(run_plan_both(prepare(RESULT), "main", [[0], [100], [5000], [80003]]), "result")
    assert_agree(run_plan_both(prepare(RESULT_OVER), "main", [[39999], [40000], [40001]]), "result over")
    fits = prepare(BOUNDED, _bounded_square(46340))
    assert_agree(run_plan_both(fits, "main", [[46340], [-46340], [0], [46341]]), "policy bound")
    over = prepare(BOUNDED, _bounded_square(46341))
    assert_agree(run_plan_both(over, "main", [[46341], [-46341], [46340]]), "policy bound over")


def test_checks_go_where_the_intervals_fit_and_stay_where_they_do_not() -> None:
    """Else the agreement above proves nothing new."""
    fits = compile_plan(prepare(FITS), keep_module=True).source().split("def _fn1")[0]
    over = compile_plan(prepare(OVER), keep_module=True).source().split("def _fn1")[0]
    assert fits.count("_s_c2(") == 1 and over.count("_s_c2(") == 2, (fits, over)  # the square's
    negative = compile_plan(prepare(NEGATIVE), keep_module=True).source()
    assert "* 2000000\n" in negative and negative.count("_s_c2(") >= 2, negative
    result = compile_plan(prepare(RESULT), keep_module=True).source()
    result_over = compile_plan(prepare(RESULT_OVER), keep_module=True).source()
    assert result.count("_s_c2(") + 1 == result_over.count("_s_c2("), (result, result_over)
    bounded = compile_plan(prepare(BOUNDED, _bounded_square(46340)), keep_module=True).source()
    assert "_s_f2(" not in bounded, bounded
    over_bound = compile_plan(prepare(BOUNDED, _bounded_square(46341)), keep_module=True).source()
    assert "_s_f2(" in over_bound, over_bound


@pytest.mark.parametrize(
    ("kernel", "args"), [(OVER, [46345]), (NEGATIVE, [3000, 3000000]), (RESULT_OVER, [40001])]
)
def test_a_kept_check_fails_at_the_same_charge_for_every_fuel_budget(kernel: str, args: list[int]) -> None:
    assert_agree_at_every_fuel_budget(prepare(kernel), "main", args, below=120)
