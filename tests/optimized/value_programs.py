"""Kernels for the value kinds the other fast-form generators never make (issue 16): F64 arithmetic
and the F64 math built-ins at their edges, records (built, read, nested, kept in lists and maps,
compared), and maps keyed by SandboxPath, SandboxUri and I64 that a loop sets and removes from.

Why a third generator: ``chunk_programs`` and ``edge_programs`` fold everything into an I32, so a
backend that lost the sign of a zero, rounded a tie the other way or compared two records by
identity would still agree with the reference on the result. These kernels return
``Record<I32, F64>`` - the I32 fold and an F64 kept as computed - so the typed encoding of the result
shows ``-0.0`` against ``0.0`` and every last bit. The F64 values start at the edges that break
naive code: signed zeros, subnormals, the largest finite double (so a product or a sum overflows to
a non-finite result, ``R-ARITH-NOT-FINITE``), ties at .5 for ``math.round`` (to even), integers past
2**53 through ``numeric.toF64`` (nearest, ties to even), and division and ``%`` by a zero that an
argument picks. Every kernel is still ``main(n I32, m I32, k I32)``, so ``chunk_fuzz`` sweeps it
under fuel budgets and every limit as it does the others.
"""

from __future__ import annotations

import re

from .chunk_programs import ARGUMENT_EDGES, COUNTS, Chooser, Kernel
from .edge_programs import EdgeBuilder

F64_EDGES = (
    "0.0",
    "-0.0",
    "0.5",
    "-0.5",
    "1.5",
    "2.5",
    "-2.5",
    "0.49999999999999994",
    "4503599627370495.5",
    "9007199254740993.0",
    "5e-324",
    "2.2250738585072014e-308",
    "1.7976931348623157e308",
    "-1e308",
    "1e-300",
    "3.141592653589793",
    "1e22",
)
"""F64 literals at the edges: signed zeros, round-half ties (to even), the largest double below a
.5 tie, 2**52 - 0.5 (the last half), 2**53 + 1 (not representable), the smallest subnormal and
normal, the largest finite double, a tiny one whose square underflows, pi (the trig built-ins) and
a power of ten past 2**53."""

I64_EDGES = (
    "9223372036854775807L",
    "-9223372036854775808L",
    "9007199254740993L",
    "-9007199254740993L",
    "4611686018427387905L",
)
"""I64 values ``numeric.toF64`` must round to the nearest double (ties to even) at the ends."""

UNARY = ("math.sqrt", "math.floor", "math.ceil", "math.round", "math.sin", "math.cos", "math.tan")
"""The F64 math built-ins (``math.sqrt`` of a negative is ``R-ARITH-NOT-FINITE``)."""

PATHS = (
    'path"a"',
    'path"b/c"',
    'path"A.txt"',
    'path"\\uff61"',
    'path"\\ud83d\\ude00"',
    'path"a/b"',
)
"""SandboxPath keys: ordinal UTF-16 order puts the astral character before U+FF61, code-point order
after it (``map.keys`` lists keys in the former)."""

URIS = (
    'uri"https://example.com/x"',
    'uri"http://a"',
    'uri"https://example.com"',
    'uri"https://example.com/\\uff61"',
    'uri"https://example.com/\\ud83d\\ude00"',
)
"""SandboxUri keys, with the same ordinal-order trap as ``PATHS``."""


EARLY_RETURN = re.compile(r"return acc \+ (\w+);")
"""The early exit ``Builder.loop`` writes for an I32 kernel."""


