"""Kernels aimed at the optimized backend's fast forms (issue 16): owned lists, maps and texts,
pre-checked map chunks, fast text and list chunks, value ranges.

Why a generator of its own: the conformance generator (``test_generated_agreement``) draws general
well-typed programs, which rarely hold the exact loop shapes those forms take, and never the
edges they have to survive. Every kernel here is a ``main(n I32, m I32, k I32) -> I32`` built from
blocks; each block is one loop shape of a fast form with knobs that either keep the form or are
meant to break its proof obligations:

* aliasing - the value kept in another local before, inside or after the loop, passed to a
  function, stored in a list, returned from a private function and then grown again;
* early exits - ``break``, ``continue`` and ``return`` at an argument-chosen iteration;
* nesting - a loop inside the owning loop, or the owning loop inside another;
* edge values - keys that collide, negative and text keys, counters near the I32/I64 limits,
  ``MIN / -1`` and ``MIN % -1``, division by an argument that reaches zero mid-chunk;
* loop bounds from the arguments (so the same kernel runs zero, one and many chunks).

A block ends by folding what it built (counts, an alias's count, an item) into ``acc`` so every
aliasing mistake changes the result. The choices go through ``Chooser`` so one builder serves both
Hypothesis (shrinking, in the test run) and a seeded ``random.Random`` (the long local runs).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

HELPERS = """fn cnt(v List<I32>) -> I32 { return list.count(v); }
fn mcnt(v Map<I32, I32>) -> I32 { return map.count(v); }
fn slen(s String) -> I32 { return string.length(s); }
fn grown(v List<I32>, x I32) -> List<I32> { return list.add(v, x); }
"""
"""Private functions the blocks pass their values to (an escape the ownership proofs must see)."""

ARGUMENT_EDGES = (0, 1, -1, 2, 3, 7, 17, 46341, 65536, 2147483647, -2147483648, 1000000, -3)
"""Values for ``m`` and ``k``: the signs, the overflow points of products and the I32 ends."""

EDGE_CONSTANTS = (
    "0",
    "1",
    "-1",
    "2",
    "7",
    "1000",
    "46340",
    "46341",
    "65535",
    "65536",
    "2147483647",
    "-2147483648",
)
"""Constants of the generated arithmetic: the signs and the I32 ends and square roots."""

COUNTS = (0, 1, 2, 5, 31, 32, 33, 63, 64, 65, 200, 2047, 2048, 2049, 2100)
"""Loop lengths around the chunk sizes the backend reserves (the full chunk is 2,048)."""


class Chooser(Protocol):
    def choice(self, options: Sequence[T]) -> T: ...

    def chance(self, percent: int) -> bool: ...


class RandomChooser:
    """Choices from a seeded ``random.Random`` (the long runs; a seed reproduces a kernel)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choice(self, options: Sequence[T]) -> T:
        return self.rng.choice(options)

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent


