"""``k * x + c`` in a fast chunk tests ``x`` against ``(MAX - c) // k`` and computes the step in one
expression (``runtime/optimized/scaled_steps.py``, issue 16: the odd step of a Collatz walk).

The common path no longer computes the product on its own, so these tests drive the step across
its limit in every way it can first fail - the product (``3 * x`` past MAX), the addition alone
(``3 * x`` fits, ``+ c`` does not), and the exact band edge where neither does - in a while-loop chunk
(the Collatz walk, failing part way through a chunk at the exact iteration) and a for-loop chunk, on
I32 and I64 (whose bound is not a compact int), with the constant on either side, and compare every
observable with the reference interpreter, also at every fuel budget around the failure.
"""

from __future__ import annotations

import ast

import pytest

from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.scaled_steps import operand_test, product

from .differential import assert_agree, assert_agree_at_every_fuel_budget, run_plan_both
from .kernels import prepare

I32_MAX = 2**31 - 1
I64_MAX = 2**63 - 1


def walk(start: int) -> str:
    """The benchmark's Collatz walk from ``start + 1`` on (a constant, so ``x`` is known non-negative
    and the odd step takes the new form, as in the benchmark)."""
    return f"""module "walk" version "1.0.0";
entrypoint fn main(n I32) -> I32 {{
    total = 0;
    for s in 1 .. n {{
        x = s + {start};
        while x != 1 {{
            if x % 2 == 0 {{ x = x / 2; }} else {{ x = 3 * x + 1; }}
            total = total + 1;
        }}
    }}
    return total;
}}"""


WALKS = [
    (0, 300),  # no overflow: the common path only
    (2**25 - 2, 2),  # 2**25 - 1 climbs (times 3/2 every two steps) to a product overflow dozens of
    (2**20 - 2, 3),  # iterations into the chunk; so does 2**20 - 1
    (715827880, 2),  # odd 715827881: 3x + 1 = 2147483644 fits, then the walk goes on
    (715827881, 2),  # 715827882, the largest operand that fits: its step is 2147483647 exactly
    (715827882, 2),  # odd 715827883: the product overflows at the first step
]

STEP = """module "step" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    total = 0;
    for i in 0 .. n {
        x = i + 715827870;
        a = x * 3 + 2;
        total = (total + a) % 1000;
    }
    return total;
}"""
"""``x * 3 + 2`` (the constant on the right): at ``x = 715827882`` (``n = 13``) the product 2147483646
fits and the addition overflows; the product itself would at ``715827883``."""

STEP_VECTORS = [[12], [13], [14], [3000]]

WIDE = """module "wide" version "1.0.0";
entrypoint fn main(n I32, which I32) -> I64 {
    total = 0L;
    x = 3074457345618258589L;
    y = 1844674407370955149L;
    for i in 0 .. n {
        x = x + 1L;
        y = y + 1L;
        if which == 3 { a = 3L * x + 1L; } else { a = 5L * y + 4L; }
        total = (total + a % 1000L) % 1000L;
    }
    return total;
}"""
"""I64, where ``(MAX - c) // k`` is not a compact int, so the operand test keeps the compact guard:
``3 * x + 1`` fails on the product at ``i = 13`` (``x = (MAX - 1) // 3 + 1``), ``5 * y + 4`` on the
addition at ``i = 11`` (``5 * y`` is ``MAX - 2``)."""

WIDE_VECTORS = [[12, 3], [13, 3], [14, 3], [10, 5], [11, 5], [12, 5]]


@pytest.mark.parametrize(("start", "n"), WALKS)
def test_walk_fails_where_the_reference_fails(start: int, n: int) -> None:
    assert_agree(run_plan_both(prepare(walk(start)), "main", [[n]]), f"walk from {start + 1}")


@pytest.mark.parametrize(("text", "vectors"), [(STEP, STEP_VECTORS), (WIDE, WIDE_VECTORS)])
def test_steps_fail_where_the_reference_fails(text: str, vectors: list[list[int]]) -> None:
    assert_agree(run_plan_both(prepare(text), "main", vectors), "scaled steps")


@pytest.mark.parametrize(
    ("text", "args"),
    [
        (walk(2**25 - 2), [2]),
        (walk(715827882), [2]),
        (walk(715827881), [2]),
        (STEP, [13]),
        (STEP, [14]),
        (WIDE, [14, 3]),
        (WIDE, [12, 5]),
    ],
)
def test_steps_fail_at_the_same_charge_for_every_fuel_budget(text: str, args: list[int]) -> None:
    assert_agree_at_every_fuel_budget(prepare(text), "main", args)


def test_generated_code_tests_the_operand() -> None:
    """Else the agreement tests prove nothing new: each step is ``if x > (MAX - c) // k:`` over the
    old product-and-test code, and ``x = k * x + c`` in one expression on the common path."""
    source = compile_plan(prepare(walk(0)), keep_module=True).source()
    assert f"> {(I32_MAX - 1) // 3}:" in source, source
    assert any(
        line.strip().startswith("v") and line.endswith(" = 3 * " + line.split()[0] + " + 1")
        for line in source.splitlines()
    ), source
    step = compile_plan(prepare(STEP), keep_module=True).source()
    assert f"> {(I32_MAX - 2) // 3}:" in step, step
    wide = compile_plan(prepare(WIDE), keep_module=True).source()
    assert f"> {(I64_MAX - 1) // 3}:" in wide and f"> {(I64_MAX - 4) // 5}:" in wide, wide
    assert wide.count("> 1073741823 and ") >= 2, wide


def _holds(test: ast.expr, x: int) -> bool:
    expression = ast.Expression(body=test)
    ast.fix_missing_locations(expression)
    return bool(eval(compile(expression, "<test>", "eval"), {"__builtins__": {}}, {"x": x}))


@pytest.mark.parametrize("limit", [I32_MAX, I64_MAX])
@pytest.mark.parametrize("k", [1, 2, 3, 5, 7, 1000])
@pytest.mark.parametrize("c", [0, 1, 2, 6, 999])
def test_operand_test_is_the_overflow_test(limit: int, k: int, c: int) -> None:
    """``x > (MAX - c) // k`` holds exactly when ``k * x + c > MAX``, around the edge and far off it."""
    edge = (limit - c) // k
    for x in [*range(edge - 3, edge + 4), 0, -edge, -1, limit]:
        assert _holds(operand_test(ast.Name(id="x", ctx=ast.Load()), k, limit - c), x) == (
            k * x + c > limit
        ), x


def test_product_takes_only_a_positive_constant_times_a_name() -> None:
    def stmt(text: str) -> ast.stmt:
        return ast.parse(text).body[0]

    assert product(stmt("t1 = 3 * v2"), "t1") is not None
    assert product(stmt("t1 = v2 * 3"), "t1") is not None
    for refused in (
        "t1 = 0 * v2",
        "t1 = -3 * v2",
        "t1 = 3 * t1",
        "t1 = v2 * v3",
        "t1 = 3 + v2",
        "t2 = 3 * v2",
    ):
        assert product(stmt(refused), "t1") is None, refused
    assert product(stmt("t1 = 3 * (v2 + 1)"), "t1") is None