class ValueBuilder(EdgeBuilder):
    """The blocks of this generator; ``fkeep`` is the F64 the kernel returns beside ``acc`` (it starts
    at 0.5, so a returned ``-0.0`` was computed)."""

    def f64(self, names: tuple[str, ...], depth: int) -> str:
        """A random F64 expression over ``names`` (F64 locals), the arguments and the edges."""
        c = self.c
        if depth == 0 or c.chance(30):
            return c.choice(
                (
                    *names,
                    *names,
                    *F64_EDGES,
                    "numeric.toF64(n)",
                    "numeric.toF64(m)",
                    "numeric.toF64(k - m)",
                    f"numeric.toF64({c.choice(I64_EDGES)})",
                    "numeric.toF64(numeric.toI64(m) * 4294967296L + 1L)",
                )
            )
        roll = c.choice(("unary", "neg", "op", "op", "op"))
        if roll == "unary":
            return f"{c.choice(UNARY)}({self.f64(names, depth - 1)})"
        if roll == "neg":
            return f"-({self.f64(names, depth - 1)})"
        op = c.choice(("+", "-", "*", "/", "%"))
        return f"({self.f64(names, depth - 1)} {op} {self.f64(names, depth - 1)})"

    def compare(self, left: str, right: str) -> str:
        """An I32 step on an F64 comparison (IEEE: ``-0.0 == 0.0``)."""
        op = self.c.choice(("<", "<=", "==", "!=", ">", ">="))
        return f"if {left} {op} {right} {{ acc = acc + 1; }} else {{ acc = acc + 2; }}"

    def float_block(self) -> str:
        """An F64 local carried round a loop through the F64 built-ins, compared, kept in a list,
        and kept for the result."""
        c = self.c
        x = self.fresh()
        f, g, i, fs = f"f{x}", f"g{x}", f"i{x}", f"fs{x}"
        fi = f"numeric.toF64({i})"
        steps = [
            f"{g} = {self.f64((f, fi), 2)};",
            f"{f} = {c.choice((self.f64((f, g, fi), 2), f'math.round({g} / 2.0)', f'{f} * 0.5 + {g}', g, f'{f} * 1e300 + {g}'))};",
        ]
        if c.chance(50):
            steps.append(self.compare(f, c.choice((g, *F64_EDGES[:4]))))
        if c.chance(40):
            steps.append(f"{fs} = list.add({fs}, {f});")
        loop = self.loop(" ".join(steps), i)
        pre = f"{f} = {c.choice(F64_EDGES)}; {g} = {c.choice(F64_EDGES)}; {fs} = list.empty[F64]();"
        fold = (
            f"fkeep = {c.choice((f, g, f'{f} + fkeep', f'{f} * fkeep'))};"
            f" acc = (acc + list.count({fs}) * 3) % 1000000;"
            f" if list.count({fs}) > 0 {{ fkeep = list.get({fs}, list.count({fs}) - 1); }}"
            f" if {fs} == list.of({f}) {{ acc = acc + 5; }}"
        )
        return self.finish("f64/loop", pre, loop, fold)

    def rounding_block(self) -> str:
        """The rounding built-ins and ``numeric.toF64`` straight on edge values (no loop): each result
        kept so the sign of a zero and the tie-breaking show in ``fkeep``."""
        c = self.c
        x = self.fresh()
        h = f"h{x}"
        value = c.choice(
            (
                f"{c.choice(UNARY)}({c.choice(F64_EDGES)})",
                f"{c.choice(UNARY[1:4])}(-({c.choice(F64_EDGES)}))",
                f"math.round(numeric.toF64(n) + {c.choice(('0.5', '-0.5', '0.49999999999999994', '2.5'))})",
                f"numeric.toF64({c.choice(I64_EDGES)}) {c.choice(('-', '+', '/'))} numeric.toF64({c.choice(I64_EDGES)})",
                f"{c.choice(F64_EDGES)} {c.choice(('*', '/', '%', '+'))} {c.choice(F64_EDGES)}",
                "numeric.toF64(m) % numeric.toF64(k)",
                "-(numeric.toF64(m) * 0.0)",
            )
        )
        return self.finish(
            "f64/edge", f"{h} = {value};", self.compare(h, c.choice(F64_EDGES[:2])), f"fkeep = {h};"
        )

    def record_block(self) -> str:
        """Records built in a loop (F64, text and list fields, a nested record), kept in a list and
        as map values, read back field by field and compared with ``==`` / ``!=`` against an older
        one (structural, IEEE for F64 fields)."""
        c = self.c
        x = self.fresh()
        i, r, rs, mr, old = f"i{x}", f"r{x}", f"rs{x}", f"mr{x}", f"o{x}"
        kind = "Record<I32, F64, Record<String, List<I32>>>"
        inner = c.choice(
            (
                f'record.new[Record<String, List<I32>>]("a", list.of({i}))',
                f"record.new[Record<String, List<I32>>](int32.toStringInvariant({i} % 3), list.empty[I32]())",
                f"record.get({r}, 2)",
            )
        )
        field = c.choice((f"numeric.toF64({i}) * -0.0", f"numeric.toF64({i} % 2) - 0.5", "fkeep", "0.0"))
        build = f"{r} = record.new[{kind}]({c.choice((i, f'{i} * m', f'{i} % 3'))}, {field}, {inner});"
        steps = [build]
        if c.chance(60):
            steps.append(f"{rs} = list.add({rs}, {r});")
        if c.chance(60):
            steps.append(f"{mr} = map.set({mr}, {i} % {c.choice(('3', '7', 'm'))}, {r});")
        if c.chance(40):
            steps.append(f"if {i} == k {{ {old} = {r}; }}")
        if c.chance(40):
            steps.append(f"if {r} == {old} {{ acc = acc + 1; }}")
        pre = (
            f'{r} = record.new[{kind}](0, -0.0, record.new[Record<String, List<I32>>]("", list.empty[I32]()));'
            f' {old} = record.new[{kind}](0, 0.0, record.new[Record<String, List<I32>>]("", list.empty[I32]()));'
            f" {rs} = list.empty[{kind}](); {mr} = map.empty[Map<I32, {kind}>]();"
        )
        fold = (
            f"acc = (acc + record.get({r}, 0) % 1000 + list.count({rs}) * 3 + map.count({mr}) * 5) % 1000000;"
            f" if {r} != {old} {{ acc = acc + 7; }}"
            f" acc = (acc + string.length(record.get(record.get({old}, 2), 0))"
            f" + list.count(record.get(record.get({r}, 2), 1))) % 1000000;"
            f" fkeep = record.get({c.choice((r, old))}, 1);"
            f" for s{x} in 0 .. list.count({rs}) {{ if list.get({rs}, s{x}) == {old} {{ acc = acc + 11; }} }}"
            f" if map.containsKey({mr}, 1) {{ fkeep = record.get(map.get({mr}, 1), 1); }}"
        )
        return self.finish("record", pre, self.loop(" ".join(steps), i), fold)

    def keyed_block(self) -> str:
        """A map keyed by SandboxPath, SandboxUri or I64 (ends of the range) that the loop sets and
        removes from (a missing key too), read back through ``map.keys`` in canonical order."""
        c = self.c
        x = self.fresh()
        mp, i, ks = f"mp{x}", f"i{x}", f"ks{x}"
        kind = c.choice(("SandboxPath", "SandboxUri", "I64"))
        pool = {"SandboxPath": PATHS, "SandboxUri": URIS, "I64": I64_EDGES}[kind]
        size = len(pool)
        raw = c.choice((f"{i} % {size}", f"({i} * 7 + k % {size} + {size}) % {size}", f"{i} * 3 % {size}"))
        key = f"list.get(pool{x}, {raw})"
        gone = f"list.get(pool{x}, {c.choice(('0', str(size - 1), f'(k % {size} + {size}) % {size}'))})"
        steps = self.set_and_remove(mp, i, key, gone)
        kept = f" if {i} == k {{ kq{x} = {mp}; }}" if c.chance(30) else ""
        pre = f"pool{x} = list.of({', '.join(pool)}); {mp} = map.empty[Map<{kind}, I32>](); kq{x} = {mp};"
        fold = (
            f"{ks} = map.keys({mp}); acc = (acc + map.count({mp}) * 3 + map.count(kq{x}) * 7) % 1000000;"
            f" for r{x} in 0 .. list.count({ks}) {{"
            f" acc = (acc * 3 + map.get({mp}, list.get({ks}, r{x})) % 1000) % 1000000;"
            f" for q{x} in 0 .. {size} {{ if list.get(pool{x}, q{x}) == list.get({ks}, r{x}) {{ acc = (acc * 7 + q{x}) % 1000000; }} }} }}"
            f" if kq{x} == {mp} {{ acc = acc + 13; }}"
        )
        return self.finish(f"keyed/{kind}", pre, self.loop(" ".join(steps) + kept, i, canonical=50), fold)


