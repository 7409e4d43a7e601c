"""Kernels for what ``chunk_programs`` does not reach (issue 16): maps with Bool keys and
``map.remove`` / ``map.keys``, ``list.slice``, the text and math built-ins, loop-free predicates
(the fast lane's small fuel starts, ``runtime/optimized/small_fuel.py``) and chains of nested calls
(``maxCallDepth``).

Why a second generator: ``chunk_programs`` aims every block at one loop shape of a fast form; these
blocks aim at the built-ins and entry shapes it never emits, so the same sweeps (``chunk_fuzz``)
hold them to the reference too. Every kernel is still ``main(n I32, m I32, k I32) -> I32``, and a
block folds what it computed into ``acc`` so a wrong value shows. F64 and Guid keys are not kernels
at all (the validator refuses them as map keys, ``MAP_KEY_SCALARS``), so they have nothing for a
backend to disagree on.
"""

from __future__ import annotations

from .chunk_programs import ARGUMENT_EDGES, COUNTS, EDGE_CONSTANTS, Builder, Chooser, Kernel

TEXTS = ('""', '"a"', '"ab,cd"', '"\\u00e9\\ud834\\udd1e"', '"x,y,,z"', '"Straße"', '"12"', '"-7"', '" 3"')
"""Texts the text built-ins start from: empty, separators, surrogate pairs, case-mapping edges, numbers."""

SEPARATORS = ('","', '""')
"""Separators of ``string.split``: a comma and the empty text."""

FORMATS = ('"{0}-{1}"', '"{0}"', '"{2}"', '"{{0}}"', '"{"')
"""Templates of ``format.simple``: both holes, one, one past the arguments, escaped, unclosed."""

BRANCH_DEPTH = 3
"""How deep the loop-free predicates nest their ``if``s (only the outermost level is long)."""