class DrawChooser:
    """Choices drawn from Hypothesis (the test run; a failure shrinks to a small kernel)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def choice(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) < percent


@dataclass
class Kernel:
    """One generated kernel, the input vectors to run it on, and which blocks it holds."""

    text: str
    vectors: list[list[int]]
    blocks: list[str] = field(default_factory=list)


def _bound(c: Chooser) -> str:
    """A loop end read from the arguments (so one kernel runs no, one and many chunks)."""
    return c.choice(("n", "n", "n", "n + 1", "n * 2 % 3001", "5", "n - k % 3"))


def _exit(c: Chooser, i: str) -> str:
    """An early exit at an argument-chosen iteration, or nothing."""
    return c.choice(
        (
            "",
            "",
            f"if {i} == k {{ break; }}",
            f"if {i} % 5 == 3 {{ continue; }}",
            f"if {i} == k {{ return acc + {i}; }}",
            f"if {i} == k + 2048 {{ break; }}",
        )
    )


def _i32_value(c: Chooser, i: str) -> str:
    """An item or map value: plain, overflowing at an argument-chosen iteration, or faulting."""
    return c.choice(
        (
            i,
            f"{i} * m",
            f"{i} * m % 100",
            f"m - {i}",
            f"{i} + m",
            f"{i} * 2147483647",
            f"m / ({i} - k)",
            f"m % ({i} - k)",
            "(0 - 2147483647 - 1) / m",
            "(0 - 2147483647 - 1) % m",
            f"{i} * 65536 * m",
            f"0 - {i} % 50000",
            "acc",
        )
    )


def _alias_steps(alias: str, i: str, value: str, kept: str, grow: str, measure: str) -> tuple[str, str, str]:
    """What keeps ``value`` in ``kept`` for ``alias`` (before the loop, inside it, after it): the
    alias must keep the version it was given when ``value`` grows on (``grow``, or passed to the
    helper ``measure`` first)."""
    before = f" {kept} = {value};" if alias == "before" else ""
    inside = f" if {i} == k {{ {kept} = {value}; }}" if alias == "inside" else ""
    after = {
        "after": f"{kept} = {value}; {value} = {grow};",
        "call": f"acc = acc + {measure}({value}); {value} = {grow};",
    }.get(alias, "")
    return before, inside, after


class Builder:
    """Builds one kernel block by block; ``index`` keeps each block's locals apart."""

    def __init__(self, c: Chooser) -> None:
        self.c = c
        self.index = 0
        self.blocks: list[str] = []
        self.functions: list[str] = []

    def fresh(self) -> int:
        self.index += 1
        return self.index

    def loop(self, body: str, i: str, canonical: int = 35) -> str:
        """``body`` inside a forRange or a while over ``i`` (sometimes inside an outer loop)."""
        c = self.c
        end = _bound(c)
        if c.chance(canonical):  # the canonical shape each fast form was written for
            return f"for {i} in 0 .. {end} {{ {body} }}"
        start = c.choice(("0", "0", "0", "m % 7", "0 - 3"))
        exit_ = _exit(c, i)
        if c.chance(25):
            # the step comes first, so a ``continue`` cannot skip it
            text = f"{i} = {start};\n    while {i} < {end} {{ {i} = {i} + 1; {exit_} {body} }}"
        else:
            text = f"for {i} in {start} .. {end} {{ {exit_} {body} }}"
        if c.chance(15):
            o = f"o{self.fresh()}"
            text = f"for {o} in 0 .. {c.choice(('2', '3', 'k % 4'))} {{ {text} }}"
        return text

    def list_block(self) -> str:
        c = self.c
        x = self.fresh()
        xs, ys, i = f"xs{x}", f"ys{x}", f"i{x}"
        wide = c.chance(25)  # I64 items: overflow at the I64 ends, no helper takes them
        item = _i32_value(c, i)
        if wide:
            item = c.choice(
                (
                    f"numeric.toI64({item})",
                    f"numeric.toI64({i}) * 4611686018427387904L",
                    f"numeric.toI64(m) * 4294967296L * numeric.toI64({i} - k)",
                    "(0L - 9223372036854775807L - 1L) / numeric.toI64(m)",
                )
            )
        kind = "I64" if wide else "I32"
        small = "L" if wide else ""
        add = f"{xs} = list.add({xs}, {item});"
        extra = c.choice(
            (
                "",
                "",
                f"t{x} = m / ({i} - k);",
                f"acc = (acc + {i} * m) % 1000;",
                f"if {i} > k {{ acc = acc + 1; }}",
                f"t{x} = ({i} + m) * ({i} - k);",
            )
        )
        add = c.choice((f"{extra} {add}", f"{add} {extra}"))
        if c.chance(15):
            inner = f"numeric.toI64(j{x})" if wide else f"j{x}"
            add += f" for j{x} in 0 .. 3 {{ {xs} = list.add({xs}, {inner}); }}"
        aliases = ("none", "none", "before", "inside", "after", "stored", "read")
        alias = c.choice(aliases if wide else (*aliases, "call", "grown"))
        pre = f"{xs} = list.empty[{kind}](); {ys} = list.empty[{kind}]();"
        if c.chance(20):
            pre = f"{xs} = list.of(1{small}, 2{small}, 3{small}); {ys} = list.empty[{kind}]();"
        before, inside, post = _alias_steps(alias, i, xs, ys, f"list.add({xs}, 7{small})", "cnt")
        pre += before
        add += inside
        if alias == "read":
            add += f" if list.get({xs}, list.count({xs}) - 1) > 0{small} {{ acc = (acc + 1) % 100000; }}"
        elif alias == "grown":
            add += f" if {i} == k {{ {ys} = grown({xs}, 9); }}"
        body = self.loop(add, i)
        if alias == "stored":
            post = f"ls{x} = list.of({xs}); {xs} = list.add({xs}, 7{small}); {ys} = list.get(ls{x}, 0);"
        last = f"list.get({ys}, list.count({ys}) - 1)"
        fold = (
            f"acc = (acc + list.count({xs}) * 3 + list.count({ys}) * 5) % 1000000;"
            f" if list.count({ys}) > 0 {{ "
            + (f"if {last} > 0L {{ acc = acc + 1; }}" if wide else f"acc = (acc + {last}) % 1000000;")
            + " }"
        )
        if c.chance(40):
            j = f"s{x}"
            got = f"list.get({xs}, {j})"
            step = (
                f"if {got} % 3L == 1L {{ acc = acc + 1; }}"
                if wide
                else f"acc = (acc + {got} % 1000 * {c.choice(('1', 'm', '3'))}) % 1000000;"
            )
            fold += f" for {j} in 0 .. list.count({xs}) {{ {step} }}"
        self.blocks.append(f"list/{kind}/{alias}")
        return f"{pre}\n    {body}\n    {post} {fold}"

    def map_block(self) -> str:
        c = self.c
        x = self.fresh()
        mp, mq, i, key = f"mp{x}", f"mq{x}", f"i{x}", f"key{x}"
        kind = c.choice(("I32", "I32", "String", "I64", "Words"))
        raw_key = c.choice(
            (
                f"{i} % 17",
                f"{i} * 31 % 17",
                f"{i} % m",
                f"0 - {i} % 5",
                f"{i}",
                f"{i} % 1",
                f"{i} * 65536 % 7",
            )
        )
        key_type, key_expr, value_type, wrap = {
            "I32": ("I32", raw_key, "I32", "{}"),
            "String": ("String", f"int32.toStringInvariant({raw_key})", "I32", "{}"),
            "I64": ("I64", f"numeric.toI64({raw_key}) * 4294967296L", "I64", "numeric.toI64({})"),
            "Words": ("String", f"list.get(words{x}, ({raw_key}) % 5)", "I32", "{}"),
        }[kind]
        value = wrap.format(_i32_value(c, i))
        step = wrap.format(c.choice(("1", "m", "k", "2147483647")))
        update = c.choice(
            (
                f"if map.containsKey({mp}, {key}) {{ {mp} = map.set({mp}, {key}, map.get({mp}, {key}) + {step}); }}"
                f" else {{ {mp} = map.set({mp}, {key}, {value}); }}",
                f"{mp} = map.set({mp}, {key}, {value});",
                f"{mp} = map.set({mp}, {key}, {wrap.format(f'map.count({mp})')});",
            )
        )
        body = f"{key} = {key_expr}; {update}"
        if c.chance(20):
            miss = {"I32": "999", "I64": "999L"}.get(kind, '"zz"')
            body += f" if {i} == k {{ t{x} = map.get({mp}, {miss}); }}"
        alias = c.choice(("none", "none", "none", "none", "before", "inside", "after", "call"))
        if alias == "call" and kind != "I32":
            alias = "after"
        pre = f"{mp} = map.empty[Map<{key_type}, {value_type}>](); {mq} = map.empty[Map<{key_type}, {value_type}>]();"
        if kind == "Words":  # text keys the loop reads from a list, not makes (a text-keyed owned map)
            pre += f' words{x} = list.of("a", "bb", "\\u00e9", "\\ud834\\udd1e", "the");'
        if alias == "call":
            grow = f"map.set({mp}, 123456, 1)"
        else:
            grow = f"map.set({mp}, {key_expr.replace(i, '1')}, {wrap.format('5')})"
        before, inside, post = _alias_steps(alias, i, mp, mq, grow, "mcnt")
        loop = self.loop(body + inside, i, canonical=60)  # an owned map wants no nesting, no return
        pre += before
        fold = f"acc = (acc + map.count({mp}) * 3 + map.count({mq}) * 5) % 1000000;"
        if kind == "I32":
            fold += f" if map.containsKey({mq}, 0) {{ acc = (acc + map.get({mq}, 0) % 1000) % 1000000; }}"
        self.blocks.append(f"map/{kind}/{alias}")
        return f"{pre}\n    {loop}\n    {post} {fold}"

    def text_block(self) -> str:
        c = self.c
        x = self.fresh()
        s, s2, i = f"s{x}", f"u{x}", f"i{x}"
        piece = c.choice(
            (
                f"int32.toStringInvariant({i})",
                f"int32.toStringInvariant({i} * m)",
                f"int32.toStringInvariant({i} - {i} % 10)",
                "int32.toStringInvariant(m)",
                '"ab"',
                '"\\u00e9\\ud834\\udd1e"',
                f"w{x}",
            )
        )
        start = c.choice(('""', '""', '"\\ud834\\udd1e"', '"xyz"'))
        alias = c.choice(("none", "none", "before", "inside", "after", "call"))
        pre = f'{s} = {start}; {s2} = ""; w{x} = "pq";'
        before, inside, post = _alias_steps(alias, i, s, s2, f'string.concatBudgeted({s}, "!")', "slen")
        pre += before
        loop = self.loop(f"{s} = string.concatBudgeted({s}, {piece});{inside}", i)
        fold = f"acc = (acc + string.length({s}) * 3 + string.length({s2}) * 5) % 1000000;"
        self.blocks.append(f"text/{alias}")
        return f"{pre}\n    {loop}\n    {post} {fold}"

    def arith_block(self) -> str:
        c = self.c
        x = self.fresh()
        a, i = f"a{x}", f"i{x}"
        body = c.choice(
            (
                f"{a} = ({a} - {i}) % 1000; b{x} = {a} * 2000000; c{x} = {a} * k; {a} = (b{x} + c{x}) % 1000;",
                f"{a} = ({a} + {i} * {i}) % 100000;",
                f"{a} = {a} + {i} * m;",
                f"{a} = ({a} * 3 + {i}) % 1000; {a} = {a} - m / ({i} - k);",
                f"{a} = ({a} + (0 - 2147483647 - 1) / (m + {i} - {i})) % 1000;",
                f"{a} = ({a} + (0 - 2147483647 - 1) % (m + {i} - {i})) % 1000;",
                f"x{x} = 0 - {i} % 50000; y{x} = {i} % 1000000; {a} = ({a} + x{x} * y{x} % 1000) % 1000;",
                f"{a} = {a} + {i};",
                f"l{x} = numeric.toI64({i}) * numeric.toI64(m) * 4294967296L; {a} = ({a} + numeric.toI64(l{x} % 1000L)) % 1000;",
            )
        )
        if "numeric.toI64(l" in body:
            body = body.replace(f"{a} = ({a} + numeric.toI64(l{x} % 1000L)) % 1000;", f"z{x} = l{x} % 1000L;")
            body += f" {a} = ({a} + {i}) % 1000;"
        loop = self.loop(body, i)
        self.blocks.append("arith")
        return f"{a} = 0;\n    {loop}\n    acc = (acc + {a}) % 1000000;"

    def copy_block(self) -> str:
        """A list read item by item (a list-read view) while another is built from it: reads at the
        counter and past it (the view's range test), an overflow or a zero divisor mid-chunk."""
        c = self.c
        x = self.fresh()
        src, dst, i = f"src{x}", f"dst{x}", f"i{x}"
        fill = f"{src} = list.empty[I32](); for f{x} in 0 .. n {{ {src} = list.add({src}, f{x} * 7 % 1000 - 3); }}"
        index = c.choice((i, i, f"{i} + 1", f"{i} - 1", "k"))
        item = c.choice(
            (
                f"list.get({src}, {index}) * m",
                f"list.get({src}, {index}) + {i} * 65536",
                f"m / list.get({src}, {index})",
                f"list.get({src}, {index}) % m",
                f"list.get({src}, {index})",
            )
        )
        end = c.choice((f"list.count({src})", "n", "n + 1", f"list.count({src}) - 1"))
        exit_ = _exit(c, i) if c.chance(30) else ""
        loop = (
            f"{dst} = list.empty[I32](); for {i} in 0 .. {end} {{ {exit_} {dst} = list.add({dst}, {item}); }}"
        )
        fold = f"acc = (acc + list.count({dst}) * 3) % 1000000; if list.count({dst}) > 0 {{ acc = (acc + list.get({dst}, 0) % 1000) % 1000000; }}"
        self.blocks.append("list/copy")
        return f"{fill}\n    {loop}\n    {fold}"

    def expression(self, names: Sequence[str], depth: int) -> str:
        """A random I32 expression over ``names`` and edge constants (value-range analysis input)."""
        c = self.c
        if depth == 0 or c.chance(30):
            return c.choice((*names, *names, *EDGE_CONSTANTS))
        if c.chance(10):
            return f"(0 - {self.expression(names, depth - 1)})"
        op = c.choice(("+", "-", "*", "/", "%", "%", "+"))
        return f"({self.expression(names, depth - 1)} {op} {self.expression(names, depth - 1)})"

    def range_block(self) -> str:
        """Locals carried round a loop through random arithmetic and a private function: the
        whole-plan value ranges (``value_ranges``) drop the checks of what they prove cannot
        overflow, so a wrong interval shows as a value where the reference faults."""
        c = self.c
        x = self.fresh()
        a, b, i, h = f"a{x}", f"b{x}", f"i{x}", f"h{x}"
        self.functions.append(f"fn {h}(p I32, q I32) -> I32 {{ return {self.expression(('p', 'q'), 2)}; }}\n")
        names = (a, b, i, "m", "k")
        steps = [
            f"{a} = {self.expression(names, 3)};",
            f"{b} = {c.choice((self.expression(names, 2), f'{h}({a}, {i})', f'{b} + {i}'))};",
        ]
        if c.chance(40):
            steps.append(f"{a} = {a} % {c.choice(('1000', '46341', '65536', 'm'))};")
        if c.chance(30):
            steps.append(f"if {b} > 1000000 {{ break; }}")
        start_a, start_b = c.choice(EDGE_CONSTANTS), c.choice(("0", "1", "m"))
        loop = self.loop(" ".join(steps), i)
        self.blocks.append("ranges")
        return (
            f"{a} = {start_a}; {b} = {start_b};\n    {loop}\n"
            f"    acc = (acc + {h}({a} % 1000, {b} % 1000) % 1000 + {a} % 1000 + {b} % 1000) % 1000000;"
        )

    def returned_block(self) -> str:
        """A list built in a private function, returned, then grown by the caller (the callee's
        owned buffer must not be handed out as a value that changes)."""
        x = self.fresh()
        self.blocks.append("list/returned")
        return (
            f"r{x} = built(n, m); q{x} = list.add(r{x}, 1); r{x} = list.add(r{x}, 2);"
            f" acc = (acc + list.count(r{x}) + list.get(q{x}, list.count(q{x}) - 1) * 7"
            f" + list.get(r{x}, list.count(r{x}) - 1)) % 1000000;"
        )