WEIGHTS = {"float_block": 2, "rounding_block": 1, "record_block": 2, "keyed_block": 2}
BLOCKS = tuple(name for name, weight in WEIGHTS.items() for _ in range(weight))
"""The ``ValueBuilder`` blocks a kernel draws from, each as often as its weight."""


def build_value_kernel(c: Chooser) -> Kernel:
    """One kernel of one to three blocks returning ``Record<I32, F64>``, and its input vectors."""
    builder = ValueBuilder(c)
    blocks = [getattr(builder, c.choice(BLOCKS)) for _ in range(c.choice((1, 1, 2, 3)))]
    body = "\n    ".join(block() for block in blocks)
    # the loops' early exits (``Builder.loop``) return the I32 fold: return it with ``fkeep``
    body = EARLY_RETURN.sub(r"return record.new[Record<I32, F64>](acc + \1, fkeep);", body)
    text = (
        'module "valuefuzz" version "1.0.0";\n'
        + "".join(builder.functions)
        + "entrypoint fn main(n I32, m I32, k I32) -> Record<I32, F64> {\n"
        + f"    acc = 0; fkeep = 0.5;\n    {body}\n    return record.new[Record<I32, F64>](acc, fkeep);\n}}\n"
    )
    return Kernel(text, [_vector(c) for _ in range(c.choice((1, 2, 3)))], builder.blocks)


def _vector(c: Chooser) -> list[int]:
    """``n, m, k``: a loop length up to 65 (the records and keyed maps copy per iteration), ``m``
    and ``k`` at the argument edges or near ``n``."""
    n = c.choice(COUNTS[:10])
    return [n, c.choice(ARGUMENT_EDGES), c.choice((*ARGUMENT_EDGES, n - 1, n // 2))]
