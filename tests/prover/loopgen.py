"""A small, loop-heavy, type-directed kernel generator for the prover's soundness properties.

The conformance generator (``dotboxd.conformance.generator``) explores the whole language; this
one concentrates on what budgets depend on: ``forRange`` loops over parameters, collection sizes
and locals, counter ``while`` loops (so ranking functions are needed), nested loops, early
``return``/``break``/``continue``, integer arithmetic that may overflow, list and string growth,
and a private helper with its own loop - under small limits and sometimes ``inputBounds``, so that
every verdict (PROVED, REFUTED, UNKNOWN) occurs often. Programs are written in the text form and
are well typed by construction: every expression is drawn for the type it must have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

PARAMS = "n I32, m I32, xs List<I32>, s String, flag Bool"
INT_VARS = ("acc", "t")


@dataclass(frozen=True)
class Kernel:
    source: str
    policy: dict[str, Any]
    inputs: tuple[tuple[Any, ...], ...]


MAIN_EXTRAS = ("list.count(xs)", "list.count(ys)", "string.length(s)", "string.length(w)")


class _Gen:
    def __init__(
        self, draw: st.DrawFn, with_helper: bool, extras: tuple[str, ...], bools: tuple[str, ...], stem: str
    ) -> None:
        self.draw = draw
        self.counter = 0
        self.with_helper = with_helper
        self.extras = extras
        self.bools = bools
        self.stem = stem
        self.main = bool(extras)
        self.targets: list[str] = []

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{self.stem}{stem}{self.counter}"

    def pick(self, options: list[str]) -> str:
        return self.draw(st.sampled_from(options))

    def int_atom(self, ints: list[str]) -> str:
        options = [st.sampled_from(ints), st.integers(-3, 12).map(str)]
        if self.extras:
            options.append(st.sampled_from(list(self.extras)))
        atom: str = self.draw(st.one_of(*options))
        return atom

    def int_expr(self, ints: list[str], depth: int = 0) -> str:
        if depth >= 2 or self.draw(st.integers(0, 3)) == 0:
            return self.int_atom(ints)
        a = self.int_expr(ints, depth + 1)
        kind = self.draw(st.integers(0, 7))
        if kind == 0:
            return f"({a} + {self.int_expr(ints, depth + 1)})"
        if kind == 1:
            return f"({a} - {self.int_expr(ints, depth + 1)})"
        if kind == 2:
            return f"({a} * {self.draw(st.integers(-3, 4))})"
        if kind == 3:
            return f"({a} / {self.draw(st.sampled_from([1, 2, 3, -2, 7]))})"
        if kind == 4:
            return f"({a} % {self.draw(st.sampled_from([2, 3, 5]))})"
        if kind == 5:
            return f"math.min({a}, {self.int_expr(ints, depth + 1)})"
        if kind == 6 and self.with_helper:
            return f"helper({a}, {self.int_atom(ints)})"
        return f"math.max({a}, {self.draw(st.integers(-2, 5))})"

    def cond(self, ints: list[str]) -> str:
        kind = self.draw(st.integers(0, 4))
        if kind == 0 and self.bools:
            return self.pick(list(self.bools))
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        c = f"{self.int_expr(ints, 1)} {op} {self.int_expr(ints, 1)}"
        if kind == 4 and self.bools:
            return f"{c} && {self.pick(list(self.bools))}"
        return c

    def block(self, ints: list[str], depth: int, in_loop: bool, size: int) -> list[str]:
        out: list[str] = []
        for _ in range(self.draw(st.integers(1, size))):
            out.extend(self.stmt(ints, depth, in_loop))
        return out

    def stmt(self, ints: list[str], depth: int, in_loop: bool) -> list[str]:
        kinds = ["set", "set", "if"] + (["list", "text"] if self.main else [])
        if depth < 3:
            kinds += ["for", "for", "while"]
        if in_loop:
            kinds += ["break", "continue"]
        kinds += ["return"]
        kind = self.pick(kinds)
        if kind == "set":
            return [f"{self.pick(self.targets)} = {self.int_expr(ints)};"]
        if kind == "list":
            return [f"ys = list.add(ys, {self.int_expr(ints, 1)});"]
        if kind == "text":
            return [f'w = string.concatBudgeted(w, "{self.pick(["a", "bc", ""])}");']
        if kind == "break":
            return [f"if {self.cond(ints)} {{ break; }}"]
        if kind == "continue":
            return [f"if {self.cond(ints)} {{ continue; }}"]
        if kind == "return":
            return [f"if {self.cond(ints)} {{ return {self.int_expr(ints, 1)}; }}"]
        if kind == "if":
            then = self.block(ints, depth + 1, in_loop, 2)
            other = self.block(ints, depth + 1, in_loop, 2) if self.draw(st.booleans()) else []
            lines = [f"if {self.cond(ints)} {{", *then]
            lines += ["} else {", *other, "}"] if other else ["}"]
            return lines
        if kind == "for":
            i = self.fresh("i")
            if self.main:
                start = self.draw(st.sampled_from(["0", "1", "m", "t"]))
                ends = [
                    "n",
                    "m",
                    "3",
                    "list.count(xs)",
                    "string.length(s)",
                    "acc",
                    "(n / 2)",
                    "math.min(n, 7)",
                ]
            else:
                start = self.draw(st.sampled_from(["0", "a"]))
                ends = ["b", "3", "(b / 2)", "math.min(a, 5)"]
            end = self.draw(st.sampled_from(ends))
            body = self.block([*ints, i], depth + 1, True, 3)
            return [f"for {i} in {start} .. {end} {{", *body, "}"]
        k = self.fresh("k")
        bounds = ["n", "m", "5", "list.count(xs)", "(m + 2)"] if self.main else ["b", "4", "(a + 2)"]
        bound = self.draw(st.sampled_from(bounds))
        step = self.draw(st.sampled_from(["1", "2"]))
        body = self.block([*ints, k], depth + 1, True, 3)
        shape = self.draw(st.sampled_from(["guard", "break", "halve", "either", "or"]))
        if shape == "or":  # x > 0 || y > 0, the positive one lowered: max(0, x) + max(0, y)
            k2 = self.fresh("k")
            return [
                f"{k} = {bound};",
                f"{k2} = {bound};",
                f"while {k} > 0 || {k2} > 0 {{",
                f"if {k} > 0 {{ {k} = {k} - 1; }} else {{ {k2} = {k2} - {step}; }}",
                *body,
                "}",
            ]
        if shape == "either":  # x > 0 && y > 0, each path lowering one: ranked by x + y, path by path
            k2 = self.fresh("k")
            pick = self.cond([*ints, k])
            return [
                f"{k} = {bound};",
                f"{k2} = {bound};",
                f"while {k} > 0 && {k2} > 0 {{",
                f"if {pick} {{ {k} = {k} - 1; }} else {{ {k2} = {k2} - {step}; }}",
                *body,
                "}",
            ]
        if shape == "halve":  # halved down to 0: the logarithmic bound
            return [f"{k} = {bound};", f"while {k} > 0 {{", f"{k} = {k} / {step} / 2;", *body, "}"]
        if shape == "break":  # the same counter, left by an early break (ranking read off it)
            head = ["while true {", f"if {k} >= {bound} {{ break; }}"]
            return [f"{k} = 0;", *head, f"{k} = {k} + {step};", *body, "}"]
        return [f"{k} = 0;", f"while {k} < {bound} {{", f"{k} = {k} + {step};", *body, "}"]


@st.composite
def kernels(draw: st.DrawFn) -> Kernel:
    with_helper = draw(st.booleans())
    g = _Gen(draw, with_helper, MAIN_EXTRAS, ("flag", "!flag", "n > 0"), "")
    g.targets = list(INT_VARS)
    lines = ['module "loopgen" version "1.0.0";']
    if with_helper:
        hg = _Gen(draw, False, (), (), "h")
        hg.targets = ["r"]
        body = hg.block(["a", "b", "r"], 1, False, 2)
        lines += [
            "fn helper(a I32, b I32) -> I32 {",
            "r = a;",
            "for j in 0 .. math.min(b, 20) {",
            "r = r + 1;",
            "}",
            *body,
            "return r;",
            "}",
        ]
    main = g.block(list(INT_VARS), 0, False, 5)
    lines += [
        f"entrypoint fn main({PARAMS}) -> I32 {{",
        "acc = 0;",
        "t = 1;",
        "ys = list.empty[I32]();",
        'w = "";',
        *main,
        "return acc + list.count(ys) + string.length(w);",
        "}",
    ]
    source = "\n".join(lines) + "\n"
    limits = {
        "maxFuel": draw(st.sampled_from([300, 2_000, 20_000, 100_000])),
        "maxLoopIterations": draw(st.sampled_from([40, 1_000, 100_000])),
        "maxWallTimeMs": 60_000,
    }
    policy: dict[str, Any] = {"limits": limits}
    if draw(st.booleans()):
        bounds: dict[str, list[int]] = {}
        for name, hi in (("n", 50), ("m", 20), ("xs", 30), ("s", 12)):
            if draw(st.booleans()):
                bounds[name] = [0 if name != "m" else -5, draw(st.integers(1, hi))]
        if bounds:
            policy["inputBounds"] = {"main": bounds}
    ints = st.one_of(st.integers(-5, 40), st.integers(-(2**31), 2**31 - 1))
    one = st.tuples(
        ints,
        ints,
        st.lists(st.integers(-100, 100), max_size=25),
        st.text(alphabet="abc", max_size=15),
        st.booleans(),
    )
    inputs = tuple(draw(st.lists(one, min_size=1, max_size=4)))
    return Kernel(source, policy, inputs)