class EdgeBuilder(Builder):
    """The blocks of this generator (the loop shapes come from ``Builder.loop``)."""

    def finish(self, name: str, *lines: str) -> str:
        """A block's statements, one part a line, recorded under ``name`` (for the tally)."""
        self.blocks.append(name)
        return "\n    ".join(lines)

    def set_and_remove(self, mp: str, i: str, key: str, gone: str) -> list[str]:
        """A loop body's steps on map ``mp``: set ``key`` to a value (that may fault), and before or
        after it remove ``key`` on some iterations, when present, or remove ``gone``."""
        c = self.c
        value = c.choice((i, f"{i} * m", "map.count(" + mp + ")", f"m / ({i} - k)"))
        steps = [f"{mp} = map.set({mp}, {key}, {value});"]
        steps.insert(
            c.choice((0, 1)),
            c.choice(
                (
                    f"if {i} % 3 == 1 {{ {mp} = map.remove({mp}, {key}); }}",
                    f"{mp} = map.remove({mp}, {gone});",
                    f"if map.containsKey({mp}, {key}) {{ {mp} = map.remove({mp}, {key}); }}",
                )
            ),
        )
        return steps

    def keyed_map_block(self) -> str:
        """A map with Bool, I32, String or opaque-id keys that the loop both sets and removes from (a removal
        of a missing key included), then read back through ``map.keys``."""
        c = self.c
        x = self.fresh()
        mp, i = f"mp{x}", f"i{x}"
        kind = c.choice(("Bool", "I32", "String", "Tag"))
        raw = c.choice((f"{i} % 3", f"{i} * 7 % 5", f"{i} % m", f"{i} - k"))
        key_type, key = {
            "Bool": ("Bool", f"({raw}) == 0"),
            "I32": ("I32", raw),
            "String": ("String", f"int32.toStringInvariant({raw})"),
            "Tag": ("Tag", f"list.get(tags{x}, ({raw}) % 3)"),
        }[kind]
        gone = {
            "Bool": "true",
            "I32": "(k % 4)",
            "String": "int32.toStringInvariant(k % 4)",
            "Tag": 'opaque Tag "b-1"',
        }[kind]
        steps = self.set_and_remove(mp, i, key, gone)
        kept = ""
        if c.chance(30):  # an alias the removals must not reach
            kept = f" if {i} == k {{ kq{x} = {mp}; }}"
        loop = self.loop(" ".join(steps) + kept, i, canonical=50)
        pre = f"{mp} = map.empty[Map<{key_type}, I32>](); kq{x} = {mp};"
        if kind == "Tag":  # opaque ids of the policy's brand (``chunk_fuzz.BRAND``), one repeated
            pre += f' tags{x} = list.of(opaque Tag "a", opaque Tag "b-1", opaque Tag "a");'
        fold = (
            f"ks{x} = map.keys({mp}); acc = (acc + map.count({mp}) * 3 + list.count(ks{x}) * 5"
            f" + map.count(kq{x}) * 7) % 1000000;"
            f" for r{x} in 0 .. list.count(ks{x}) {{ acc = (acc + map.get({mp}, list.get(ks{x}, r{x})) % 1000) % 1000000; }}"
        )
        return self.finish(f"keyed/{kind}", pre, loop, fold)

    def slice_block(self) -> str:
        """``list.slice`` with a start and count from the arguments (out of range at some)."""
        c = self.c
        x = self.fresh()
        xs, i = f"xs{x}", f"i{x}"
        start = c.choice(("0", "k", "m % 5", "n / 2", "n - 1", "0 - 1"))
        count = c.choice(("0", "1", "k", "n", "n - k", "2048", "m % 7"))
        loop = self.loop(f"{xs} = list.add({xs}, {i} * 3);", i, canonical=70)
        slice_ = f"sl{x} = list.slice({xs}, {start}, {count});"
        if c.chance(30):  # the slice grown on while the original is read again
            slice_ += f" sl{x} = list.add(sl{x}, 5); {xs} = list.add({xs}, 6);"
        fold = (
            f"acc = (acc + list.count(sl{x}) * 3 + list.count({xs})) % 1000000;"
            f" for r{x} in 0 .. list.count(sl{x}) {{ acc = (acc + list.get(sl{x}, r{x})) % 1000000; }}"
        )
        return self.finish("list/slice", f"{xs} = list.empty[I32]();", loop, f"{slice_} {fold}")

    def text_builtins_block(self) -> str:
        """A text built by a loop, then searched, cut, mapped, split, parsed and formatted."""
        c = self.c
        x = self.fresh()
        s, i = f"t{x}", f"i{x}"
        piece = c.choice((c.choice(TEXTS), f"int32.toStringInvariant({i} % m)", '","'))
        loop = self.loop(f"{s} = string.concatBudgeted({s}, {piece});", i)
        probe = c.choice(TEXTS)
        uses = [
            c.choice(
                (
                    f"acc = acc + string.indexOf({s}, {probe}) + string.lastIndexOf({s}, {probe});",
                    f"if string.contains({s}, {probe}) {{ acc = acc + 1; }}",
                    f"if string.startsWith({s}, {probe}) || string.endsWith({s}, {probe}) {{ acc = acc + 2; }}",
                    f"acc = acc + string.compareOrdinal({s}, {probe});",
                    f"if string.equals({s}, {probe}) || string.isEmpty({s}) {{ acc = acc + 3; }}",
                )
            ),
            c.choice(
                (
                    f"acc = acc + string.length(string.substringBudgeted({s}, {c.choice(('0', 'k', 'm % 3'))},"
                    f" {c.choice(('1', 'k', 'n', '0 - 1'))}));",
                    f"acc = acc + string.length(string.toUpperInvariant({s})) + string.length(string.toLowerInvariant({s}));",
                    f"acc = acc + list.count(string.split({s}, {c.choice((SEPARATORS[0], SEPARATORS[1], probe))}));",
                    f"acc = acc + string.length(string.replace({s}, {probe}, {c.choice(TEXTS)}));",
                    f"acc = acc + parse.int({c.choice((*TEXTS[6:], s))}) % 1000;",
                    f"acc = acc + string.length(format.simple({c.choice(FORMATS)}, list.of({s}, {probe})));",
                )
            ),
        ]
        return self.finish(
            "text/builtins", f"{s} = {c.choice(TEXTS)};", loop, " ".join(uses) + " acc = acc % 1000000;"
        )

    def math_block(self) -> str:
        """``math.abs/min/max/clamp`` in a loop, at the I32 ends (``abs(MIN)`` overflows)."""
        c = self.c
        x = self.fresh()
        a, i = f"a{x}", f"i{x}"
        operand = c.choice((i, f"{i} - k", f"m * {i}", "(0 - 2147483647 - 1) + " + i, "m"))
        body = c.choice(
            (
                f"{a} = ({a} + math.abs({operand})) % 100000;",
                f"{a} = math.max({a}, {operand}) % 100000;",
                f"{a} = ({a} + math.min({operand}, k)) % 100000;",
                f"{a} = ({a} + math.clamp({operand}, 0 - k, m)) % 100000;",
            )
        )
        return self.finish("math", f"{a} = 0;", self.loop(body, i), f"acc = (acc + {a}) % 1000000;")

    def call_chain_block(self) -> str:
        """A chain of private functions, each calling the next (in a loop, on a branch or straight),
        so the run needs a call depth the sweep sets ``maxCallDepth`` around."""
        c = self.c
        x = self.fresh()
        depth = c.choice((1, 2, 3, 4, 6))
        names = [f"d{x}_{level}" for level in range(depth)]
        for level, name in enumerate(names):
            if level + 1 == depth:
                body = "return p * 3 + q % 7;"
            else:
                inner = names[level + 1]
                body = c.choice(
                    (
                        f"return {inner}(p + 1, q) + 1;",
                        f"if p > q {{ return {inner}(q, p); }} return p - q;",
                        f"s = 0; for j in 0 .. q % 4 {{ s = s + {inner}(j, p); }} return s % 100000;",
                        f"return {inner}(p, q) * 2 % 1000 + {inner}(q, 1) % 1000;",
                    )
                )
            self.functions.append(f"fn {name}(p I32, q I32) -> I32 {{ {body} }}\n")
        call = f"{names[0]}({c.choice(('n', 'm % 100', '1'))}, {c.choice(('k % 9', 'n % 5', '3'))})"
        self.blocks.append(f"calls/{depth}")
        if c.chance(40):
            i = f"i{x}"
            return f"{self.loop(f'acc = (acc + {call}) % 1000000;', i)}"
        return f"acc = (acc + {call}) % 1000000;"

    def predicate(self) -> str:
        """A loop-free entry body: branches over the arguments, private calls, texts and faults;
        small enough (mostly) that its worst case fits a small fuel start."""
        c = self.c
        x = self.fresh()
        self.functions.append(
            f"fn g{x}(p I32, q I32) -> I32 {{ if p > q {{ return p - q; }} return {self.expression(('p', 'q'), 2)}; }}\n"
        )
        steps = []
        for _ in range(c.choice((1, 2, 3, 6))):
            steps.append(
                c.choice(
                    (
                        f"if n > k {{ acc = acc + g{x}(n, m); }} else {{ acc = acc - g{x}(k, 1); }}",
                        f"acc = acc + {self.expression(('n', 'm', 'k', 'acc'), 2)};",
                        "if n == m || k < 0 { return acc + 1; }",
                        'acc = acc + string.length(string.concatBudgeted("ab", int32.toStringInvariant(n)));',
                        "acc = acc + list.count(list.of(n, m, k));",
                        "acc = acc + map.count(map.set(map.empty[Map<I32, I32>](), n, m));",
                        "acc = acc + math.abs(m - k);",
                        f"acc = acc + g{x}(g{x}(n, k), m);",
                    )
                )
            )
        self.blocks.append("predicate")
        return " ".join(steps)

    def condition(self, depth: int) -> str:
        """A condition over the arguments and ``acc``: comparisons joined by ``&&``, ``||``, ``!``."""
        c = self.c
        if depth == 0 or c.chance(40):
            left = c.choice(("n", "m", "k", "acc"))
            right = c.choice(("n", "m", "k", "acc", *EDGE_CONSTANTS[:6]))
            return f"{left} {c.choice(('<', '<=', '==', '!=', '>', '>='))} {right}"
        if c.chance(15):
            return f"!({self.condition(depth - 1)})"
        return f"({self.condition(depth - 1)} {c.choice(('&&', '||'))} {self.condition(depth - 1)})"

    def branches(self, depth: int) -> str:
        """Statements with nothing that can fault (no arithmetic, no call, no built-in): the only
        shape whose compiled code names nothing but the fuel-exhaustion stub, so the fast lane starts
        it from its worst case (``small_fuel``)."""
        c = self.c
        steps = []
        for _ in range(c.choice((1, 2, 3, 8, 20) if depth == BRANCH_DEPTH else (1, 2, 3))):
            assign = f"acc = {c.choice(('n', 'm', 'k', *EDGE_CONSTANTS[:6]))};"
            if depth == 0 or c.chance(30):
                steps.append(
                    c.choice(
                        (assign, assign, f"if {self.condition(2)} {{ return {c.choice(('n', 'k', '7'))}; }}")
                    )
                )
            else:
                other = f" else {{ {self.branches(depth - 1)} }}" if c.chance(50) else ""
                steps.append(f"if {self.condition(2)} {{ {self.branches(depth - 1)} }}{other}")
        return " ".join(steps)


