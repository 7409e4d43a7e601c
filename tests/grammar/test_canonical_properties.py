"""Properties of the canonical form: what the hash must ignore, what it must not, and exactness of
the f64 text, the ordinal order and the size pre-measurement, over generated ASTs."""

from __future__ import annotations

import json
import math
import random
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from dotboxd.core import ast
from dotboxd.grammar import canonical
from dotboxd.grammar.canonical import (
    canonical_size,
    canonical_text,
    format_f64,
    module_hash,
    ordinal_key,
    utf16_len,
)
from dotboxd.grammar.formatter import format_module
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module, to_wire
from tests.strategies.ast_strategies import modules


def _shuffled(value: Any, rng: random.Random) -> Any:
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
# The size pre-measurement is exact

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


class _CountingText:
    """The text algebra, summing the UTF-16 length of every record it builds."""

    def __init__(self) -> None:
        self.inner = canonical._Text()
        self.work = 0

    def value(self, text: str) -> str:
        return self.inner.value(text)

    def record(self, fields: Any) -> str:
        text = self.inner.record(fields)
        self.work += utf16_len(text)
        return text


@given(st.one_of(_escape_heavy_modules(), modules()))
def test_measured_size_equals_built_size(module: ast.Module) -> None:
    units, work = canonical_size(module)
    assert units == utf16_len(canonical_text(module))
    counting = _CountingText()
    canonical._walk_module(counting, module)
    assert work == counting.work


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
