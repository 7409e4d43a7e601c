"""Corner cases of the generated code's specialized operations, on both backends.

Each kernel runs with inputs chosen to hit both the inline fast path and the slow path of an
operation (negative operands of truncating ``/`` and ``%``, ``MIN / -1``, overflow at exactly one
past the range, infinities, ``-0.0``, astral characters, composite equality, text literals
evaluated in loops, the right-first and/or order, dead code) and the two backends must agree on
everything observable. The expected *values* are also checked against Python-computed oracles, so
the test fails if both backends were wrong in the same way.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.core import arith
from dotboxd.host import SandboxHost

from .differential import differences, observe, run_plan_both
from .kernels import double, policy, prepare

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def _kernel(params: str, ret: str, body: str) -> str:
    return f'module "k" version "1.0.0";\nentrypoint fn main({params}) -> {ret} {{\n{body}\n}}\n'


def _agree(text: str, vectors: list[list[Any]]) -> list[Any]:
    plan = prepare(text)
    values = []
    for args, (reference, optimized) in zip(
        vectors, run_plan_both(plan, "main", vectors, encoding="python"), strict=True
    ):
        diff = differences(reference, optimized)
        assert not diff, f"args {args!r}:\n  " + "\n  ".join(diff)
        values.append(reference["value"] if reference["ok"] else reference["error"][1])
    return values


INT_PAIRS = [
    [7, 2],
    [-7, 2],
    [7, -2],
    [-7, -2],
    [0, 5],
    [5, 0],
    [I32_MIN, -1],
    [I32_MIN, 1],
    [I32_MAX, 1],
    [I32_MAX, -1],
    [I32_MIN, 2],
    [1, I32_MIN],
    [46341, 46341],
    [-46341, 46341],
    [I32_MAX, I32_MAX],
]


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "%"])
def test_i32_binary_operators(op: str) -> None:
    values = _agree(_kernel("a I32, b I32", "I32", f"return a {op} b;"), INT_PAIRS)
    name = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem"}[op]
    for (a, b), value in zip(INT_PAIRS, values, strict=True):
        try:
            expected: Any = arith.ARITH_I32[name](a, b)
        except Exception as fault:
            expected = fault.code  # type: ignore[attr-defined]
        assert value == expected, (a, op, b)


def test_i32_loop_arithmetic_uses_the_same_rules_in_bulk_loops() -> None:
    body = """
    acc = 0;
    for i in 0 .. 40 {
        x = i - 20;
        acc = acc + x / 3 + x % 3 + (x * 7) / (x - 100) + d / (i - 25);
    }
    return acc;"""
    _agree(_kernel("d I32", "I32", body), [[0], [1], [-9], [I32_MIN]])


def test_i64_operators_and_conversions() -> None:
    body = "x = numeric.toI64(a) * 3000000000L; return (x - b) / 7L + x % -5L;"
    _agree(
        _kernel("a I32, b I64", "I64", body), [[5, 1], [-5, I64_MIN + 1], [I32_MAX, I64_MIN], [3074457345, 0]]
    )


def test_negation_and_abs_at_the_minimum() -> None:
    body = "if k == 0 { return -a; } if k == 1 { return math.abs(a); } return math.clamp(a, b, 10);"
    cases = [[I32_MIN, 0, 0], [I32_MIN, 0, 1], [I32_MAX, 0, 0], [5, 20, 2], [5, 2, 2], [-9, -20, 2]]
    _agree(_kernel("a I32, b I32, k I32", "I32", body), cases)


def test_f64_non_finite_results_and_negative_zero() -> None:
    body = """
    if k == 0 { return a / b; }
    if k == 1 { return a % b; }
    if k == 2 { return a * b; }
    if k == 3 { return math.sqrt(a); }
    if k == 4 { return -a + math.floor(b) + math.ceil(b) + math.round(b); }
    return a - b;"""
    big = 1.7976931348623157e308
    cases = [
        [1.0, 0.0, 0],
        [1.0, -0.0, 0],
        [5.5, 0.0, 1],
        [-5.5, 2.0, 1],
        [big, 2.0, 2],
        [-1.0, 0.0, 3],
        [4.0, 0.0, 3],
        [0.0, 2.5, 4],
        [-big, big, 5],
        [1.0, 3.0, 0],
    ]
    _agree(_kernel("a F64, b F64, k I32", "F64", body), cases)


def test_strings_count_utf16_units() -> None:
    body = """
    t = string.concatBudgeted(s, "\U0001f600x");
    n = string.length(t);
    if string.isEmpty(s) { n = n + 100; }
    return n * 10 + string.compareOrdinal(s, "\uff61") + string.length(string.substringBudgeted(t, 0, 2));"""
    _agree(_kernel("s String", "I32", body), [[""], ["\U0001f601"], ["abc"], ["\uff62"]])


def test_text_literals_are_charged_on_every_evaluation_in_a_loop() -> None:
    body = 'n = 0; for i in 0 .. k { s = "twelve chars"; n = n + string.length(s); } return n;'
    _agree(_kernel("k I32", "I32", body), [[0], [1], [50]])


def test_composite_equality_charges_the_node_counts() -> None:
    body = """
    a = list.of(1, 2, 3);
    b = list.add(list.of(1, 2), x);
    m = map.set(map.empty[Map<I32, List<I32>>](), 1, a);
    return (a == b) && m != map.set(map.empty[Map<I32, List<I32>>](), 1, b);"""
    _agree(_kernel("x I32", "Bool", body), [[3], [4]])


def test_and_or_follow_the_plans_operand_order() -> None:
    body = """
    p = (a / b > 1) || string.isEmpty("x");
    q = string.isEmpty("") && (b / a < 0 || a > 3);
    return p && q;"""
    _agree(_kernel("a I32, b I32", "Bool", body), [[4, 2], [4, 0], [0, 4], [9, 3], [1, 1]])


def test_dead_code_is_neither_run_nor_charged() -> None:
    body = "for i in 0 .. 3 { if i == 1 { continue; a = a / 0; } a = a + i; } return a; a = 1 / 0;"
    assert _agree(_kernel("a I32", "I32", body), [[5]]) == [7]


def test_empty_and_descending_ranges_and_while_false() -> None:
    body = "x = 0; for i in a .. b { x = x + i; } while x < 0 { x = x + 1; } return x;"
    _agree(_kernel("a I32, b I32", "I32", body), [[5, 5], [9, 2], [-3, 4], [I32_MAX - 2, I32_MAX]])


def test_break_continue_and_return_inside_bulk_loops() -> None:
    body = """
    acc = 0;
    for i in 0 .. 5000 {
        if i % 97 == 5 { continue; }
        if i == stop { break; }
        if i == ret { return acc; }
        acc = (acc + i * 3) % 100003;
    }
    j = 0;
    while true {
        j = j + 1;
        if j % 5 == 0 { continue; }
        if j > stop / 10 { break; }
    }
    return acc + j;"""
    _agree(
        _kernel("stop I32, ret I32", "I32", body),
        [[4000, 9999], [10, 9999], [9999, 4321], [0, 0], [2500, 2500]],
    )


def test_inlined_and_real_calls_share_semantics() -> None:
    text = """module "k" version "1.0.0";
