"""Properties of the canonical form: what the hash must ignore, what it must not, and exactness of
the f64 text, the ordinal order, the sizes and the budget decisions, over generated ASTs (the text
and sizes against an independent, recursive encoding written from the spec)."""

from __future__ import annotations

import json
import math
import random
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar import canonical
from dotboxd.grammar.canonical import (
    canonical_size,
    canonical_text,
    encode_record,
    format_f64,
    module_hash,
    ordinal_key,
    utf16_len,
)
from dotboxd.grammar.formatter import format_module
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module, to_wire
from tests.strategies.ast_strategies import modules


def _shuffled(value: object, rng: random.Random) -> object:
    """The same JSON value with every object's keys in a random order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: _shuffled(item, rng) for key, item in items}
    if isinstance(value, list):
        return [_shuffled(item, rng) for item in value]
    return value


@given(
    modules(),
    st.randoms(use_true_random=False),
    st.sampled_from([None, 0, 1, 2, 4, "\t"]),
    st.booleans(),
    st.booleans(),
)
def test_hash_ignores_json_whitespace_and_key_order(
    module: ast.Module, rng: random.Random, indent: int | str | None, sort_keys: bool, ascii_only: bool
) -> None:
    expected = module_hash(module)
    wire = to_wire(module)
    variants: list[str | bytes] = [
        json.dumps(wire, indent=indent, sort_keys=sort_keys, ensure_ascii=ascii_only),
        json.dumps(_shuffled(wire, rng), indent=indent, ensure_ascii=ascii_only),
        json.dumps(_shuffled(wire, rng), separators=(",", ":"), ensure_ascii=ascii_only).encode("utf-8"),
    ]
    for document in variants:
        assert module_hash(import_module(document)) == expected


@given(modules())
def test_hash_is_the_same_from_json_and_from_text(module: ast.Module) -> None:
    from_json = import_module(json.dumps(to_wire(module)))
    text = format_module(module)
    from_text = parse_text(text)
    airy = parse_text(text.replace("\n", "\n\n    "))  # more blank lines and indentation
    assert module_hash(from_json) == module_hash(from_text) == module_hash(airy) == module_hash(module)
    assert canonical_text(from_text) == canonical_text(from_json)


@given(modules(), st.randoms(use_true_random=False))
def test_declaration_order_is_ignored_where_it_carries_no_meaning(
    module: ast.Module, rng: random.Random
) -> None:
    """Functions, capability requests and metadata are sorted; their source order does not count."""
    functions = list(module.functions)
    requests = list(module.capability_requests)
    rng.shuffle(functions)
    rng.shuffle(requests)
    ids = [f.id for f in module.functions]
    assume(len(set(ids)) == len(ids))  # equal ids keep their relative (meaningful) order
    reordered = ast.Module(
        module.id,
        module.version,
        module.target_sandbox_version,
        tuple(requests),
        tuple(functions),
        tuple(reversed(module.metadata)),
    )
    assert module_hash(reordered) == module_hash(module)


@given(modules())
def test_renaming_the_module_changes_the_hash(module: ast.Module) -> None:
    renamed = ast.Module(
        module.id + "x",
        module.version,
        module.target_sandbox_version,
        module.capability_requests,
        module.functions,
        module.metadata,
    )
    assert module_hash(renamed) != module_hash(module)


# ---------------------------------------------------------------------------------------------
# Text, sizes and budget decisions against a reference encoding

_ANY_TEXT = st.text(st.characters(), max_size=12)  # controls, backslashes, astral, lone surrogates


@st.composite
def _escape_heavy_modules(draw: st.DrawFn) -> ast.Module:
    """Strings full of backslashes and controls at random depths, in names and literals."""
    expr: ast.Expr = ast.Literal(ast.LiteralKind.STRING, draw(_ANY_TEXT))
    for _ in range(draw(st.integers(0, 8))):
        shape = draw(st.sampled_from(["neg", "bin", "call", "generic"]))
        if shape == "neg":
            expr = ast.Unary(ast.UnaryOp.NEG, expr)
        elif shape == "bin":
            expr = ast.Binary(ast.BinaryOp.ADD, ast.Var(draw(_ANY_TEXT)), expr)
        elif shape == "call":
            expr = ast.Call(draw(_ANY_TEXT), (expr, ast.Var("v")))
        else:
            expr = ast.Call("list.of", (expr,), ast.TypeRef(draw(_ANY_TEXT), (ast.TypeRef("\\"),)))
    body = (ast.Set(draw(_ANY_TEXT), expr), ast.Return(ast.Var("\t")))
    fn = ast.Function(draw(_ANY_TEXT), ast.Visibility.PRIVATE, (), ast.TypeRef(draw(_ANY_TEXT)), body)
    meta = ((draw(_ANY_TEXT), draw(_ANY_TEXT)),)
    request = ast.CapabilityRequest(draw(_ANY_TEXT), draw(st.none() | _ANY_TEXT))
    return ast.Module(draw(_ANY_TEXT), "1.0.0", "1.0.0", (request,), (fn,), meta)


class _Reference:
    """The canonical form straight from spec/canonical.md, recursively and without budgets, built
    from the public ``encode_record``; it sums the length of every record it builds (the work)."""

    def __init__(self) -> None:
        self.work = 0

    def record(self, *fields: str | None) -> str:
        text = encode_record(*fields)
        self.work += utf16_len(text)
        return text

    def type(self, t: ast.TypeRef) -> str:
        return self.record("type", t.name, *(self.type(a) for a in t.arguments))

    def value(self, lit: ast.Literal) -> str:
        k, v = ast.LiteralKind, lit.value
        if lit.kind is k.UNIT:
            return self.record("unit")
        if lit.kind is k.BOOL:
            return self.record("bool", "true" if v else "false")
        if lit.kind is k.F64:
            assert isinstance(v, float | int)
            return self.record("f64", format_f64(float(v)))
        if lit.kind is k.GUID:
            assert isinstance(v, str)
            return self.record("guid", v.replace("-", ""))
        if lit.kind is k.OPAQUE_ID:
            return self.record("opaque-id", lit.brand, str(v))
        name = {k.I32: "i32", k.I64: "i64", k.STRING: "string", k.PATH: "path", k.URI: "uri"}[lit.kind]
        return self.record(name, str(v))

    def expr(self, e: ast.Expr) -> str:
        if isinstance(e, ast.Literal):
            return self.record("lit", self.value(e))
        if isinstance(e, ast.Var):
            return self.record("var", e.name)
        if isinstance(e, ast.Unary):
            return self.record("unary", "!" if e.op is ast.UnaryOp.NOT else "-", self.expr(e.operand))
        if isinstance(e, ast.Binary):
            return self.record("bin", e.op.symbol, self.expr(e.left), self.expr(e.right))
        assert isinstance(e, ast.Call)
        generic = None if e.generic_type is None else self.type(e.generic_type)
        return self.record("call", e.name, generic, *(self.expr(a) for a in e.args))

    def block(self, body: tuple[ast.Stmt, ...]) -> list[str]:
        lines: list[str] = []
        for s in body:
            if isinstance(s, ast.Set):
                lines.append(self.record("set", s.name, self.expr(s.value)))
            elif isinstance(s, ast.Return):
                lines.append(self.record("return", self.expr(s.value)))
            elif isinstance(s, ast.ExprStmt):
                lines.append(self.record("expr", self.expr(s.value)))
            elif isinstance(s, ast.If):
                lines.append(self.record("if", self.expr(s.condition)))
                lines += [
                    *self.block(s.then),
                    self.record("else"),
                    *self.block(s.else_),
                    self.record("endif"),
                ]
            elif isinstance(s, ast.While):
                lines.append(self.record("while", self.expr(s.condition)))
                lines += [*self.block(s.body), self.record("endwhile")]
            elif isinstance(s, ast.ForRange):
                lines.append(self.record("for", s.local, self.expr(s.start), self.expr(s.end)))
                lines += [*self.block(s.body), self.record("endfor")]
            else:
                lines.append(self.record("continue" if isinstance(s, ast.Continue) else "break"))
        return lines

    def text(self, m: ast.Module) -> str:
        lines = [
            self.record("canonicalizer", "dotboxd-canonicalizer-1"),
            self.record("module", m.id, m.version, m.target_sandbox_version),
        ]
        requests = [(r.id, r.reason or "") for r in m.capability_requests]
        lines += [self.record("requires", i, r) for i, r in sorted(requests, key=_units)]
        lines += [self.record("metadata", k, v) for k, v in sorted(m.metadata, key=lambda p: _units(p[:1]))]
        for f in sorted(m.functions, key=lambda f: _units((f.id,))):
            entry = "entry" if f.visibility is ast.Visibility.ENTRYPOINT else "private"
            lines.append(self.record("fn", entry, f.id, self.type(f.return_type)))
            lines += [self.record("param", p.name, self.type(p.type)) for p in f.parameters]
            lines += self.block(f.body)
        return "".join(line + "\n" for line in lines)


def _units(texts: tuple[str, ...]) -> list[list[int]]:
    return [_utf16_units(t) for t in texts]


@given(st.one_of(_escape_heavy_modules(), modules()))
def test_text_and_sizes_equal_the_reference_encoding(module: ast.Module) -> None:
    reference = _Reference()
    expected = reference.text(module)
    assert canonical_text(module) == expected
    assert canonical_size(module) == (utf16_len(expected), reference.work)


@given(st.one_of(_escape_heavy_modules(), modules()), st.data())
def test_budgets_refuse_exactly_what_the_measurement_exceeds(module: ast.Module, data: st.DataObject) -> None:
    """The one-pass build refuses early on lower bounds; its decisions and evidence must still be
    those of measuring the whole text first, also right at the edges of both budgets."""
    units, work = canonical_size(module)
    max_units = data.draw(st.sampled_from([units - 1, units]) | st.integers(0, 2 * units), label="max_units")
    max_work = data.draw(st.sampled_from([work - 1, work]) | st.integers(0, 2 * work), label="max_work")
    if units > max_units or work > max_work:
        with pytest.raises(DotBoxDError) as info:
            canonical_text(module, max_units=max_units, max_work=max_work)
        assert info.value.code == "E-CANON-LIMIT"
        assert info.value.diagnostic.evidence == {
            "units": units,
            "work": work,
            "max_units": max_units,
            "max_work": max_work,
        }
    else:
        assert canonical_text(module, max_units=max_units, max_work=max_work) == canonical_text(module)


@given(st.integers(0, 2**12_000))
def test_digit_count_of_huge_sizes(number: int) -> None:
    """Sizes of hostile texts are counted from bit lengths (str() refuses beyond 4300 digits)."""
    assert canonical._digit_count(number) == len(str(number))


# ---------------------------------------------------------------------------------------------
# f64 text: checked against the definition (shortest round-trip digits, .NET layout), not a copy


def _neighbours(x: float, digits: int) -> tuple[Decimal, Decimal]:
    """The decimals with ``digits`` significant digits just below and just above |x|."""
    exact = Decimal(abs(x))
    quantum = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    return exact.quantize(quantum, ROUND_FLOOR), exact.quantize(quantum, ROUND_CEILING)


_PLAIN = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")
_SCIENTIFIC = re.compile(r"-?[1-9](\.[0-9]*[1-9])?E[+-][0-9]{2,3}")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_f64_text_is_shortest_round_trip_in_dotnet_layout(x: float) -> None:
    text = format_f64(x)
    assert float(text) == x and math.copysign(1.0, float(text)) == math.copysign(1.0, x)
    if x == 0:
        assert text in ("0", "-0")
        return
    printed = Decimal(text)
    significant = len(printed.normalize().as_tuple().digits)
    # no decimal with one digit fewer lies in x's rounding interval
    if significant > 1:
        below, above = _neighbours(x, significant - 1)
        assert float(below) != abs(x) and float(above) != abs(x)
    # among the candidates of this length that round-trip, the printed one is the nearest
    below, above = _neighbours(x, significant)
    exact = Decimal(abs(x))
    for candidate in (below, above):
        if float(candidate) == abs(x):
            assert abs(abs(printed) - exact) <= abs(candidate - exact)
    exponent = printed.adjusted()
    if exponent >= 17 or exponent <= -5:
        assert _SCIENTIFIC.fullmatch(text), text
    else:
        assert _PLAIN.fullmatch(text), text


# ---------------------------------------------------------------------------------------------
# Ordinal order


def _utf16_units(text: str) -> list[int]:
    units: list[int] = []
    for char in text:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            units += [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
        else:
            units.append(code)
    return units


@given(st.lists(st.text(st.characters(), max_size=6), max_size=8))
def test_ordinal_key_orders_by_utf16_code_units(texts: list[str]) -> None:
    assert sorted(texts, key=ordinal_key) == sorted(texts, key=_utf16_units)


@given(st.text(st.characters(), max_size=30))
def test_utf16_len_counts_code_units(text: str) -> None:
    assert utf16_len(text) == len(_utf16_units(text))