BUILT = """fn built(n I32, m I32) -> List<I32> {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i * m % 100); }
    return xs;
}
"""


def build_kernel(c: Chooser) -> Kernel:
    """One kernel of one to three blocks and its input vectors."""
    builder = Builder(c)
    makers = {
        "list": builder.list_block,
        "map": builder.map_block,
        "text": builder.text_block,
        "arith": builder.arith_block,
        "returned": builder.returned_block,
        "copy": builder.copy_block,
        "ranges": builder.range_block,
    }
    count = c.choice((1, 1, 2, 3))
    parts = [
        makers[
            c.choice(
                (
                    "list",
                    "list",
                    "map",
                    "map",
                    "text",
                    "text",
                    "arith",
                    "returned",
                    "copy",
                    "ranges",
                    "ranges",
                )
            )
        ]()
        for _ in range(count)
    ]
    body = "\n    ".join(parts)
    text = (
        'module "chunkfuzz" version "1.0.0";\n'
        + HELPERS
        + BUILT
        + "".join(builder.functions)
        + f"entrypoint fn main(n I32, m I32, k I32) -> I32 {{\n    acc = 0;\n    {body}\n    return acc;\n}}\n"
    )
    vectors = []
    for _ in range(c.choice((1, 2, 3))):
        n = c.choice(COUNTS)
        k = c.choice((*ARGUMENT_EDGES, n - 1, n // 2, 2049, 2050))
        vectors.append([n, c.choice(ARGUMENT_EDGES), k])
    return Kernel(text, vectors, builder.blocks)


@st.composite
def kernels(draw: st.DrawFn) -> Kernel:
    """Hypothesis strategy over ``build_kernel``."""
    return build_kernel(DrawChooser(draw))