def build_edge_kernel(c: Chooser) -> Kernel:
    """One kernel: either a loop-free predicate or one to three blocks of this generator."""
    builder = EdgeBuilder(c)
    if c.chance(15):
        body = builder.branches(BRANCH_DEPTH)
        builder.blocks.append("branches")
    elif c.chance(20):
        body = builder.predicate()
    else:
        makers = {
            "keyed": builder.keyed_map_block,
            "slice": builder.slice_block,
            "text": builder.text_builtins_block,
            "math": builder.math_block,
            "calls": builder.call_chain_block,
        }
        keys = ("keyed", "keyed", "slice", "text", "text", "math", "calls", "calls")
        body = "\n    ".join(makers[c.choice(keys)]() for _ in range(c.choice((1, 1, 2, 3))))
    text = (
        'module "edgefuzz" version "1.0.0";\n'
        + "".join(builder.functions)
        + f"entrypoint fn main(n I32, m I32, k I32) -> I32 {{\n    acc = 0;\n    {body}\n    return acc;\n}}\n"
    )
    vectors = []
    for _ in range(c.choice((1, 2, 3))):
        n = c.choice(COUNTS[:10])  # the text built-ins are quadratic in the text: keep it short
        vectors.append([n, c.choice(ARGUMENT_EDGES), c.choice((*ARGUMENT_EDGES, n - 1, n // 2))])
    return Kernel(text, vectors, builder.blocks)