fn f1(x I32) -> I32 { if x < 0 { return -x; } if x > 1000 { return x / (x - 2000); } return x + 1; }
fn f2(x I32, y I32) -> I32 { z = f1(x) * y; return z - f1(y); }
entrypoint fn main(n I32, y I32) -> I32 {
    acc = 0;
    for i in 0 .. n { acc = acc + f2(i - 3, y) % 1000; }
    return acc + f2(n, y);
}
"""
    _agree(text, [[10, 2], [10, I32_MAX], [2001, 1], [3000, -1]])


def test_call_depth_inside_bulk_loops() -> None:
    text = """module "k" version "1.0.0";
fn a(x I32) -> I32 { return x + 1; }
fn b(x I32) -> I32 { return a(x) * 2; }
fn c(x I32) -> I32 { return b(x) - 1; }
entrypoint fn main(n I32) -> I32 { acc = 0; for i in 0 .. n { acc = acc + c(i); } return acc; }
"""
    host = SandboxHost(bindings=[double])
    for depth in range(0, 6):
        plan = host.prepare(text, policy(max_call_depth=depth))
        ((reference, optimized),) = run_plan_both(plan, "main", [[20]], encoding="python")
        assert not differences(reference, optimized), depth


def test_bindings_run_in_the_same_order_with_the_same_audit_trail() -> None:
    body = "acc = 0; for i in 0 .. n { acc = acc + test.double(i); if acc > 50 { break; } } return acc;"
    plan = prepare(_kernel("n I32", "I32", body))
    ((reference, optimized),) = run_plan_both(plan, "main", [[30]], encoding="python")
    assert reference["bindingCalls"] == {"test.double": 8}  # 2 * (0 + ... + 7) = 56 > 50
    assert not differences(reference, optimized)


def test_results_are_sandbox_values_of_the_declared_type() -> None:
    plan = prepare(_kernel("x I32", "List<I32>", "return list.of(x, x + 1);"))
    host = SandboxHost(bindings=[double])
    result = host.execute(plan, "main", [4], backend="optimized")
    assert result.value_json() == [4, 5]
    assert observe(result)["value"] == observe(host.execute(plan, "main", [4]))["value"]
