"""Generate the run-stage conformance cases: ``conformance/cases/run/<area>.json``, plus the cases
that need our fixture extensions (``refuse``: ``conformance/cases/bindings/refusals.json``;
``charge``: ``conformance/cases/limits/facades.json``).

    python conformance/tools/make_run_cases.py          # rewrite the case files
    python conformance/tools/make_run_cases.py --check  # fail if the files are out of date

Every expected ``fuelUsed`` and usage figure here is computed from the cost table
(``dotboxd.core.costs``, the executable form of ``spec/costs.md``) by a formula written next to the
case, following the charging rules of the spec by hand. Nothing here imports or runs the runtime:
the interpreter is checked *against* these numbers, never the other way round. Expected values are
computed with plain Python arithmetic under C#'s rules (truncating division, checked ranges, IEEE
doubles), again independently of ``dotboxd.core.arith``.

Every case except the few that test a Timeout sets ``maxWallTimeMs`` to ``GENEROUS_WALL_MS``, so that
no expectation depends on the speed of the machine (generator finding 4). Case names keep the group
they were written under (``run-arith-...``); ``GROUP_FILES`` says which area file a group goes to.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

from dotboxd.conformance.tools.kit import CASES, build_files, kernel, put_present, run_expect, write_or_check
from dotboxd.core import costs as C

OUT = CASES / "run"

S = C.STATEMENT_FUEL
E = C.EXPRESSION_FUEL
LOOP = C.LOOP_ITERATION_FUEL
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
GENEROUS_WALL_MS = 60_000
WALL = {"maxWallTimeMs": GENEROUS_WALL_MS}

Case = dict[str, Any]
#: output file (relative to ``cases/``) -> its cases, in the order they were added
FILES: dict[str, list[Case]] = {}

#: The area file each group of cases is written to (``run/<area>.json``).
GROUP_FILES: dict[str, str] = {
    "arith": "arithmetic",
    "compare": "arithmetic",
    "builtins": "arithmetic",
    "logic": "control-flow",
    "control": "control-flow",
    "calls": "control-flow",
    "strings": "strings",
    "collections": "collections",
    "lists": "collections",
    "maps": "collections",
    "records": "records",
    "limits": "limits",
    "bindings": "bindings",
    "inputs": "types",
    "values": "types",
    "eq": "types",
    "hostile": "hostile-input",
    "structure": "structure",
    "effects": "effects-capabilities",
}


def sb(text: str) -> int:
    """String bytes of a text (2 per UTF-16 unit)."""
    return C.string_bytes(len(text.encode("utf-16-le")) // 2)


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def add(
    area: str,
    name: str,
    text: str,
    *,
    value: Any = None,
    error: str | None = None,
    code: str | None = None,
    fuel: int | None = None,
    usage: dict[str, int] | None = None,
    args: list[Any] | None = None,
    policy: dict[str, Any] | None = None,
    bindings: list[dict[str, Any]] | None = None,
    binding_calls: dict[str, int] | None = None,
    entrypoint: str | None = None,
    description: str = "",
    tags: tuple[str, ...] = (),
    file: str | None = None,
) -> None:
    """Add one run case of group ``area`` (named ``run-<area>-<name>``) to its area file, or to
    ``file`` (relative to ``cases/``) when given."""
    expect = run_expect(
        value=value, error=error, code=code, fuel=fuel, usage=usage, binding_calls=binding_calls
    )
    case: Case = {
        "name": f"run-{area}-{name}",
        "description": description or name.replace("-", " "),
        "tags": ["run", area, *tags],
        "kernelText": text,
    }
    if error != "Timeout":
        policy = dict(policy or {})
        policy["limits"] = {**dict(policy.get("limits", {})), **WALL}
    put_present(case, policy=policy, bindings=bindings, entrypoint=entrypoint, args=args)
    case["expect"] = expect
    target = file or f"run/{GROUP_FILES[area]}.json"
    FILES.setdefault(target, []).append(case)


# ---------------------------------------------------------------------------------------------
# Independent oracles (C# rules)


class Fault(Exception):
    def __init__(self, code: str) -> None:
        self.code = code


def int_op(op: str, a: int, b: int, bits: int) -> int:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if op in ("div", "rem"):
        if b == 0:
            raise Fault("R-ARITH-DIVIDE-BY-ZERO")
        if a == lo and b == -1:
            raise Fault("R-ARITH-OVERFLOW")
        q = math.trunc(Fraction(a, b))
        r = q if op == "div" else a - b * q
    else:
        r = {"add": a + b, "sub": a - b, "mul": a * b}[op]
    if not lo <= r <= hi:
        raise Fault("R-ARITH-OVERFLOW")
    return r


def f64_op(op: str, a: float, b: float) -> float:
    if op in ("div", "rem") and b == 0.0:
        raise Fault("R-ARITH-NOT-FINITE")
    r = {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "div": a / b if b else 0.0,
        "rem": math.fmod(a, b) if b else 0.0,
    }[op]
    if not math.isfinite(r):
        raise Fault("R-ARITH-NOT-FINITE")
    return r


SYM = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "rem": "%",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "lte": "<=",
    "gt": ">",
    "gte": ">=",
}


def outcome(fn: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return fn(), None
    except Fault as fault:
        return None, fault.code


# ---------------------------------------------------------------------------------------------
# Arithmetic: `return a OP b;` costs the statement, the binary node and two variables.

BIN_FUEL = S + 3 * E

I32_PAIRS = {
    "add": [(1, 2), (-5, 3), (I32_MAX, 0), (I32_MAX, 1), (I32_MIN, -1), (I32_MIN, I32_MAX)],
    "sub": [(5, 7), (0, I32_MAX), (I32_MIN, 1), (I32_MAX, -1), (-1, I32_MAX)],
    "mul": [(6, 7), (46340, 46340), (65536, 65536), (-46341, 46341), (-1, I32_MIN), (-1, I32_MAX)],
    "div": [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 5), (1, 0), (I32_MIN, -1), (I32_MIN, 1), (I32_MAX, -1)],
    "rem": [(7, 2), (-7, 2), (7, -2), (-7, -2), (1, 0), (I32_MIN, -1), (I32_MIN, 2), (5, 5)],
}
I64_PAIRS = {
    "add": [(2**31, 2**31), (I64_MAX, 1), (I64_MIN, -1)],
    "sub": [(I64_MIN, 1), (-(2**40), 2**40)],
    "mul": [(2**31, 2**31), (2**32, 2**31), (-1, I64_MIN)],
    "div": [(-7, 2), (I64_MIN, -1), (5, 0), (I64_MAX, 2)],
    "rem": [(-7, 2), (I64_MIN, -1), (5, 0), (I64_MIN, 3)],
}
F64_PAIRS = {
    "add": [(1.5, 2.25), (1e308, 1e308), (0.1, 0.2)],
    "sub": [(0.0, 0.0), (-1e308, 1e308), (1.0, 3.0)],
    "mul": [(2.5, -4.0), (1e200, 1e200), (0.0, -1.0)],
    "div": [(7.5, 2.0), (1.0, 0.0), (0.0, 0.0), (-1.0, 3.0)],
    "rem": [(7.5, 2.0), (-7.5, 2.0), (1.0, 0.0), (5.0, -3.0)],
}


def _arith() -> None:
    for type_name, pairs, bits in (("I32", I32_PAIRS, 32), ("I64", I64_PAIRS, 64), ("F64", F64_PAIRS, 0)):
        for op, values in pairs.items():
            for index, (a, b) in enumerate(values):
                if bits:
                    result, code = outcome(partial(int_op, op, int(a), int(b), bits))
                else:
                    result, code = outcome(partial(f64_op, op, float(a), float(b)))
                text = kernel(f"return a {SYM[op]} b;", f"main(a {type_name}, b {type_name}) -> {type_name}")
                add(
                    "arith",
                    f"{type_name.lower()}-{op}-{index}",
                    text,
                    value=result,
                    error="InvalidInput" if code else None,
                    code=code,
                    fuel=BIN_FUEL,
                    args=[a, b],
                    description=f"{type_name} {a} {SYM[op]} {b} (C# semantics: checked, truncating)",
                    tags=(type_name.lower(), op),
                )
    neg = [
        ("I32", 5, -5, None),
        ("I32", I32_MIN, None, "R-ARITH-OVERFLOW"),
        ("I32", I32_MAX, -I32_MAX, None),
        ("I64", I64_MIN, None, "R-ARITH-OVERFLOW"),
        ("I64", 2**40, -(2**40), None),
        ("F64", 0.0, -0.0, None),
        ("F64", -2.5, 2.5, None),
    ]
    for index, (type_name, a, result, code) in enumerate(neg):
        add(
            "arith",
            f"neg-{type_name.lower()}-{index}",
            kernel("return -a;", f"main(a {type_name}) -> {type_name}"),
            value=result,
            error="InvalidInput" if code else None,
            code=code,
            fuel=S + 2 * E,
            args=[a],
            tags=(type_name.lower(), "neg"),
        )
    # literals only: statement, binary, two literals
    add("arith", "literal-sum", kernel("return 1 + 2;"), value=3, fuel=S + 3 * E)
    add("arith", "literal-precedence", kernel("return 1 - 2 * 3;"), value=-5, fuel=S + 5 * E)
    add(
        "arith",
        "i64-widen-by-conversion",
        kernel("return numeric.toI64(a) * 2L;", "main(a I32) -> I64"),
        value=2 * I32_MAX,
        args=[I32_MAX],
        fuel=S + 4 * E + C.BUILTIN_COSTS["numeric.toI64"].base,
    )


# ---------------------------------------------------------------------------------------------
# Comparison and equality


def _compare() -> None:
    cases: list[tuple[str, str, Any, Any]] = []
    for op in ("lt", "lte", "gt", "gte"):
        for a, b in ((3, 5), (5, 5), (5, 3)):
            cases.append(("I32", op, a, b))
        cases.append(("I64", op, -(2**40), 2**40))
        cases.append(("F64", op, -0.5, -0.25))
    for op in ("eq", "ne"):
        cases += [
            ("I32", op, 4, 4),
            ("I32", op, 4, -4),
            ("Bool", op, True, True),
            ("Bool", op, True, False),
            ("F64", op, 0.0, -0.0),
            ("String", op, "ab", "ab"),
            ("String", op, "ab", "aB"),
            ("I64", op, 2**40, 2**40),
        ]
    py = {
        "lt": lambda a, b: a < b,
        "lte": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "gte": lambda a, b: a >= b,
        "eq": lambda a, b: a == b,
        "ne": lambda a, b: a != b,
    }
    for index, (type_name, op, a, b) in enumerate(cases):
        string_bytes = sb(a) + sb(b) if type_name == "String" else 0
        add(
            "compare",
            f"{type_name.lower()}-{op}-{index}",
            kernel(f"return a {SYM[op]} b;", f"main(a {type_name}, b {type_name}) -> Bool"),
            value=py[op](a, b),
            fuel=BIN_FUEL,
            args=[a, b],
            usage={"stringBytes": string_bytes},
            tags=(op,),
        )
    # composite equality also charges one fuel per value node of each operand
    lists = [([1, 2], [1, 2], True), ([1, 2], [2, 1], False), ([], [], True), ([1], [1, 1], False)]
    for index, (la, lb, eq) in enumerate(lists):
        nodes = (len(la) + 1) + (len(lb) + 1)
        add(
            "compare",
            f"list-eq-{index}",
            kernel("return a == b;", "main(a List<I32>, b List<I32>) -> Bool"),
            value=eq,
            args=[la, lb],
            fuel=BIN_FUEL + C.composite_equality_fuel(len(la) + 1, len(lb) + 1),
            usage={"collectionElements": len(la) + len(lb)},
            description=f"structural list equality ({nodes} nodes)",
        )
    maps: list[tuple[list[list[Any]], list[list[Any]], bool]] = [
        ([["x", 1], ["y", 2]], [["y", 2], ["x", 1]], True),
        ([["x", 1]], [["x", 2]], False),
    ]
    for index, (ma, mb, eq) in enumerate(maps):
        na, nb = 1 + 2 * len(ma), 1 + 2 * len(mb)
        text_bytes = sum(sb(str(k)) for k, _ in ma) + sum(sb(str(k)) for k, _ in mb)
        add(
            "compare",
            f"map-eq-{index}",
            kernel("return a != b;", "main(a Map<String, I32>, b Map<String, I32>) -> Bool"),
            value=not eq,
            args=[ma, mb],
            fuel=BIN_FUEL + C.composite_equality_fuel(na, nb),
            usage={"stringBytes": text_bytes},
            description="maps compare as sets of entries",
        )
    add(
        "compare",
        "record-eq",
        kernel("return a == b;", "main(a Record<I32, Bool>, b Record<I32, Bool>) -> Bool"),
        value=False,
        args=[[1, True], [1, False]],
        fuel=BIN_FUEL + C.composite_equality_fuel(3, 3),
    )


# ---------------------------------------------------------------------------------------------
# not, and, or (short-circuit; operand order from the plan)


def _logic() -> None:
    for a in (True, False):
        add(
            "logic",
            f"not-{str(a).lower()}",
            kernel("return !a;", "main(a Bool) -> Bool"),
            value=not a,
            args=[a],
            fuel=S + 2 * E,
        )
        for b in (True, False):
            # the authored left operand runs first; the right one only if the left does not decide
            and_fuel = S + E + E + (E if a else 0)
            or_fuel = S + E + E + (0 if a else E)
            add(
                "logic",
                f"and-{str(a).lower()}-{str(b).lower()}",
                kernel("return a && b;", "main(a Bool, b Bool) -> Bool"),
                value=a and b,
                args=[a, b],
                fuel=and_fuel,
                tags=("short-circuit",),
            )
            add(
                "logic",
                f"or-{str(a).lower()}-{str(b).lower()}",
                kernel("return a || b;", "main(a Bool, b Bool) -> Bool"),
                value=a or b,
                args=[a, b],
                fuel=or_fuel,
                tags=("short-circuit",),
            )
    # neither operand can fail and the right one is strictly smaller: the right one runs first.
    # (a > 7) == (a < 3) is seven nodes: eq, two comparisons, two vars, two literals
    left = "((a > 7) == (a < 3))"
    left_fuel = 7 * E
    for op, decider, value in (("&&", "false", False), ("||", "true", True)):
        add(
            "logic",
            f"failure-free-right-first-{'and' if op == '&&' else 'or'}",
            kernel(f"return {left} {op} {decider};", "main(a I32) -> Bool"),
            value=value,
            args=[5],
            fuel=S + E + E,
            description="neither operand can fail and the right one is smaller: it runs first and decides",
            tags=("short-circuit", "reorder"),
        )
    for b in (True, False):
        add(
            "logic",
            f"failure-free-right-first-{'then-left' if b else 'decides'}",
            kernel(f"return {left} && b;", "main(a I32, b Bool) -> Bool"),
            value=b and ((5 > 7) == (5 < 3)),
            args=[5, b],
            fuel=S + E + E + (left_fuel if b else 0),
            description="the smaller right operand runs first; the left one only when it does not decide",
            tags=("short-circuit", "reorder"),
        )
    # an operand that can fail (here: division) keeps the authored order, even when the smaller right
    # operand would decide: the left runs first and fails (and, eq, div and its two literals)
    for op, decider in (("&&", "false"), ("||", "true")):
        add(
            "logic",
            f"can-fail-left-keeps-authored-order-{'and' if op == '&&' else 'or'}",
            kernel(f"return (1 / 0 == 1) {op} {decider};", "main() -> Bool"),
            error="InvalidInput",
            code="R-ARITH-DIVIDE-BY-ZERO",
            fuel=S + E + 4 * E,
            description="an operand that can fail is never moved: the left one runs first and fails",
            tags=("short-circuit",),
        )
    # equal sizes keep the authored order, so the failing left operand runs first
    add(
        "logic",
        "authored-order-when-not-smaller",
        kernel("return (1 / 0 == 1) && (2 / 1 == 2);", "main() -> Bool"),
        error="InvalidInput",
        code="R-ARITH-DIVIDE-BY-ZERO",
        fuel=S + E + 4 * E,
        tags=("short-circuit",),
    )


# ---------------------------------------------------------------------------------------------
# Control flow


def _control() -> None:
    for c in (True, False):
        add(
            "control",
            f"if-else-{str(c).lower()}",
            kernel("if c { return 1; } else { return 2; }", "main(c Bool) -> I32"),
            value=1 if c else 2,
            args=[c],
            fuel=(S + E) + (S + E),
        )
        # x = 1 (2); if + condition (2); then: x = 2 (2) when taken; return x (2)
        add(
            "control",
            f"if-no-else-{str(c).lower()}",
            kernel("x = 1; if c { x = 2; } return x;", "main(c Bool) -> I32"),
            value=2 if c else 1,
            args=[c],
            fuel=2 * (S + E) + (S + E) * (2 if c else 1),
        )
    for n in (0, 1, 5, 100):
        add(
            "control",
            f"for-empty-{n}",
            kernel("for i in 0 .. n { } return 0;", "main(n I32) -> I32"),
            value=0,
            args=[n],
            fuel=(S + 2 * E) + LOOP * n + (S + E),
            usage={"loopIterations": n},
            policy={"limits": WALL},
        )
        # s = 0 (2); for (3); per iteration 5 + (s = s + i: 4); return (2)
        add(
            "control",
            f"for-sum-{n}",
            kernel("s = 0; for i in 0 .. n { s = s + i; } return s;", "main(n I32) -> I32"),
            value=n * (n - 1) // 2,
            args=[n],
            fuel=2 + 3 + n * (LOOP + S + 3 * E) + 2,
            usage={"loopIterations": n},
            policy={"limits": WALL},
        )
    add(
        "control",
        "for-descending-range-is-empty",
        kernel("s = 0; for i in 5 .. 2 { s = s + 1; } return s;"),
        value=0,
        fuel=2 + 3 + 2,
        usage={"loopIterations": 0},
    )
    add(
        "control",
        "for-negative-bounds",
        kernel("s = 0; for i in -3 .. 0 { s = s + i; } return s;"),
        value=-6,
        fuel=2 + 3 + 3 * (LOOP + 4) + 2,
        usage={"loopIterations": 3},
    )
    for n in (0, 3, 10):
        # while: 1; condition (3 nodes) evaluated n + 1 times; n iterations of 5 + set (4); return 2
        add(
            "control",
            f"while-countdown-{n}",
            kernel("while n > 0 { n = n - 1; } return n;", "main(n I32) -> I32"),
            value=0,
            args=[n],
            fuel=S + 3 * (n + 1) + n * (LOOP + 4) + 2,
            usage={"loopIterations": n},
        )
    for k in (0, 4, 9):
        # iterations 0..k each: 5 + if 1 + condition 3; the last adds `break` (1); then return 2
        add(
            "control",
            f"for-break-at-{k}",
            kernel("for i in 0 .. 10 { if i == k { break; } } return 0;", "main(k I32) -> I32"),
            value=0,
            args=[k],
            fuel=3 + (k + 1) * (LOOP + 1 + 3) + 1 + 2,
            usage={"loopIterations": k + 1},
        )
    n = 6
    evens, odds = (n + 1) // 2, n // 2
    # even i: 5 + if 1 + condition 5 + continue 1; odd i: 5 + if 1 + condition 5 + set 4
    add(
        "control",
        "for-continue",
        kernel(
            "s = 0; for i in 0 .. n { if i % 2 == 0 { continue; } s = s + i; } return s;",
            "main(n I32) -> I32",
        ),
        value=sum(i for i in range(n) if i % 2),
        args=[n],
        fuel=2 + 3 + evens * (LOOP + 1 + 5 + 1) + odds * (LOOP + 1 + 5 + 4) + 2,
        usage={"loopIterations": n},
    )
    for a, b in ((2, 3), (0, 5), (3, 0)):
        # s = 0 (2); outer for (3); per outer iteration: 5 + inner for (3) + b * (5 + 4); return 2
        add(
            "control",
            f"nested-loops-{a}x{b}",
            kernel(
                "s = 0; for i in 0 .. a { for j in 0 .. b { s = s + 1; } } return s;",
                "main(a I32, b I32) -> I32",
            ),
            value=a * b,
            args=[a, b],
            fuel=2 + 3 + a * (LOOP + 3 + b * (LOOP + 4)) + 2,
            usage={"loopIterations": a + a * b},
        )
    # i = 0..2: 5 + if 1 + condition 3; i = 3: the same plus `return i` (2)
    add(
        "control",
        "return-inside-loop",
        kernel("for i in 0 .. 10 { if i == 3 { return i * 10; } } return -1;"),
        value=30,
        fuel=3 + 4 * (LOOP + 1 + 3) + (S + 3 * E),
        usage={"loopIterations": 4},
    )
    add(
        "control",
        "while-true-with-return",
        kernel("i = 0; while true { i = i + 1; if i == 3 { return i; } } return 0;"),
        value=3,
        fuel=2 + 1 + 3 * E + 3 * (LOOP + 4 + 1 + 3) + 2,
        usage={"loopIterations": 3},
    )
    add(
        "control",
        "nested-break-only-inner",
        kernel("t = 0; for i in 0 .. 3 { for j in 0 .. 3 { if j == 1 { break; } t = t + 1; } } return t;"),
        value=3,
        fuel=2 + 3 + 3 * (LOOP + 3 + (LOOP + 1 + 3 + 4) + (LOOP + 1 + 3 + 1)) + 2,
        usage={"loopIterations": 3 + 6},
    )
    add(
        "control",
        "expression-statement",
        kernel("a + 1; return a;", "main(a I32) -> I32"),
        value=5,
        args=[5],
        fuel=(S + 3 * E) + (S + E),
    )
    add(
        "control",
        "expression-statement-still-fails",
        kernel("a + 1; return 0;", "main(a I32) -> I32"),
        error="InvalidInput",
        code="R-ARITH-OVERFLOW",
        args=[I32_MAX],
        fuel=S + 3 * E,
    )
    add(
        "control",
        "infinite-loop-times-out",
        kernel("while true { } return 0;"),
        error="Timeout",
        code="R-TIMEOUT",
        policy={"limits": {"maxWallTimeMs": 20, "maxFuel": 10**12, "maxLoopIterations": 10**12}},
    )
    add(
        "control",
        "infinite-loop-out-of-fuel",
        kernel("while true { } return 0;"),
        error="QuotaExceeded",
        code="R-QUOTA-FUEL",
        policy={"limits": {"maxFuel": 100, **WALL}},
        # while 1; then (true: 1, iteration 5) repeated: 1 + 6k <= 100 -> k = 16; then true (1): 98;
        # the next iteration's 5 would reach 103 and is refused
        fuel=1 + 16 * (E + LOOP) + E,
        usage={"loopIterations": 17},
    )


# ---------------------------------------------------------------------------------------------
# Module functions


FNS = "fn sq(x I32) -> I32 { return x * x; }\nfn add(a I32, b I32) -> I32 { return a + b; }\n"


def _calls() -> None:
    add(
        "calls",
        "simple",
        kernel("return sq(a);", "main(a I32) -> I32", FNS),
        value=49,
        args=[7],
        fuel=S + E + E + (S + 3 * E),
    )
    add(
        "calls",
        "nested-arguments",
        kernel("return add(sq(a), sq(a + 1));", "main(a I32) -> I32", FNS),
        value=9 + 16,
        args=[3],
        fuel=S + E + (E + E + 4) + (E + 3 * E + 4) + (S + 3 * E),
    )
    add(
        "calls",
        "callee-fault",
        kernel("return sq(a);", "main(a I32) -> I32", FNS),
        error="InvalidInput",
        code="R-ARITH-OVERFLOW",
        args=[65536],
        fuel=S + E + E + (S + 3 * E),
    )
    chain = "fn f3() -> I32 { return 3; }\nfn f2() -> I32 { return f3(); }\nfn f1() -> I32 { return f2(); }\n"
    # depth: main 1, f1 2, f2 3, f3 4
    add(
        "calls",
        "depth-4-allowed",
        kernel("return f1();", extra=chain),
        value=3,
        fuel=3 * (S + E) + (S + E),
        policy={"limits": {"maxCallDepth": 4}},
    )
    add(
        "calls",
        "depth-4-refused-at-3",
        kernel("return f1();", extra=chain),
        error="QuotaExceeded",
        code="R-QUOTA-CALL-DEPTH",
        fuel=3 * (S + E),
        policy={"limits": {"maxCallDepth": 3}},
    )
    add(
        "calls",
        "depth-0-denies-the-entrypoint",
        kernel("return 1;"),
        error="QuotaExceeded",
        code="R-QUOTA-CALL-DEPTH",
        fuel=0,
        policy={"limits": {"maxCallDepth": 0}},
    )
    add(
        "calls",
        "private-function-in-loop",
        kernel("s = 0; for i in 0 .. 4 { s = add(s, i); } return s;", extra=FNS),
        value=6,
        fuel=2 + 3 + 4 * (LOOP + S + E + 2 * E + (S + 3 * E)) + 2,
        usage={"loopIterations": 4},
    )


# ---------------------------------------------------------------------------------------------
# Built-ins (literal arguments)


def base(name: str) -> int:
    return C.BUILTIN_COSTS[name].base


def _builtins() -> None:
    call1 = S + E + E  # statement, call node, one literal argument
    rows: list[tuple[str, str, str, Any, str | None]] = [
        ("abs", "math.abs(-5)", "I32", 5, None),
        ("abs-min", "math.abs(-2147483648)", "I32", None, "R-ARITH-OVERFLOW"),
        ("sqrt", "math.sqrt(16.0)", "F64", 4.0, None),
        ("sqrt-negative", "math.sqrt(-1.0)", "F64", None, "R-ARITH-NOT-FINITE"),
        ("floor", "math.floor(-1.5)", "F64", -2.0, None),
        ("ceil", "math.ceil(1.2)", "F64", 2.0, None),
        ("round-half-even-down", "math.round(2.5)", "F64", 2.0, None),
        ("round-half-even-up", "math.round(3.5)", "F64", 4.0, None),
        ("round-negative-half", "math.round(-2.5)", "F64", -2.0, None),
        ("to-i64", "numeric.toI64(5)", "I64", 5, None),
        ("to-f64-from-i32", "numeric.toF64(-5)", "F64", -5.0, None),
        ("to-f64-rounds-to-even", "numeric.toF64(9007199254740993L)", "F64", 9007199254740992.0, None),
    ]
    for name, expr, type_name, result, code in rows:
        builtin = expr.split("(")[0]
        add(
            "builtins",
            name,
            kernel(f"return {expr};", f"main() -> {type_name}"),
            value=result,
            error="InvalidInput" if code else None,
            code=code,
            fuel=call1 + base(builtin),
            tags=(builtin,),
        )
    call2 = S + E + 2 * E
    add("builtins", "min", kernel("return math.min(3, 4);"), value=3, fuel=call2 + base("math.min"))
    add("builtins", "max", kernel("return math.max(3, 4);"), value=4, fuel=call2 + base("math.max"))
    add(
        "builtins",
        "min-negative",
        kernel("return math.min(-3, -4);"),
        value=-4,
        fuel=call2 + base("math.min"),
    )
    call3 = S + E + 3 * E
    add(
        "builtins",
        "clamp-high",
        kernel("return math.clamp(10, 0, 5);"),
        value=5,
        fuel=call3 + base("math.clamp"),
    )
    add(
        "builtins",
        "clamp-low",
        kernel("return math.clamp(-10, 0, 5);"),
        value=0,
        fuel=call3 + base("math.clamp"),
    )
    add(
        "builtins",
        "clamp-inside",
        kernel("return math.clamp(3, 0, 5);"),
        value=3,
        fuel=call3 + base("math.clamp"),
    )
    add(
        "builtins",
        "clamp-inverted",
        kernel("return math.clamp(1, 5, 0);"),
        error="InvalidInput",
        code="R-ARITH-CLAMP-RANGE",
        fuel=call3 + base("math.clamp"),
    )
    for n in (-42, 0, I32_MIN):
        text = str(n)
        add(
            "builtins",
            f"to-string-{'neg' if n < 0 else 'zero'}-{len(text)}",
            kernel(f"return int32.toStringInvariant({n});", "main() -> String"),
            value=text,
            fuel=call1 + base("int32.toStringInvariant"),
            usage={"stringBytes": sb(text), "allocatedBytes": sb(text)},
        )


# ---------------------------------------------------------------------------------------------
# Strings (UTF-16 units)


def _strings() -> None:
    def lit_call(args: list[str]) -> int:
        return S + E + len(args) * E

    for text in ("abc", "", "a😀b", "é"):
        add(
            "strings",
            f"length-{units(text)}-{len(text)}",
            kernel(f'return string.length("{text}");'),
            value=units(text),
            fuel=lit_call([text]) + base("string.length"),
            usage={"stringBytes": sb(text)},
        )
    for text in ("", "x"):
        add(
            "strings",
            f"is-empty-{len(text)}",
            kernel(f'return string.isEmpty("{text}");', "main() -> Bool"),
            value=text == "",
            fuel=lit_call([text]) + base("string.isEmpty"),
        )
    subs = [
        ("hello", 1, 3, "ell", None),
        ("hello", 0, 5, "hello", None),
        ("hello", 5, 0, "", None),
        ("a😀b", 1, 2, "😀", None),
        ("abc", 2, 2, None, "R-STRING-RANGE"),
        ("abc", -1, 1, None, "R-STRING-RANGE"),
        ("abc", 0, -1, None, "R-STRING-RANGE"),
        ("a😀b", 1, 1, None, "R-STRING-RANGE"),
        ("a😀b", 2, 2, None, "R-STRING-RANGE"),
    ]
    for index, (text, start, length, result, code) in enumerate(subs):
        fuel = S + E + 3 * E + base("string.substringBudgeted")
        string_bytes = sb(text)
        if result is not None:
            # the result's shape, then one fuel per result byte
            fuel += C.BUILTIN_COSTS["string.substringBudgeted"].per_result_byte * sb(result)
            string_bytes += sb(result)
        add(
            "strings",
            f"substring-{index}",
            kernel(f'return string.substringBudgeted("{text}", {start}, {length});', "main() -> String"),
            value=result,
            error="InvalidInput" if code else None,
            code=code,
            fuel=fuel,
            usage={"stringBytes": string_bytes},
        )
    for a, b in (("ab", "cd"), ("", ""), ("😀", "x")):
        joined = a + b
        add(
            "strings",
            f"concat-{units(a)}-{units(b)}",
            kernel(f'return string.concatBudgeted("{a}", "{b}");', "main() -> String"),
            value=joined,
            fuel=S
            + 3 * E
            + base("string.concatBudgeted")
            + sb(joined) * C.BUILTIN_COSTS["string.concatBudgeted"].per_result_byte,
            usage={"stringBytes": sb(a) + sb(b) + sb(joined), "allocatedBytes": sb(a) + sb(b) + sb(joined)},
        )
    for a, b in (("abc", "abc"), ("abc", "ab"), ("", "")):
        add(
            "strings",
            f"equals-{units(a)}-{units(b)}",
            kernel(f'return string.equals("{a}", "{b}");', "main() -> Bool"),
            value=a == b,
            fuel=S + 3 * E + base("string.equals") + units(a) + units(b),
        )
    ordinal = [
        ("a", "b", -1),
        ("b", "a", 1),
        ("x", "x", 0),
        ("😀", "\uff61", -1),
        ("ab", "a", 1),
        ("", "a", -1),
    ]
    for index, (a, b, order) in enumerate(ordinal):
        add(
            "strings",
            f"compare-ordinal-{index}",
            kernel(f'return string.compareOrdinal("{a}", "{b}");'),
            value=order,
            fuel=S + 3 * E + base("string.compareOrdinal") + units(a) + units(b),
            description="ordinal UTF-16 code-unit order (an astral char sorts before U+FF61)",
        )
    add(
        "strings",
        "literal-charged-each-evaluation",
        kernel('n = 0; for i in 0 .. 3 { s = "ab"; } return 0;'),
        value=0,
        fuel=2 + 3 + 3 * (LOOP + 2) + 2,
        usage={"stringBytes": 3 * sb("ab"), "loopIterations": 3},
    )
    add(
        "strings",
        "input-string-charged",
        kernel("return string.length(s);", "main(s String) -> I32"),
        value=5,
        args=["hello"],
        fuel=S + 2 * E + base("string.length"),
        usage={"stringBytes": sb("hello")},
    )


# ---------------------------------------------------------------------------------------------
# Collections and records


def _collections() -> None:
    of3 = E + 3 * E + C.list_of(3).fuel  # list.of(1, 2, 3): node, literals, charge
    add(
        "collections",
        "list-of-count",
        kernel("return list.count(list.of(1, 2, 3));"),
        value=3,
        fuel=S + E + of3 + C.list_count(3).fuel,
        usage={"allocatedBytes": C.list_of(3).alloc, "collectionElements": 3},
    )
    for index, expected, code in (
        (0, 10, None),
        (2, 30, None),
        (3, None, "R-LIST-INDEX"),
        (-1, None, "R-LIST-INDEX"),
    ):
        add(
            "collections",
            f"list-get-{index}".replace("--", "-minus-"),
            kernel(f"return list.get(list.of(10, 20, 30), {index});"),
            value=expected,
            error="InvalidInput" if code else None,
            code=code,
            fuel=S + E + of3 + E + C.list_get(3).fuel,
        )
    add(
        "collections",
        "list-empty",
        kernel("return list.count(list.empty[I32]());"),
        value=0,
        fuel=S + E + E + C.list_empty().fuel + C.list_count(0).fuel,
        usage={"allocatedBytes": C.list_empty().alloc, "collectionElements": 0},
    )
    add(
        "collections",
        "list-of-no-args",
        kernel("return list.count(list.of());"),
        value=0,
        fuel=S + E + E + C.list_of(0).fuel + C.list_count(0).fuel,
    )
    add(
        "collections",
        "list-add",
        kernel("return list.add(list.of(1), 2);", "main() -> List<I32>"),
        value=[1, 2],
        fuel=S + E + (E + E + C.list_of(1).fuel) + E + C.list_add(1).fuel,
        usage={"allocatedBytes": C.list_of(1).alloc + C.list_add(1).alloc, "collectionElements": 1 + 2},
    )
    add(
        "collections",
        "list-add-copy-on-write",
        kernel("a = list.of(1); b = list.add(a, 2); return list.count(a);"),
        value=1,
        fuel=(S + 2 * E + C.list_of(1).fuel)
        + (S + 3 * E + C.list_add(1).fuel)
        + (S + 2 * E + C.list_count(1).fuel),
    )
    n = 10
    # b = list.empty (set 1 + node 1 + 2); per iteration: 5 + set 1 + add node 1 + var 1 + var 1 + list.add(i)
    add(
        "collections",
        "list-build-loop",
        kernel(
            "b = list.empty[I32](); for i in 0 .. n { b = list.add(b, i); } return list.count(b);",
            "main(n I32) -> I32",
        ),
        value=n,
        args=[n],
        fuel=(S + E + C.list_empty().fuel)
        + 3
        + sum(LOOP + S + 3 * E + C.list_add(i).fuel for i in range(n))
        + (S + 2 * E + C.list_count(n).fuel),
        usage={
            "collectionElements": sum(range(1, n + 1)),
            "loopIterations": n,
            "allocatedBytes": C.list_empty().alloc + sum(C.list_add(i).alloc for i in range(n)),
        },
    )
    set_k7 = E + (E + C.map_empty().fuel) + E + E + C.map_set(0, True).fuel  # map.set(map.empty(), "k", 7)
    add(
        "collections",
        "map-set-get",
        kernel('return map.get(map.set(map.empty[Map<String, I32>](), "k", 7), "k");'),
        value=7,
        fuel=S + E + set_k7 + E + C.map_get(1).fuel,
        # "k" literal twice (2 bytes each) and the new map holds the key text (2 bytes)
        usage={
            "stringBytes": 3 * sb("k"),
            "collectionElements": 1,
            "allocatedBytes": C.map_empty().alloc + C.map_set(0, True).alloc + 3 * sb("k"),
        },
    )
    add(
        "collections",
        "map-get-missing",
        kernel('return map.get(map.empty[Map<String, I32>](), "k");'),
        error="NotFound",
        code="R-MAP-KEY-MISSING",
        fuel=S + E + (E + C.map_empty().fuel) + E + C.map_get(0).fuel,
    )
    for key, present in ((1, True), (2, False)):
        add(
            "collections",
            f"map-contains-{str(present).lower()}",
            kernel(
                f"return map.containsKey(map.set(map.empty[Map<I32, I32>](), 1, 5), {key});", "main() -> Bool"
            ),
            value=present,
            fuel=S + E + set_k7 + E + C.map_contains_key(1).fuel,
        )
    # m = set(set(empty, 1, 10), 1, 20): the second set replaces (is_new False)
    inner = E + (E + C.map_empty().fuel) + 2 * E + C.map_set(0, True).fuel
    add(
        "collections",
        "map-replace",
        kernel("m = map.set(map.set(map.empty[Map<I32, I32>](), 1, 10), 1, 20); return map.get(m, 1);"),
        value=20,
        fuel=S + (E + inner + 2 * E + C.map_set(1, False).fuel) + (S + 3 * E + C.map_get(1).fuel),
        usage={
            "allocatedBytes": C.map_empty().alloc + C.map_set(0, True).alloc + C.map_set(1, False).alloc,
            "collectionElements": 2,
        },
    )
    for key, present in ((1, True), (9, False)):
        add(
            "collections",
            f"map-remove-{'present' if present else 'missing'}",
            kernel(f"m = map.remove(map.set(map.empty[Map<I32, I32>](), 1, 10), {key}); return 0;"),
            value=0,
            fuel=S + (E + inner + E + C.map_remove(1, present).fuel) + (S + E),
            usage={
                "allocatedBytes": C.map_empty().alloc
                + C.map_set(0, True).alloc
                + C.map_remove(1, present).alloc,
                "collectionElements": 1 + (0 if present else 1),
            },
        )
    add(
        "collections",
        "map-keys-by-type-bool",
        kernel(
            "m = map.set(map.set(map.empty[Map<Bool, I32>](), true, 1), false, 2); return map.get(m, true) * 10 + map.get(m, false);"
        ),
        value=12,
        tags=("map-keys",),
    )
    new2 = E + E + E + C.record_new(2).fuel  # record.new(7, "x")
    add(
        "collections",
        "record-get",
        kernel('return record.get(record.new[Record<I32, String>](7, "x"), 0);'),
        value=7,
        fuel=S + E + new2 + E + C.record_get(2).fuel,
        usage={
            "stringBytes": 2 * sb("x"),
            "allocatedBytes": C.record_new(2).alloc + 2 * sb("x"),
            "collectionElements": 2,
        },
        file="run/records.json",
    )
    add(
        "collections",
        "record-value",
        kernel(
            'return record.new[Record<I32, String, Bool>](7, "x", true);',
            "main() -> Record<I32, String, Bool>",
        ),
        value=[7, "x", True],
        fuel=S + E + 3 * E + C.record_new(3).fuel,
        file="run/records.json",
    )
    add(
        "collections",
        "nested-list-value",
        kernel("return list.of(list.of(1), list.empty[I32]());", "main() -> List<List<I32>>"),
        value=[[1], []],
        fuel=S + E + (E + E + C.list_of(1).fuel) + (E + C.list_empty().fuel) + C.list_of(2).fuel,
        usage={"collectionElements": 1 + 0 + (2 + 1)},
    )
    add(
        "collections",
        "map-value-canonical-order",
        kernel(
            'return map.set(map.set(map.empty[Map<String, I32>](), "b", 2), "a", 1);',
            "main() -> Map<String, I32>",
        ),
        value=[["a", 1], ["b", 2]],
        description="a map result is listed in canonical key order",
    )
    add(
        "collections",
        "list-input-count",
        kernel("return list.count(xs);", "main(xs List<I32>) -> I32"),
        value=200,
        args=[list(range(200))],
        # the input (201 nodes) costs 201 // 64 = 3 walk fuel before the run
        fuel=C.shape_walk_fuel(201) + S + 2 * E + C.list_count(200).fuel,
        usage={"collectionElements": 200},
    )
    items = ", ".join(["1"] * 63)
    add(
        "collections",
        "shape-walk-fuel",
        kernel(f"x = list.of({items}); return 0;"),
        value=0,
        fuel=(S + E + 63 * E + C.list_of(63).fuel + C.shape_walk_fuel(64)) + (S + E),
    )
    add(
        "collections",
        "list-equality-after-add",
        kernel("return list.add(list.of(1), 2) == list.of(1, 2);", "main() -> Bool"),
        value=True,
    )


# ---------------------------------------------------------------------------------------------
# Limits at N and N + 1


def _limits() -> None:
    def pair(
        name: str,
        limit: str,
        needed: int,
        text: str,
        code: str,
        fuel_ok: int | None,
        fuel_refused: int | None,
        usage_refused: dict[str, int] | None = None,
    ) -> None:
        add(
            "limits",
            f"{name}-at-limit",
            text,
            value=_value_of(text),
            fuel=fuel_ok,
            policy={"limits": {limit: needed, **WALL}},
            tags=("boundary", f"limit:{limit}", "at-limit"),
        )
        add(
            "limits",
            f"{name}-over-limit",
            text,
            error="QuotaExceeded",
            code=code,
            fuel=fuel_refused,
            usage=usage_refused,
            policy={"limits": {limit: needed - 1, **WALL}},
            tags=("boundary", f"limit:{limit}", "over-limit"),
        )

    t = kernel("return 1 + 2;")
    pair("fuel", "maxFuel", 4, t, "R-QUOTA-FUEL", 4, 3)
    t = kernel("for i in 0 .. 5 { } return 0;")
    pair(
        "loops",
        "maxLoopIterations",
        5,
        t,
        "R-QUOTA-LOOP",
        3 + 5 * LOOP + 2,
        3 + 4 * LOOP,
        {"loopIterations": 5},  # the refused fifth iteration is counted, its fuel is not (costs.md 9)
    )
    t = kernel("x = list.of(1, 2); return 0;")
    pair(
        "allocation",
        "maxAllocatedBytes",
        C.list_of(2).alloc,
        t,
        "R-QUOTA-ALLOCATION",
        S + 3 * E + C.list_of(2).fuel + 2,
        S + 3 * E + C.list_of(2).fuel,
        {"allocatedBytes": 0},
    )
    t = kernel("x = list.of(1, 2, 3); return 0;")
    pair("list-length", "maxListLength", 3, t, "R-QUOTA-LIST-LENGTH", None, S + 4 * E + C.list_of(3).fuel)
    t = kernel("m = map.set(map.set(map.empty[Map<I32, I32>](), 1, 1), 2, 2); return 0;")
    pair("map-entries", "maxMapEntries", 2, t, "R-QUOTA-MAP-ENTRIES", None, None)
    t = kernel("x = list.of(list.of(1)); return 0;")
    pair("collection-depth", "maxCollectionDepth", 2, t, "R-QUOTA-COLLECTION-DEPTH", None, None)
    t = kernel("x = list.of(1, 2, 3); return 0;")
    pair(
        "collection-elements",
        "maxTotalCollectionElements",
        3,
        t,
        "R-QUOTA-COLLECTION-ELEMENTS",
        None,
        None,
        {"collectionElements": 0},
    )
    t = kernel('return string.concatBudgeted("ab", "cd");', "main() -> String")
    pair(
        "string-length",
        "maxStringLength",
        4,
        t,
        "R-QUOTA-STRING-LENGTH",
        None,
        S + 3 * E + base("string.concatBudgeted"),
    )
    t = kernel('return string.concatBudgeted("ab", "cd");', "main() -> String")
    pair("string-bytes", "maxTotalStringBytes", 16, t, "R-QUOTA-STRING-BYTES", None, None, {"stringBytes": 8})
    chain = "fn f2() -> I32 { return 2; }\nfn f1() -> I32 { return f2(); }\n"
    pair("call-depth", "maxCallDepth", 3, kernel("return f1();", extra=chain), "R-QUOTA-CALL-DEPTH", 6, 4)
    tick = [_binding("probe.tick", [], "Bool", {"kind": "return", "value": True}, base_fuel=1)]
    two = kernel("a = probe.tick(); b = probe.tick(); return 0;")
    for limit, needed, code, per_binding in (("maxHostCalls", 2, "R-QUOTA-HOST-CALLS", None),):
        add(
            "limits",
            "host-calls-at-limit",
            two,
            value=0,
            bindings=tick,
            policy=_grant("probe.tick", {limit: needed}),
            binding_calls={"probe.tick": 2},
            usage={"hostCalls": 2},
            fuel=2 * (S + E + 1) + 2,
            tags=("boundary", f"limit:{limit}", "at-limit"),
        )
        add(
            "limits",
            "host-calls-over-limit",
            two,
            error="QuotaExceeded",
            code=code,
            bindings=tick,
            policy=_grant("probe.tick", {limit: needed - 1}),
            binding_calls={"probe.tick": 1},  # refused by the run's budget, before the binding's count
            usage={"hostCalls": 2},  # the refused second call is counted (costs.md 9)
            fuel=(S + E + 1) + (S + E),
            tags=("boundary", f"limit:{limit}", "over-limit"),
        )
        del per_binding
    for max_calls, ok in ((2, True), (1, False)):
        limited = [
            _binding(
                "probe.tick", [], "Bool", {"kind": "return", "value": True}, base_fuel=1, max_calls=max_calls
            )
        ]
        add(
            "limits",
            f"binding-calls-max-{max_calls}",
            two,
            value=0 if ok else None,
            error=None if ok else "QuotaExceeded",
            code=None if ok else "R-QUOTA-BINDING-CALLS",
            bindings=limited,
            policy=_grant("probe.tick"),
            binding_calls={"probe.tick": 2},  # over the limit: the refused second call is counted
            fuel=2 * (S + E + 1) + 2 if ok else (S + E + 1) + (S + E),
            tags=("boundary", "limit:maxCallsPerRun", "at-limit" if ok else "over-limit"),
        )
    add(
        "limits",
        "input-over-string-limit",
        kernel("return 0;", "main(s String) -> I32"),
        error="QuotaExceeded",
        code="R-QUOTA-STRING-LENGTH",
        args=["abcde"],
        fuel=0,
        policy={"limits": {"maxStringLength": 4}},
        description="inputs are charged before any kernel code runs",
    )
    add(
        "limits",
        "input-over-list-limit",
        kernel("return 0;", "main(xs List<I32>) -> I32"),
        error="QuotaExceeded",
        code="R-QUOTA-LIST-LENGTH",
        args=[[1, 2, 3]],
        fuel=0,
        policy={"limits": {"maxListLength": 2}},
    )


def _value_of(text: str) -> Any:
    """The value of the limit kernels when they succeed (all return a constant or the concat)."""
    if "concatBudgeted" in text:
        return "abcd"
    if "return 1 + 2;" in text:
        return 3
    if "return f1();" in text:
        return 2
    return 0


# ---------------------------------------------------------------------------------------------
# Host bindings (declared in the case, behaviour by fixture)


def _binding(
    bid: str,
    params: list[str],
    returns: str,
    behavior: dict[str, Any],
    *,
    base_fuel: int = 5,
    per_byte: int = 0,
    max_calls: int | None = None,
    is_async: bool = False,
    effects: tuple[str, ...] = ("Cpu", "HostStateRead"),
    audit: str = "PerCall",
    safety: str = "ReadOnlyExternal",
    capability: str | None = "",
) -> dict[str, Any]:
    """A fixture binding; its capability is its own id unless ``capability`` says otherwise
    (``None``: no capability, for pure bindings)."""
    cost: dict[str, Any] = {"baseFuel": base_fuel, "perByteFuel": per_byte}
    if max_calls is not None:
        cost["maxCallsPerRun"] = max_calls
    entry: dict[str, Any] = {
        "id": bid,
        "parameters": params,
        "returnType": returns,
        "effects": list(effects),
    }
    if capability is not None:
        entry["capability"] = capability or bid
    entry.update({"cost": cost, "isAsync": is_async, "audit": audit, "safety": safety, "behavior": behavior})
    return entry


def _grant(cap: str, limits: dict[str, int] | None = None, asynchronous: bool = False) -> dict[str, Any]:
    policy: dict[str, Any] = {"grants": [{"id": cap}], "limits": {**WALL, **(limits or {})}}
    if asynchronous:
        policy["allowRuntimeAsync"] = True
    return policy


def _bindings() -> None:
    one = S + E + 5  # statement, call node, base fuel 5
    b = _binding("probe.get", [], "I32", {"kind": "return", "value": 41})
    add(
        "bindings",
        "return",
        kernel("return probe.get() + 1;"),
        value=42,
        bindings=[b],
        policy=_grant("probe.get"),
        fuel=S + E + (E + 5) + E,
        binding_calls={"probe.get": 1},
        usage={"hostCalls": 1},
    )
    b = _binding("probe.echo", ["I32"], "I32", {"kind": "echo", "arg": 0})
    add(
        "bindings",
        "echo",
        kernel("return probe.echo(a);", "main(a I32) -> I32"),
        value=-7,
        args=[-7],
        bindings=[b],
        policy=_grant("probe.echo"),
        fuel=one + E,
        binding_calls={"probe.echo": 1},
    )
    b = _binding("probe.echo", ["List<I32>"], "List<I32>", {"kind": "echo", "arg": 0})
    add(
        "bindings",
        "echo-list",
        kernel("return probe.echo(list.of(1, 2));", "main() -> List<I32>"),
        value=[1, 2],
        bindings=[b],
        policy=_grant("probe.echo"),
        fuel=one + E + 2 * E + C.list_of(2).fuel,
        usage={"collectionElements": 2 + 2},
        description="the returned list is a new value and charged again",
    )
    b = _binding("probe.next", [], "I32", {"kind": "sequence", "values": [1, 2, 3]})
    add(
        "bindings",
        "sequence",
        kernel("return probe.next() * 100 + probe.next() * 10 + probe.next();"),
        value=123,
        bindings=[b],
        policy=_grant("probe.next"),
        binding_calls={"probe.next": 3},
        fuel=S + 2 * E + 2 * E + 3 * (E + 5) + 2 * E,
        usage={"hostCalls": 3},
    )
    b = _binding("probe.text", [], "String", {"kind": "return", "value": "abc"}, per_byte=2)
    add(
        "bindings",
        "per-byte-fuel",
        kernel("return probe.text();", "main() -> String"),
        value="abc",
        bindings=[b],
        policy=_grant("probe.text"),
        fuel=one + 2 * sb("abc"),
        usage={"stringBytes": sb("abc")},
    )
    failures = [
        ("raise", "I32", {"kind": "raise", "message": "/secret/path password=hunter2"}, "R-BINDING-FAILED"),
        ("pending-without-async", "I32", {"kind": "pending"}, "R-BINDING-PENDING"),
        ("async-value-without-async", "I32", {"kind": "async-return", "value": 1}, "R-BINDING-PENDING"),
        ("foreign", "I32", {"kind": "foreign"}, "R-BINDING-RETURN"),
        ("malformed-float-for-i32", "I32", {"kind": "malformed", "value": 1.5}, "R-BINDING-RETURN"),
        ("malformed-bool-for-i32", "I32", {"kind": "malformed", "value": True}, "R-BINDING-RETURN"),
        ("malformed-out-of-range", "I32", {"kind": "malformed", "value": 2**31}, "R-BINDING-RETURN"),
        (
            "malformed-traversal-path",
            "SandboxPath",
            {"kind": "malformed", "value": "../secret.txt"},
            "R-BINDING-RETURN",
        ),
        (
            "malformed-absolute-path",
            "SandboxPath",
            {"kind": "malformed", "value": "/etc/passwd"},
            "R-BINDING-RETURN",
        ),
        (
            "malformed-uri-userinfo",
            "SandboxUri",
            {"kind": "malformed", "value": "https://u:p@host/"},
            "R-BINDING-RETURN",
        ),
        ("malformed-string-for-f64", "F64", {"kind": "malformed", "value": "NaN"}, "R-BINDING-RETURN"),
        ("malformed-list-element", "List<I32>", {"kind": "malformed", "value": [1, "2"]}, "R-BINDING-RETURN"),
        (
            "malformed-map-value",
            "Map<String, I32>",
            {"kind": "malformed", "value": {"a": "one"}},
            "R-BINDING-RETURN",
        ),
    ]
    for name, returns, behavior, code in failures:
        assert isinstance(behavior, dict)
        b = _binding("probe.bad", [], returns, behavior)
        add(
            "bindings",
            name,
            kernel("x = probe.bad(); return 0;"),
            error="BindingFailure",
            code=code,
            bindings=[b],
            policy=_grant("probe.bad"),
            fuel=one,
            binding_calls={"probe.bad": 1},
            usage={"hostCalls": 1},
        )
    b = _binding("probe.later", [], "I32", {"kind": "async-return", "value": 9}, is_async=True)
    add(
        "bindings",
        "async-with-grant",
        kernel("return probe.later();"),
        value=9,
        bindings=[b],
        policy=_grant("probe.later", asynchronous=True),
        fuel=one,
        binding_calls={"probe.later": 1},
    )
    b = _binding("probe.never", [], "I32", {"kind": "pending"}, is_async=True)
    add(
        "bindings",
        "async-pending-times-out",
        kernel("return probe.never();"),
        error="Timeout",
        code="R-BINDING-TIMEOUT",
        bindings=[b],
        policy={
            "grants": [{"id": "probe.never"}],
            "allowRuntimeAsync": True,
            "limits": {"maxWallTimeMs": 50},
        },
        fuel=one,
    )
    b = _binding("probe.nap", [], "I32", {"kind": "sleep", "ms": 0, "value": 3})
    add(
        "bindings",
        "sleep-zero",
        kernel("return probe.nap();"),
        value=3,
        bindings=[b],
        policy=_grant("probe.nap"),
        fuel=one,
        binding_calls={"probe.nap": 1},
    )
    b = _binding("probe.nap", [], "I32", {"kind": "sleep", "ms": 150, "value": 3})
    add(
        "bindings",
        "sleep-past-deadline",
        kernel("return probe.nap();"),
        error="Timeout",
        code="R-TIMEOUT",
        bindings=[b],
        policy={"grants": [{"id": "probe.nap"}], "limits": {"maxWallTimeMs": 40}},
        fuel=one,
    )
    b = _binding("probe.get", [], "I32", {"kind": "return", "value": 1})
    add(
        "bindings",
        "short-circuit-skips-binding",
        kernel("return a && probe.get() == 1;", "main(a Bool) -> Bool"),
        value=False,
        args=[False],
        bindings=[b],
        policy=_grant("probe.get"),
        binding_calls={"probe.get": 0},
        fuel=S + 2 * E,
        usage={"hostCalls": 0},
    )
    add(
        "bindings",
        "binding-in-loop",
        kernel("s = 0; for i in 0 .. 4 { s = s + probe.get(); } return s;"),
        value=4,
        bindings=[b],
        policy=_grant("probe.get"),
        binding_calls={"probe.get": 4},
        fuel=2 + 3 + 4 * (LOOP + S + E + E + (E + 5)) + 2,
        usage={"hostCalls": 4, "loopIterations": 4},
    )
    add(
        "bindings",
        "binding-result-faults-later",
        kernel("return probe.get() / 0;"),
        error="InvalidInput",
        code="R-ARITH-DIVIDE-BY-ZERO",
        bindings=[b],
        policy=_grant("probe.get"),
        fuel=S + E + (E + 5) + E,
        binding_calls={"probe.get": 1},
    )


# ---------------------------------------------------------------------------------------------
# Entrypoint inputs


def _inputs() -> None:
    bad = [
        ("i32-given-float", "I32", 1.5),
        ("i32-given-string", "I32", "1"),
        ("i32-given-bool", "I32", True),
        ("i32-out-of-range", "I32", 2**31),
        ("i64-out-of-range", "I64", 2**63),
        ("f64-given-string", "F64", "1.0"),
        ("bool-given-int", "Bool", 1),
        ("string-given-int", "String", 5),
        ("unit-given-zero", "Unit", 0),
        ("list-bad-element", "List<I32>", [1, "a"]),
        ("map-duplicate-key", "Map<I32, I32>", [[1, 1], [1, 2]]),
        ("map-not-pairs", "Map<I32, I32>", [[1]]),
        ("record-wrong-arity", "Record<I32, Bool>", [1]),
        ("path-traversal", "SandboxPath", "../x"),
        ("path-absolute", "SandboxPath", "/etc/passwd"),
        ("uri-userinfo", "SandboxUri", "https://u@h/"),
        ("guid-malformed", "Guid", "1234"),
    ]
    for name, type_name, raw in bad:
        add(
            "inputs",
            name,
            kernel("return 0;", f"main(x {type_name}) -> I32"),
            error="InvalidInput",
            code="R-VALUE-TYPE",
            args=[raw],
            fuel=0,
            file="run/hostile-input.json",
        )
    add(
        "inputs",
        "too-few",
        kernel("return a;", "main(a I32) -> I32"),
        error="InvalidInput",
        code="R-ENTRY-ARITY",
        args=[],
        fuel=0,
    )
    add(
        "inputs",
        "too-many",
        kernel("return a;", "main(a I32) -> I32"),
        error="InvalidInput",
        code="R-ENTRY-ARITY",
        args=[1, 2],
        fuel=0,
    )
    add(
        "inputs",
        "unknown-entrypoint",
        kernel("return 1;"),
        error="InvalidInput",
        code="R-ENTRY-UNKNOWN",
        entrypoint="missing",
        args=[],
        fuel=0,
    )
    good = [
        ("f64-from-integer", "F64", 2, 2.0),
        ("unit", "Unit", None, None),
        (
            "guid-uppercase",
            "Guid",
            "0F8FAD5B-D9CB-469F-A165-70867728950E",
            "0f8fad5b-d9cb-469f-a165-70867728950e",
        ),
        ("path", "SandboxPath", "config/settings.json", "config/settings.json"),
        ("uri", "SandboxUri", "https://example.com/a?b=1", "https://example.com/a?b=1"),
        ("map-canonical-order", "Map<String, I32>", [["b", 2], ["a", 1]], [["a", 1], ["b", 2]]),
        ("record", "Record<I32, String>", [1, "x"], [1, "x"]),
        ("nested", "List<Map<I32, Bool>>", [[[1, True]], []], [[[1, True]], []]),
    ]
    for name, type_name, raw, result in good:
        add(
            "inputs",
            name,
            kernel("return x;", f"main(x {type_name}) -> {type_name}"),
            value=result,
            args=[raw],
        )
    add(
        "inputs",
        "opaque-id",
        kernel("return x;", "main(x PlayerId) -> PlayerId"),
        value={"type": "PlayerId", "value": "p-1"},
        args=[{"type": "PlayerId", "value": "p-1"}],
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        fuel=S + E,
    )
    add(
        "inputs",
        "opaque-id-wrong-brand",
        kernel("return 0;", "main(x PlayerId) -> I32"),
        error="InvalidInput",
        code="R-VALUE-TYPE",
        args=[{"type": "ItemId", "value": "p-1"}],
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
    )


# ---------------------------------------------------------------------------------------------
# Literal values


def _values() -> None:
    rows = [
        ("unit", "()", "Unit", None),
        ("bool", "true", "Bool", True),
        ("i64-max", "9223372036854775807L", "I64", I64_MAX),
        ("f64-negative-zero", "-0.0", "F64", -0.0),
        ("f64-large", "1.0e300", "F64", 1e300),
        ("string", '"héllo 😀"', "String", "héllo 😀"),
        (
            "guid",
            'guid"0F8FAD5B-D9CB-469F-A165-70867728950E"',
            "Guid",
            "0f8fad5b-d9cb-469f-a165-70867728950e",
        ),
        ("path", 'path"a/b.txt"', "SandboxPath", "a/b.txt"),
        ("uri", 'uri"https://example.com/x"', "SandboxUri", "https://example.com/x"),
    ]
    for name, literal, type_name, result in rows:
        text_bytes = sb(str(result)) if type_name in ("String", "SandboxPath", "SandboxUri") else 0
        add(
            "values",
            name,
            kernel(f"return {literal};", f"main() -> {type_name}"),
            value=result,
            fuel=S + E,
            usage={"stringBytes": text_bytes},
        )
    add(
        "values",
        "opaque-literal",
        kernel('return opaque PlayerId "p-9";', "main() -> PlayerId"),
        value={"type": "PlayerId", "value": "p-9"},
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        fuel=S + E,
        usage={"stringBytes": sb("p-9")},
    )
    add(
        "values",
        "opaque-equality",
        kernel('return opaque PlayerId "a" == p;', "main(p PlayerId) -> Bool"),
        value=False,
        args=[{"type": "PlayerId", "value": "b"}],
        policy={"declaredOpaqueIdTypes": ["PlayerId"]},
        fuel=S + 3 * E,
    )


# ---------------------------------------------------------------------------------------------
# Values of every kind: a small, explicit model of the value shape (spec/costs.md section 3)

TypeDesc = tuple[Any, ...]
TEXT_KINDS = frozenset({"String", "SandboxPath", "SandboxUri", "Opaque"})


def type_text(t: TypeDesc) -> str:
    if t[0] in ("List", "Map", "Record"):
        return f"{t[0]}<{', '.join(type_text(arg) for arg in t[1:])}>"
    return "PlayerId" if t[0] == "Opaque" else str(t[0])


def vshape(t: TypeDesc, value: Any) -> tuple[int, int, int]:
    """(nodes, elements, string bytes) of an encoded value of type ``t``: every value node counts,
    every composite adds its size to the elements, every text adds 2 bytes per UTF-16 unit (a Guid
    is a scalar, an opaque id counts its value text)."""
    kind = t[0]
    if kind == "List":
        inner = [vshape(t[1], item) for item in value]
        return (
            1 + sum(n for n, _, _ in inner),
            len(value) + sum(e for _, e, _ in inner),
            sum(b for *_, b in inner),
        )
    if kind == "Map":
        inner = [vshape(t[1], k) for k, _ in value] + [vshape(t[2], v) for _, v in value]
        return (
            1 + sum(n for n, _, _ in inner),
            len(value) + sum(e for _, e, _ in inner),
            sum(b for *_, b in inner),
        )
    if kind == "Record":
        inner = [vshape(field, item) for field, item in zip(t[1:], value, strict=True)]
        return (
            1 + sum(n for n, _, _ in inner),
            len(value) + sum(e for _, e, _ in inner),
            sum(b for *_, b in inner),
        )
    if kind in TEXT_KINDS:
        return 1, 0, sb(value["value"] if kind == "Opaque" else value)
    return 1, 0, 0


OPAQUE_POLICY = {"declaredOpaqueIdTypes": ["PlayerId"]}

#: One sample type per kind of value, with two values (equal only for Unit, which has one value).
KIND_SAMPLES: list[tuple[str, TypeDesc, Any, Any]] = [
    ("unit", ("Unit",), None, None),
    ("bool", ("Bool",), True, False),
    ("i32", ("I32",), 7, -3),
    ("i64", ("I64",), 2**40, -5),
    ("f64", ("F64",), 1.5, -0.25),
    ("string", ("String",), "ab", "é😀"),
    ("guid", ("Guid",), "0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7"),
    ("path", ("SandboxPath",), "a/b.txt", "c.txt"),
    ("uri", ("SandboxUri",), "https://example.com/a", "https://example.org/b"),
    ("opaque", ("Opaque",), {"type": "PlayerId", "value": "p-1"}, {"type": "PlayerId", "value": "p-22"}),
    ("list", ("List", ("I32",)), [1, 2], [3]),
    ("map", ("Map", ("String",), ("I32",)), [["a", 1]], [["b", 2], ["c", 3]]),
    ("record", ("Record", ("I32",), ("String",)), [1, "x"], [2, "yz"]),
]
MAP_KEY_KINDS = ("bool", "i32", "i64", "string", "path", "uri", "opaque")
COMPOSITE_KINDS = frozenset({"List", "Map", "Record"})


def _kind_policy(kind: str) -> dict[str, Any] | None:
    return dict(OPAQUE_POLICY) if kind == "opaque" else None


def _equality() -> None:
    """eq and ne on every kind of value: structural and exact; composites also pay one fuel per node."""
    for kind, t, a, b in KIND_SAMPLES:
        pairs = [("same", a, a, True)] + ([("different", a, b, False)] if kind != "unit" else [])
        for label, left, right, equal in pairs:
            (nl, el, bl), (nr, er, br) = vshape(t, left), vshape(t, right)
            walk = C.shape_walk_fuel(nl) + C.shape_walk_fuel(nr)
            extra = C.composite_equality_fuel(nl, nr) if t[0] in COMPOSITE_KINDS else 0
            for op in ("eq", "ne"):
                add(
                    "eq",
                    f"{op}-{kind}-{label}",
                    kernel(f"return a {SYM[op]} b;", f"main(a {type_text(t)}, b {type_text(t)}) -> Bool"),
                    value=equal if op == "eq" else not equal,
                    args=[left, right],
                    policy=_kind_policy(kind),
                    fuel=walk + BIN_FUEL + extra,
                    usage={"stringBytes": bl + br, "collectionElements": el + er},
                    description=f"{op} on two {type_text(t)} values that are {label}: equality is structural",
                    tags=(op, kind),
                )


def _list_kinds() -> None:
    """Every list built-in with elements of every kind (list.of, list.add, list.empty, list.count, list.get)."""
    body = (
        "xs = list.of(a, b);\n"
        "ys = list.add(xs, a);\n"
        "e = list.empty[{T}]();\n"
        "n = list.count(list.add(e, b));\n"
        "return list.get(ys, n + 1);"
    )
    w = C.shape_walk_fuel
    for kind, t, a, b in KIND_SAMPLES:
        (na, ea, ba), (nb, eb, bb) = vshape(t, a), vshape(t, b)
        fuel = (
            w(na)
            + w(nb)
            + (S + E + 2 * E + C.list_of(2).fuel + w(1 + na + nb))
            + (S + E + 2 * E + C.list_add(2).fuel + w(1 + 2 * na + nb))
            + (S + E + C.list_empty().fuel + w(1))
            + (S + E + (E + 2 * E + C.list_add(0).fuel + w(1 + nb)) + C.list_count(1).fuel)
            + (S + E + E + 3 * E + C.list_get(3).fuel)
        )
        elements = (ea + eb) + (2 + ea + eb) + (3 + 2 * ea + eb) + 0 + (1 + eb)
        text = (ba + bb) + (ba + bb) + (2 * ba + bb) + bb
        alloc = text + C.list_of(2).alloc + C.list_add(2).alloc + C.list_empty().alloc + C.list_add(0).alloc
        tt = type_text(t)
        add(
            "lists",
            f"of-add-empty-count-get-{kind}",
            kernel(body.replace("{T}", tt), f"main(a {tt}, b {tt}) -> {tt}"),
            value=a,
            args=[a, b],
            policy=_kind_policy(kind),
            fuel=fuel,
            usage={"collectionElements": elements, "stringBytes": text, "allocatedBytes": alloc},
            description=f"the list built-ins on List<{tt}>; every new list is charged in full (copy-on-write)",
            tags=(kind,),
        )


def _map_kinds() -> None:
    """Every map built-in with keys of every map-key kind, and map values of every kind."""
    body = (
        "m = map.set(map.empty[Map<{K}, I32>](), k1, 10);\n"
        "m = map.set(m, k2, 20);\n"
        "m = map.remove(m, k1);\n"
        "if map.containsKey(m, k1) { return -1; }\n"
        "return map.get(m, k2);"
    )
    w = C.shape_walk_fuel
    samples = {kind: (t, a, b) for kind, t, a, b in KIND_SAMPLES}
    for kind in MAP_KEY_KINDS:
        t, k1, k2 = samples[kind]
        (n1, _, b1), (n2, _, b2) = vshape(t, k1), vshape(t, k2)
        fuel = (
            w(n1)
            + w(n2)
            + (S + E + (E + C.map_empty().fuel + w(1)) + 2 * E + C.map_set(0, True).fuel + w(2 + n1))
            + (S + E + 3 * E + C.map_set(1, True).fuel + w(3 + n1 + n2))
            + (S + E + 2 * E + C.map_remove(2, True).fuel + w(2 + n2))
            + (S + E + 2 * E + C.map_contains_key(1).fuel)
            + (S + E + 2 * E + C.map_get(1).fuel)
        )
        text = (b1 + b2) + b1 + (b1 + b2) + b2
        alloc = (
            text
            + C.map_empty().alloc
            + C.map_set(0, True).alloc
            + C.map_set(1, True).alloc
            + C.map_remove(2, True).alloc
        )
        tt = type_text(t)
        add(
            "maps",
            f"keys-{kind}",
            kernel(body.replace("{K}", tt), f"main(k1 {tt}, k2 {tt}) -> I32"),
            value=20,
            args=[k1, k2],
            policy=_kind_policy(kind),
            fuel=fuel,
            usage={"collectionElements": 1 + 2 + 1, "stringBytes": text, "allocatedBytes": alloc},
            description=f"the map built-ins with {tt} keys: set adds, remove drops, containsKey and get look up",
            tags=(kind,),
        )
    for kind, t, a, _ in KIND_SAMPLES:
        na, ea, ba = vshape(t, a)
        tt = type_text(t)
        fuel = (
            w(na)
            + (S + E + (E + C.map_empty().fuel + w(1)) + 2 * E + C.map_set(0, True).fuel + w(2 + na))
            + (S + E + 2 * E + C.map_get(1).fuel)
        )
        add(
            "maps",
            f"values-{kind}",
            kernel(
                f"m = map.set(map.empty[Map<I32, {tt}>](), 1, v);\nreturn map.get(m, 1);",
                f"main(v {tt}) -> {tt}",
            ),
            value=a,
            args=[a],
            policy=_kind_policy(kind),
            fuel=fuel,
            usage={"collectionElements": ea + (1 + ea), "stringBytes": 2 * ba},
            description=f"a map holds {tt} values and hands back the one it was given",
            tags=(kind,),
        )


def _record_kinds() -> None:
    """record.new and record.get with a field of every kind."""
    w = C.shape_walk_fuel
    for kind, t, a, _ in KIND_SAMPLES:
        na, ea, ba = vshape(t, a)
        tt = type_text(t)
        fuel = (
            w(na)
            + (S + E + 2 * E + C.record_new(2).fuel + w(2 + na))
            + (S + E + 2 * E + C.record_get(2).fuel)
            + (S + E + 2 * E + C.record_get(2).fuel)
        )
        add(
            "records",
            f"new-get-{kind}",
            kernel(
                f"r = record.new[Record<{tt}, I32>](a, 5);\nk = record.get(r, 1);\nreturn record.get(r, 0);",
                f"main(a {tt}) -> {tt}",
            ),
            value=a,
            args=[a],
            policy=_kind_policy(kind),
            fuel=fuel,
            usage={
                "collectionElements": ea + 2 + ea,
                "stringBytes": 2 * ba,
                "allocatedBytes": 2 * ba + C.record_new(2).alloc,
            },
            description=f"a record field of type {tt} is stored and read back by its constant index",
            tags=(kind,),
        )
    rec = ("Record", ("I32",), ("String",))
    add(
        "records",
        "input-round-trip",
        kernel("return r;", "main(r Record<I32, String>) -> Record<I32, String>"),
        value=[4, "four"],
        args=[[4, "four"]],
        fuel=S + E,
        usage={"collectionElements": vshape(rec, [4, "four"])[1], "stringBytes": sb("four")},
    )
    add(
        "records",
        "nested-record",
        kernel(
            "inner = record.new[Record<I32>](9);\n"
            "outer = record.new[Record<Record<I32>, Bool>](inner, true);\n"
            "return record.get(record.get(outer, 0), 0);"
        ),
        value=9,
        fuel=(S + E + E + C.record_new(1).fuel)
        + (S + E + 2 * E + C.record_new(2).fuel)
        + (S + E + (E + E + E + C.record_get(2).fuel) + E + C.record_get(1).fuel),
        usage={"collectionElements": 1 + (2 + 1)},
        description="a record inside a record; elements count the inner record again in the outer one",
    )
    for equal in (True, False):
        other = "7" if equal else "8"
        add(
            "records",
            f"equality-{'same' if equal else 'different'}-fields",
            kernel(
                f"return record.new[Record<I32, Bool>](7, true) == record.new[Record<I32, Bool>]({other}, true);",
                "main() -> Bool",
            ),
            value=equal,
            fuel=S + E + 2 * (E + 2 * E + C.record_new(2).fuel) + C.composite_equality_fuel(3, 3),
            description="records are equal when their fields are equal, in order",
        )
    add(
        "records",
        "record-in-list",
        kernel(
            'xs = list.of(record.new[Record<I32, String>](1, "a"), record.new[Record<I32, String>](2, "b"));\n'
            "return record.get(list.get(xs, 1), 1);",
            "main() -> String",
        ),
        value="b",
        fuel=(S + E + 2 * (E + 2 * E + C.record_new(2).fuel) + C.list_of(2).fuel)
        + (S + E + (E + E + E + C.list_get(2).fuel) + E + C.record_get(2).fuel),
        usage={
            "collectionElements": 2 + 2 + (2 + 2 + 2),
            "stringBytes": 2 * (sb("a") + sb("b")) + sb("a") + sb("b"),
        },
        description="records are values: a list of records, a field of one element",
    )
    add(
        "records",
        "get-is-a-copy-free-read",
        kernel(
            "r = record.new[Record<I32, I32, I32>](1, 2, 3);\nreturn record.get(r, 2) * 100 + record.get(r, 0);"
        ),
        value=301,
        fuel=(S + E + 3 * E + C.record_new(3).fuel)
        + (S + E + (E + (E + 2 * E + C.record_get(3).fuel) + E) + (E + 2 * E + C.record_get(3).fuel)),
        usage={"collectionElements": 3},
        description="record.get reads a field: 2 + fields fuel, no allocation, no new value",
    )


# ---------------------------------------------------------------------------------------------
# More control flow


def _more_control() -> None:
    add(
        "control",
        "else-if-chain",
        kernel(
            "if n < 0 { return -1; } else if n == 0 { return 0; } else if n < 10 { return 1; } return 2;",
            "main(n I32) -> I32",
        ),
        value=1,
        args=[5],
        # if 1 + (n < 0) 3; else: if 1 + (n == 0) 3; else: if 1 + (n < 10) 3; return 1 + literal 1
        fuel=3 * (S + 3 * E) + (S + E),
    )
    add(
        "control",
        "for-bounds-evaluated-once",
        kernel("s = 0; for i in 0 .. sq(2) { s = s + 1; } return s;", extra=FNS),
        value=4,
        # s = 0 (2); for 1 + start 1 + end (call 1 + literal 1 + sq body 4); 4 x (5 + 4); return 2
        fuel=2 + (S + E + (E + E + (S + 3 * E))) + 4 * (LOOP + S + 3 * E) + 2,
        usage={"loopIterations": 4},
        description="forRange evaluates its end bound once, not once per iteration",
    )
    add(
        "control",
        "for-variable-set-from-counter",
        kernel("x = -1; for i in 0 .. 3 { x = i; } return x;"),
        value=2,
        fuel=2 + 3 + 3 * (LOOP + S + E) + 2,
        usage={"loopIterations": 3},
    )
    add(
        "control",
        "while-false-never-iterates",
        kernel("while false { return 1; } return 0;"),
        value=0,
        fuel=(S + E) + (S + E),
        usage={"loopIterations": 0},
    )
    add(
        "control",
        "while-continue-and-break",
        kernel(
            "i = 0; s = 0; while true { i = i + 1; if i > 5 { break; } if i % 2 == 0 { continue; } s = s + i; } return s;"
        ),
        value=1 + 3 + 5,
        # i = 0, s = 0 (4); while 1; per test: true (1). Iterations i = 1..6: 5 + (i = i + 1: 4) + (if i > 5: 4);
        # i = 6 breaks (1). For i = 1..5: if i % 2 == 0 (6); even i continue (1), odd i s = s + i (4). return 2.
        fuel=4 + S + 6 * (E + LOOP + 4 + 4) + 1 + 5 * 6 + 2 * 1 + 3 * 4 + 2,
        usage={"loopIterations": 6},
    )
    add(
        "control",
        "dead-code-after-return-not-charged",
        kernel("return 1; x = 2 + 3;"),
        value=1,
        fuel=S + E,
        description="statements after a return never run and are never charged",
    )
    add(
        "control",
        "dead-code-after-break-not-charged",
        kernel("for i in 0 .. 3 { break; x = i * 2; } return 0;"),
        value=0,
        fuel=3 + (LOOP + S) + (S + E),
        usage={"loopIterations": 1},
    )
    add(
        "control",
        "return-from-nested-loops",
        kernel("for i in 0 .. 5 { for j in 0 .. 5 { if i * j == 6 { return i * 10 + j; } } } return -1;"),
        value=23,
        # iteration (i, j) costs 5 + if 1 + condition 5; i = 0, 1 run all 5 inner iterations
        fuel=3 + 3 * (LOOP + 3) + (2 * 5 + 4) * (LOOP + 1 + 5) + (S + 5 * E),
        usage={"loopIterations": 3 + 2 * 5 + 4},
    )
    add(
        "control",
        "while-call-in-condition",
        kernel("n = 0; while sq(n) < 10 { n = n + 1; } return n;", extra=FNS),
        value=4,
        # n = 0 (2); while 1; condition (lt 1 + call 1 + var 1 + sq body 4 = 7) x 5; 4 x (5 + 4); return 2
        fuel=2 + S + 5 * (E + E + E + (S + 3 * E) + E) + 4 * (LOOP + 4) + 2,
        usage={"loopIterations": 4},
    )
    add(
        "calls",
        "entrypoint-called-as-function",
        kernel(
            "return other(a) + 1;",
            "main(a I32) -> I32",
            "entrypoint fn other(x I32) -> I32 { return x * 2; }\n",
        ),
        value=11,
        args=[5],
        fuel=S + E + (E + E + (S + 3 * E)) + E,
        description="an entrypoint is also an ordinary function for calls from the module",
    )
    add(
        "calls",
        "arguments-left-to-right",
        kernel(
            "return sub2(sq(a), a);",
            "main(a I32) -> I32",
            "fn sub2(x I32, y I32) -> I32 { return x - y; }\n" + FNS,
        ),
        value=9 - 3,
        args=[3],
        fuel=S + E + (E + E + (S + 3 * E)) + E + (S + 3 * E),
    )
    add(
        "calls",
        "callee-locals-are-private",
        kernel(
            "x = 1; y = bump(x); return x * 10 + y;",
            extra="fn bump(x I32) -> I32 { x = x + 5; return x; }\n",
        ),
        value=16,
        fuel=2 + (S + E + E + (S + 3 * E) + (S + E)) + (S + 5 * E),
        description="a callee's assignments change only its own frame",
    )


# ---------------------------------------------------------------------------------------------
# More strings and arithmetic


def _more_strings() -> None:
    for n in (I32_MAX, -1, 7):
        text = str(n)
        add(
            "strings",
            f"to-string-{'max' if n == I32_MAX else ('minus-one' if n < 0 else 'seven')}",
            kernel(f"return int32.toStringInvariant({n});", "main() -> String"),
            value=text,
            fuel=S + E + E + base("int32.toStringInvariant"),
            usage={"stringBytes": sb(text)},
        )
    ordinal = [("a", "A", 1), ("A", "a", -1), ("abc", "abd", -1), ("", "", 0), ("\u00e9", "e", 1)]
    for index, (a, b, order) in enumerate(ordinal, start=10):
        add(
            "strings",
            f"compare-ordinal-{index}",
            kernel(f'return string.compareOrdinal("{a}", "{b}");'),
            value=order,
            fuel=S + 3 * E + base("string.compareOrdinal") + units(a) + units(b),
            description="ordinal order compares UTF-16 code units, not letters (uppercase sorts first)",
        )
    for a, b in (("A", "a"), ("ab", "abc"), ("😀", "😀")):
        add(
            "strings",
            f"equals-ordinal-{units(a)}-{units(b)}-{'same' if a == b else 'diff'}",
            kernel(f'return string.equals("{a}", "{b}");', "main() -> Bool"),
            value=a == b,
            fuel=S + 3 * E + base("string.equals") + units(a) + units(b),
        )
    add(
        "strings",
        "concat-then-length",
        kernel('return string.length(string.concatBudgeted(a, "😀"));', "main(a String) -> I32"),
        value=5,
        args=["abc"],
        fuel=S
        + E
        + (
            E
            + E
            + E
            + base("string.concatBudgeted")
            + C.BUILTIN_COSTS["string.concatBudgeted"].per_result_byte * sb("abc😀")
        )
        + base("string.length"),
        usage={"stringBytes": sb("abc") + sb("😀") + sb("abc😀")},
        description="a surrogate pair counts two UTF-16 units",
    )
    add(
        "strings",
        "substring-empty-is-empty",
        kernel('return string.isEmpty(string.substringBudgeted("abc", 1, 0));', "main() -> Bool"),
        value=True,
        fuel=S + E + (E + 3 * E + base("string.substringBudgeted")) + base("string.isEmpty"),
        usage={"stringBytes": sb("abc")},
    )
    add(
        "strings",
        "string-eq-operator-is-ordinal",
        kernel('return "é" == "e\\u0301";', "main() -> Bool"),
        value=False,
        fuel=S + 3 * E,
        usage={"stringBytes": sb("é") + sb("e\u0301")},
        description="no Unicode normalization: a precomposed and a decomposed e-acute differ",
    )
    add(
        "strings",
        "input-text-kinds-are-distinct",
        kernel("return string.length(s) + 1;", "main(s String) -> I32"),
        value=len("a/b.txt") + 1,
        args=["a/b.txt"],
        fuel=S + E + (E + E + base("string.length")) + E,
        usage={"stringBytes": sb("a/b.txt")},
        description="a String input that looks like a path is just a String",
    )


def _more_arith() -> None:
    ordered: list[tuple[str, str, float, float, bool]] = [
        ("f64-neg-zero-not-less", "lt", -0.0, 0.0, False),
        ("f64-neg-zero-lte", "lte", -0.0, 0.0, True),
        ("f64-neg-zero-not-greater", "gt", 0.0, -0.0, False),
    ]
    for name, op, x, y, result in ordered:
        add(
            "arith",
            name,
            kernel(f"return a {SYM[op]} b;", "main(a F64, b F64) -> Bool"),
            value=result,
            args=[x, y],
            fuel=BIN_FUEL,
            description="-0.0 and 0.0 are equal numbers, so neither is less than the other",
        )
    binary: list[tuple[str, str, str, int, Any, Any]] = [
        ("f64-rem-sign-of-dividend", "rem", "F64", 0, -5.5, 2.0),
        ("f64-tiny-product-underflows-to-zero", "mul", "F64", 0, 1e-200, 1e-200),
        ("f64-huge-quotient-overflows", "div", "F64", 0, 1e300, 1e-300),
        ("i64-min-div-one", "div", "I64", 64, I64_MIN, 1),
        ("i64-max-plus-min", "add", "I64", 64, I64_MAX, I64_MIN),
        ("i32-rem-zero-dividend", "rem", "I32", 32, 0, -7),
        ("i64-mul-overflow-negative", "mul", "I64", 64, -(2**32), 2**31 + 1),
        ("i64-mul-exactly-min", "mul", "I64", 64, -(2**32), 2**31),
    ]
    for name, op, type_name, bits, x, y in binary:
        if bits:
            result, code = outcome(partial(int_op, op, int(x), int(y), bits))
        else:
            result, code = outcome(partial(f64_op, op, float(x), float(y)))
        add(
            "arith",
            name,
            kernel(f"return a {SYM[op]} b;", f"main(a {type_name}, b {type_name}) -> {type_name}"),
            value=result,
            error="InvalidInput" if code else None,
            code=code,
            args=[x, y],
            fuel=BIN_FUEL,
            tags=(type_name.lower(), op),
        )
    unary: list[tuple[str, str, Any, Any]] = [
        ("f64-neg-of-neg-zero", "F64", -0.0, 0.0),
        ("i32-neg-max", "I32", I32_MAX, -I32_MAX),
    ]
    for name, type_name, x, result in unary:
        add(
            "arith",
            name,
            kernel("return -a;", f"main(a {type_name}) -> {type_name}"),
            value=result,
            args=[x],
            fuel=S + 2 * E,
            tags=(type_name.lower(), "neg"),
        )
    add(
        "arith",
        "precedence-and-parentheses",
        kernel("return (a + 2) * 3 - a % 4 / 2;", "main(a I32) -> I32"),
        value=(7 + 2) * 3 - int(Fraction(7 % 4, 2)),
        args=[7],
        # sub, mul, add, a, 2, 3, div, rem, a, 4, 2: eleven expression nodes
        fuel=S + 11 * E,
    )
    add(
        "arith",
        "to-i64-then-overflow-free",
        kernel("return numeric.toI64(a) * numeric.toI64(a);", "main(a I32) -> I64"),
        value=I32_MIN * I32_MIN,
        args=[I32_MIN],
        fuel=S + E + 2 * (E + E + base("numeric.toI64")),
        description="widening is explicit: I32 MIN squared overflows I32 but fits I64",
    )
    add(
        "arith",
        "to-f64-from-i64-max",
        kernel("return numeric.toF64(a);", "main(a I64) -> F64"),
        value=float(I64_MAX),
        args=[I64_MAX],
        fuel=S + E + E + base("numeric.toF64"),
    )


# ---------------------------------------------------------------------------------------------
# Limits: more boundaries


def _more_limits() -> None:
    bounds = {"inputBounds": {"main": {"n": [0, 10]}}}
    for n, ok, side in (
        (10, True, "at-limit"),
        (11, False, "over-limit"),
        (0, True, "at-limit"),
        (-1, False, "over-limit"),
    ):
        add(
            "limits",
            f"input-bound-{'upper' if n > 5 else 'lower'}-{side}",
            kernel("return n;", "main(n I32) -> I32"),
            value=n if ok else None,
            error=None if ok else "InvalidInput",
            code=None if ok else "R-INPUT-BOUND",
            args=[n],
            policy=bounds,
            fuel=S + E if ok else 0,
            tags=("boundary", "limit:inputBounds", side),
            description="an integer input must lie in the policy's inputBounds [lo, hi], checked before the run",
        )
    sized = {"inputBounds": {"main": {"xs": [0, 3]}}}
    for items, ok in (([1, 2, 3], True), ([1, 2, 3, 4], False)):
        add(
            "limits",
            f"input-bound-list-size-{len(items)}",
            kernel("return list.count(xs);", "main(xs List<I32>) -> I32"),
            value=len(items) if ok else None,
            error=None if ok else "InvalidInput",
            code=None if ok else "R-INPUT-BOUND",
            args=[items],
            policy=sized,
            fuel=S + E + E + C.list_count(len(items)).fuel if ok else 0,
            tags=("boundary", "limit:inputBounds", "at-limit" if ok else "over-limit"),
            description="a List input's size must lie in its inputBounds",
        )
    # while true under a fuel limit F: 1 for the statement, then per iteration 1 (condition) + 5
    for limit in (100_000, 1000):
        k = (limit - 1 - E - LOOP) // (E + LOOP) + 1  # iterations that complete
        used = 1 + k * (E + LOOP) + E  # then the condition of the next one; its 5 is refused
        add(
            "limits",
            f"endless-loop-fuel-{limit}",
            kernel("while true { } return 0;"),
            error="QuotaExceeded",
            code="R-QUOTA-FUEL",
            policy={"limits": {"maxFuel": limit}} if limit != 100_000 else None,
            fuel=used,
            usage={"loopIterations": k + 1},
            description="an endless loop ends with QuotaExceeded when the fuel runs out (default limit 100,000)"
            if limit == 100_000
            else "an endless loop under a small fuel limit",
        )
    for limit in (0, 1):
        add(
            "limits",
            f"loops-limit-{limit}",
            kernel("for i in 0 .. 1 { } return 0;"),
            value=0 if limit else None,
            error=None if limit else "QuotaExceeded",
            code=None if limit else "R-QUOTA-LOOP",
            policy={"limits": {"maxLoopIterations": limit}},
            fuel=3 + LOOP + 2 if limit else 3,
            usage={"loopIterations": 1},  # run, or refused and counted (costs.md 9)
            tags=("boundary", "limit:maxLoopIterations", "at-limit" if limit else "over-limit"),
            description="a limit of 0 denies the category: the first loop iteration is refused",
        )
    tick = [_binding("probe.tick", [], "Bool", {"kind": "return", "value": True}, base_fuel=1)]
    for limit in (0, 1):
        add(
            "limits",
            f"host-calls-limit-{limit}",
            kernel("x = probe.tick(); return 0;"),
            value=0 if limit else None,
            error=None if limit else "QuotaExceeded",
            code=None if limit else "R-QUOTA-HOST-CALLS",
            bindings=tick,
            policy=_grant("probe.tick", {"maxHostCalls": limit}),
            binding_calls={"probe.tick": limit},
            fuel=(S + E + 1) + 2 if limit else S + E,
            tags=("boundary", "limit:maxHostCalls", "at-limit" if limit else "over-limit"),
        )
    # fuel exactly at the limit inside a loop: for i in 0..3 { } costs 3 + 15, return 2
    needed = 3 + 3 * LOOP + 2
    for limit, ok in ((needed, True), (needed - 1, False)):
        add(
            "limits",
            f"loop-fuel-{'at' if ok else 'over'}-limit",
            kernel("for i in 0 .. 3 { } return 0;"),
            value=0 if ok else None,
            error=None if ok else "QuotaExceeded",
            code=None if ok else "R-QUOTA-FUEL",
            policy={"limits": {"maxFuel": limit}},
            fuel=needed if ok else 3 + 3 * LOOP + 1,
            usage={"loopIterations": 3},
            tags=("boundary", "limit:maxFuel", "at-limit" if ok else "over-limit"),
        )
    # a string built by concatenation, at and over the total string byte limit
    need = 2 * sb("ab") + sb("abab")
    for limit, ok in ((need, True), (need - 1, False)):
        add(
            "limits",
            f"string-bytes-concat-{'at' if ok else 'over'}-limit",
            kernel('return string.concatBudgeted("ab", "ab");', "main() -> String"),
            value="abab" if ok else None,
            error=None if ok else "QuotaExceeded",
            code=None if ok else "R-QUOTA-STRING-BYTES",
            policy={"limits": {"maxTotalStringBytes": limit}},
            fuel=S
            + 3 * E
            + base("string.concatBudgeted")
            + (C.BUILTIN_COSTS["string.concatBudgeted"].per_result_byte * sb("abab") if ok else 0),
            usage={"stringBytes": need if ok else 2 * sb("ab")},
            tags=("boundary", "limit:maxTotalStringBytes", "at-limit" if ok else "over-limit"),
        )


# ---------------------------------------------------------------------------------------------
# Hostile inputs: values a caller (or a host binding) might use to break out of the type system


def _hostile() -> None:
    bad: list[tuple[str, str, Any]] = [
        ("path-backslash", "SandboxPath", "a\\b.txt"),
        ("path-drive-letter", "SandboxPath", "C:/x.txt"),
        ("path-empty", "SandboxPath", ""),
        ("path-empty-segment", "SandboxPath", "a//b"),
        ("path-dot-segment", "SandboxPath", "./a"),
        ("path-dot-dot-inside", "SandboxPath", "a/../b"),
        ("path-trailing-dot", "SandboxPath", "a/b."),
        ("path-trailing-space", "SandboxPath", "a/b "),
        ("path-device-name", "SandboxPath", "con.txt"),
        ("path-device-name-folder", "SandboxPath", "x/LPT1/y"),
        ("path-control-character", "SandboxPath", "a\u0001b"),
        ("path-absolute-uri", "SandboxPath", "file://host/etc/passwd"),
        ("uri-no-scheme", "SandboxUri", "example.com/a"),
        ("uri-empty-authority", "SandboxUri", "https:///a"),
        ("uri-userinfo-password", "SandboxUri", "https://user:pw@example.com/"),
        ("uri-whitespace", "SandboxUri", "https://exa mple.com/"),
        ("uri-backslash", "SandboxUri", "https://example.com\\a"),
        ("uri-scheme-digit-first", "SandboxUri", "1http://example.com/"),
        ("guid-short", "Guid", "0f8fad5b-d9cb-469f-a165-70867728950"),
        ("guid-not-hex", "Guid", "0f8fad5b-d9cb-469f-a165-70867728950g"),
        ("guid-braces", "Guid", "{0f8fad5b-d9cb-469f-a165-70867728950e}"),
        ("opaque-empty-value", "PlayerId", {"type": "PlayerId", "value": ""}),
        ("opaque-space-in-value", "PlayerId", {"type": "PlayerId", "value": "p 1"}),
        ("opaque-value-too-long", "PlayerId", {"type": "PlayerId", "value": "p" * 257}),
        ("opaque-bare-string", "PlayerId", "p-1"),
        ("opaque-extra-key", "PlayerId", {"type": "PlayerId", "value": "p-1", "owner": "x"}),
        ("string-lone-surrogate", "String", "a\ud800b"),
        ("i64-given-exponent", "I64", 1e3),
        ("f64-given-bool", "F64", False),
        ("list-given-object", "List<I32>", {"0": 1}),
        ("record-extra-field", "Record<I32>", [1, 2]),
        ("map-key-wrong-type", "Map<I32, I32>", [["1", 1]]),
    ]
    for name, type_name, raw in bad:
        add(
            "hostile",
            f"input-{name}",
            kernel("return 0;", f"main(x {type_name}) -> I32"),
            error="InvalidInput",
            code="R-VALUE-TYPE",
            args=[raw],
            policy=OPAQUE_POLICY if type_name == "PlayerId" else None,
            fuel=0,
            description=f"an input that breaks the {type_name} rules is refused before any code runs",
        )
    ok: list[tuple[str, str, Any]] = [
        ("opaque-value-at-256", "PlayerId", {"type": "PlayerId", "value": "p" * 256}),
        ("string-host-name-is-data", "String", "System.IO.File.ReadAllText"),
        ("string-astral", "String", "x😀"),
        ("path-dots-inside-name", "SandboxPath", "a.b/c..d.txt"),
        ("uri-with-port-query-fragment", "SandboxUri", "https://example.com:8443/a?b=1#c"),
    ]
    for name, type_name, raw in ok:
        encoded = raw
        text = raw["value"] if isinstance(raw, dict) else raw
        add(
            "hostile",
            f"input-{name}",
            kernel("return x;", f"main(x {type_name}) -> {type_name}"),
            value=encoded,
            args=[raw],
            policy=OPAQUE_POLICY if type_name == "PlayerId" else None,
            fuel=S + E,
            usage={"stringBytes": sb(text)},
            description="input text that only looks dangerous is data, accepted as it is",
        )
    add(
        "hostile",
        "input-deeper-than-collection-depth",
        kernel("return 0;", "main(x List<List<List<List<I32>>>>) -> I32"),
        error="QuotaExceeded",
        code="R-QUOTA-COLLECTION-DEPTH",
        args=[[[[[1]]]]],
        policy={"limits": {"maxCollectionDepth": 3}},
        fuel=0,
        description="an input nested deeper than maxCollectionDepth is refused before the run",
    )
    items = list(range(101))
    add(
        "hostile",
        "input-longer-than-list-length",
        kernel("return 0;", "main(xs List<I32>) -> I32"),
        error="QuotaExceeded",
        code="R-QUOTA-LIST-LENGTH",
        args=[items],
        policy={"limits": {"maxListLength": 100}},
        # the shape walk (102 nodes) is charged before the length check refuses the input
        fuel=C.shape_walk_fuel(len(items) + 1),
        description="an oversized input list is refused; the walk that measured it stays charged",
    )
    big = _binding("probe.big", [], "String", {"kind": "return", "value": "x" * 50})
    add(
        "hostile",
        "binding-returns-oversized-string",
        kernel("x = probe.big(); return 0;"),
        error="QuotaExceeded",
        code="R-QUOTA-STRING-LENGTH",
        bindings=[big],
        policy=_grant("probe.big", {"maxStringLength": 49}),
        fuel=S + E + 5,
        binding_calls={"probe.big": 1},
        description="a binding's return value is charged like any new value: over maxStringLength it fails the run",
    )
    huge = _binding("probe.huge", [], "List<I32>", {"kind": "return", "value": list(range(11))})
    add(
        "hostile",
        "binding-returns-oversized-list",
        kernel("x = probe.huge(); return 0;"),
        error="QuotaExceeded",
        code="R-QUOTA-LIST-LENGTH",
        bindings=[huge],
        policy=_grant("probe.huge", {"maxListLength": 10}),
        fuel=S + E + 5,
        binding_calls={"probe.huge": 1},
    )
    for name, returns, raw in (
        ("lone-surrogate", "String", "a\udc00"),
        ("guid-not-hex", "Guid", "zzzzzzzz-d9cb-469f-a165-70867728950e"),
        ("opaque-bad-value", "I32", {"type": "PlayerId", "value": "p-1"}),
        ("record-short", "Record<I32, I32>", [1]),
        ("nan-text", "F64", "NaN"),
    ):
        bad_binding = _binding("probe.bad", [], returns, {"kind": "malformed", "value": raw})
        add(
            "hostile",
            f"binding-returns-{name}",
            kernel("x = probe.bad(); return 0;"),
            error="BindingFailure",
            code="R-BINDING-RETURN",
            bindings=[bad_binding],
            policy=_grant("probe.bad"),
            fuel=S + E + 5,
            binding_calls={"probe.bad": 1},
            description="a host value that is not a valid sandbox value of the declared type is refused",
        )


# ---------------------------------------------------------------------------------------------
# Structure: entrypoints and functions at run time


def _structure() -> None:
    two = "entrypoint fn second(a I32) -> I32 { return a * 3; }\n"
    add(
        "structure",
        "second-entrypoint",
        kernel("return 1;", extra=two),
        value=12,
        entrypoint="second",
        args=[4],
        fuel=S + 3 * E,
        description="any entrypoint can be run by name",
    )
    add(
        "structure",
        "private-function-is-not-an-entrypoint",
        kernel("return helper();", extra="private fn helper() -> I32 { return 5; }\n"),
        error="InvalidInput",
        code="R-ENTRY-UNKNOWN",
        entrypoint="helper",
        args=[],
        fuel=0,
    )
    add(
        "structure",
        "function-defined-after-use",
        'module "t" version "1.0.0";\nentrypoint fn main() -> I32 {\nreturn later(2);\n}\nfn later(x I32) -> I32 { return x + 40; }\n',
        value=42,
        fuel=S + E + E + (S + 3 * E),
    )
    add(
        "structure",
        "unit-entrypoint",
        kernel("x = 1; return ();", "main() -> Unit"),
        value=None,
        fuel=(S + E) + (S + E),
    )
    add(
        "structure",
        "unit-function-as-statement",
        kernel("noop(); return 3;", extra="fn noop() -> Unit { return (); }\n"),
        value=3,
        fuel=(S + E + (S + E)) + (S + E),
    )
    add(
        "structure",
        "same-local-name-in-two-functions",
        kernel("x = 2; return f(x) + x;", extra="fn f(y I32) -> I32 { x = y * 10; return x; }\n"),
        value=22,
        fuel=(S + E) + (S + E + (E + E + (S + 3 * E) + (S + E)) + E),
    )
    add(
        "structure",
        "local-set-in-both-branches",
        kernel("if c { x = 1; } else { x = 2; } return x;", "main(c Bool) -> I32"),
        value=2,
        args=[False],
        fuel=(S + E) + (S + E) + (S + E),
    )


# ---------------------------------------------------------------------------------------------
# Effects and capabilities at run time


def _effects() -> None:
    one = S + E + 5
    kill = _binding(
        "game.world.kill",
        ["I32"],
        "Bool",
        {"kind": "return", "value": True},
        effects=("Cpu", "HostStateWrite"),
        capability="game.world.monster.write.kill",
        safety="SideEffectingExternal",
    )
    add(
        "effects",
        "wildcard-grant-covers-binding",
        kernel("return game.world.kill(3);", "main() -> Bool"),
        value=True,
        bindings=[kill],
        policy={"grants": [{"id": "game.world.*"}]},
        fuel=one + E,
        binding_calls={"game.world.kill": 1},
        description="a prefix wildcard grant covers every capability below it",
    )
    add(
        "effects",
        "exact-grant-runs-side-effecting-binding",
        kernel("return game.world.kill(3);", "main() -> Bool"),
        value=True,
        bindings=[kill],
        policy={"grants": [{"id": "game.world.monster.write.kill"}]},
        fuel=one + E,
        binding_calls={"game.world.kill": 1},
    )
    add(
        "effects",
        "binding-through-private-helper",
        kernel(
            "return helper() && true;",
            "main() -> Bool",
            "fn helper() -> Bool { return game.world.kill(1); }\n",
        ),
        value=True,
        bindings=[kill],
        policy={"grants": [{"id": "game.world.monster.write.kill"}]},
        fuel=S + E + (E + (S + E + E + 5)) + E,
        binding_calls={"game.world.kill": 1},
    )
    add(
        "effects",
        "binding-in-dead-code-never-runs",
        kernel("return 1; x = game.world.kill(1);"),
        value=1,
        bindings=[kill],
        fuel=S + E,
        binding_calls={"game.world.kill": 0},
        description="dead code needs no capability and never calls its binding",
    )
    pure = _binding(
        "probe.double",
        ["I32"],
        "I32",
        {"kind": "echo", "arg": 0},
        effects=("Cpu",),
        audit="None",
        safety="PureIntrinsic",
        capability=None,
        base_fuel=2,
    )
    add(
        "effects",
        "pure-binding-needs-no-grant",
        kernel("return probe.double(a);", "main(a I32) -> I32"),
        value=21,
        args=[21],
        bindings=[pure],
        fuel=S + E + E + 2,
        binding_calls={"probe.double": 1},
        usage={"hostCalls": 1},
        description="a PureIntrinsic binding (Cpu only, no capability) runs under the default policy",
    )
    clock = _binding(
        "test.clock.now",
        [],
        "I64",
        {"kind": "return", "value": 1700000000000},
        effects=("Cpu", "Time"),
        capability="time.now",
        base_fuel=2,
    )
    add(
        "effects",
        "time-binding-with-time-grant",
        kernel("return test.clock.now();", "main() -> I64"),
        value=1700000000000,
        bindings=[clock],
        policy={"grants": [{"id": "time.now"}]},
        fuel=S + E + 2,
        binding_calls={"test.clock.now": 1},
    )
    log = _binding(
        "test.log.info",
        ["String"],
        "Unit",
        {"kind": "return", "value": None},
        effects=("Cpu", "Audit"),
        capability="log.write",
        safety="SideEffectingExternal",
        base_fuel=2,
    )
    log["auditKind"] = "SandboxLog"
    add(
        "effects",
        "log-binding-with-log-grant",
        kernel('test.log.info("hello"); return 0;'),
        value=0,
        bindings=[log],
        policy={"grants": [{"id": "log.write"}]},
        fuel=(S + E + E + 2) + (S + E),
        binding_calls={"test.log.info": 1},
        usage={"stringBytes": sb("hello")},
    )
    later = _binding("probe.later", [], "I32", {"kind": "async-return", "value": 4}, is_async=True)
    add(
        "effects",
        "async-binding-under-wildcard",
        kernel("return probe.later();"),
        value=4,
        bindings=[later],
        policy={"grants": [{"id": "probe.*"}], "allowRuntimeAsync": True},
        fuel=one,
        binding_calls={"probe.later": 1},
        description="an async binding runs under a wildcard grant for its capability plus the async grant",
    )


def _refusals() -> None:
    """Our ``refuse`` fixture: a binding that refuses on purpose picks the category and the code."""
    for category, code in (
        ("PermissionDenied", "R-BINDING-DENIED"),
        ("NotFound", "R-BINDING-NOT-FOUND"),
        ("InvalidInput", "R-BINDING-INVALID"),
        ("QuotaExceeded", "R-BINDING-QUOTA"),
    ):
        b = _binding(
            "probe.refuse", ["I32"], "I32", {"kind": "refuse", "category": category, "message": "no"}
        )
        add(
            "bindings",
            f"refuse-{category.lower()}",
            kernel("x = probe.refuse(7); return 0;"),
            error=category,
            code=code,
            bindings=[b],
            policy=_grant("probe.refuse"),
            fuel=S + E + E + 5,
            binding_calls={"probe.refuse": 1},
            usage={"hostCalls": 1},
            description=f"a binding that refuses with {category} ends the run with that category and {code}",
            tags=("refuse",),
            file="bindings/refusals.json",
        )
    b = _binding("probe.audited", [], "I32", {"kind": "return", "value": 1}, audit="PerResource")
    add(
        "bindings",
        "per-resource-without-audit-event",
        kernel("return probe.audited();"),
        error="BindingFailure",
        code="R-BINDING-AUDIT",
        bindings=[b],
        policy=_grant("probe.audited"),
        fuel=S + E + 5,
        binding_calls={"probe.audited": 1},
        description="a PerResource binding must write its own audit event; a fixture never does",
    )


def _facade_limits() -> None:
    """The file, network and log limits at N and N+1, through our ``charge`` fixture: a host binding
    that reports, through its binding context, the bytes its facade read or wrote or the event it
    logged (nothing a kernel does charges these counters itself)."""
    text = kernel("x = probe.io(); return 0;")
    ok_fuel = (S + E + 5) + (S + E)  # the call (statement, node, base fuel 5), then return 0
    refused_fuel = S + E + 5  # the charge fails inside the binding, after its base fuel
    counters = [
        ("fileBytesRead", "maxFileBytesRead", "R-QUOTA-FILE-READ", 10),
        ("fileBytesWritten", "maxFileBytesWritten", "R-QUOTA-FILE-WRITE", 10),
        ("networkBytesRead", "maxNetworkBytesRead", "R-QUOTA-NETWORK-READ", 10),
        ("networkBytesWritten", "maxNetworkBytesWritten", "R-QUOTA-NETWORK-WRITE", 10),
    ]
    for counter, limit, code, amount in counters:
        b = _binding("probe.io", [], "I32", {"kind": "charge", counter: amount, "value": 1})
        for allowed, ok in ((amount, True), (amount - 1, False)):
            add(
                "limits",
                f"{counter.lower()}-{'at' if ok else 'over'}-limit",
                text,
                value=0 if ok else None,
                error=None if ok else "QuotaExceeded",
                code=None if ok else code,
                bindings=[b],
                policy=_grant("probe.io", {limit: allowed}),
                fuel=ok_fuel if ok else refused_fuel,
                usage={counter: amount if ok else 0},
                binding_calls={"probe.io": 1},
                tags=("boundary", f"limit:{limit}", "at-limit" if ok else "over-limit", "charge"),
                description=f"a binding that reports {amount} {counter} is allowed at {limit} {amount} "
                "and refused one below it (the refused charge is not recorded)",
                file="limits/facades.json",
            )
    log = _binding("probe.log", [], "Unit", {"kind": "charge", "logMessage": "hello"})
    twice = kernel("probe.log(); probe.log(); return 0;")
    for allowed, ok in ((2, True), (1, False)):
        add(
            "limits",
            f"log-events-{'at' if ok else 'over'}-limit",
            twice,
            value=0 if ok else None,
            error=None if ok else "QuotaExceeded",
            code=None if ok else "R-QUOTA-LOG-EVENTS",
            bindings=[log],
            policy=_grant("probe.log", {"maxLogEvents": allowed}),
            fuel=2 * (S + E + 5) + (S + E) if ok else (S + E + 5) + (S + E + 5),
            usage={"logEvents": 2},  # over the limit the refused second event is counted (costs.md 9)
            binding_calls={"probe.log": 2},
            tags=("boundary", "limit:maxLogEvents", "at-limit" if ok else "over-limit", "charge"),
            file="limits/facades.json",
        )
    for allowed, ok in ((units("hello"), True), (units("hello") - 1, False)):
        add(
            "limits",
            f"log-message-length-{'at' if ok else 'over'}-limit",
            kernel("probe.log(); return 0;"),
            value=0 if ok else None,
            error=None if ok else "QuotaExceeded",
            code=None if ok else "R-QUOTA-LOG-MESSAGE",
            bindings=[log],
            policy=_grant("probe.log", {"maxLogMessageLength": allowed}),
            fuel=ok_fuel if ok else refused_fuel,
            usage={"logEvents": 1 if ok else 0},
            binding_calls={"probe.log": 1},
            tags=("boundary", "limit:maxLogMessageLength", "at-limit" if ok else "over-limit", "charge"),
            description="a log message is at most maxLogMessageLength UTF-16 units long",
            file="limits/facades.json",
        )


GENERATORS = (
    _arith,
    _compare,
    _logic,
    _control,
    _calls,
    _builtins,
    _strings,
    _collections,
    _limits,
    _bindings,
    _inputs,
    _values,
    _equality,
    _list_kinds,
    _map_kinds,
    _record_kinds,
    _more_control,
    _more_strings,
    _more_arith,
    _more_limits,
    _hostile,
    _structure,
    _effects,
    _refusals,
    _facade_limits,
)


def build() -> dict[str, str]:
    """Every output file (path relative to ``cases/``) and its exact text."""
    return build_files(FILES, GENERATORS)


def main(argv: list[str] | None = None) -> int:
    files = build()
    total = sum(len(c) for c in FILES.values())
    pinned = sum(1 for cs in FILES.values() for c in cs if "fuelUsed" in c["expect"])
    # the tool owns every file of run/: one it no longer writes is stale
    owned = [f"run/{path.name}" for path in OUT.glob("*.json")]
    summary = f"{total} run cases, {pinned} with fuelUsed pinned, in {len(files)} files"
    return write_or_check(__file__, files, argv, summary=summary, owned=owned)


if __name__ == "__main__":
    raise SystemExit(main())
