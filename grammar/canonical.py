"""Canonical form and module hash, computed from the AST only (never from source text).

The encoding reproduces DotBoxD's ``dotboxd-canonicalizer-1`` byte for byte (see ``spec/canonical.md``),
so a module hashes identically here and in the .NET reference:

* a *field* is ``n;`` for null or ``s<len>:<escaped>;`` for a string, where ``len`` counts the
  UTF-16 code units of the escaped text; a *record* is its fields concatenated;
* the module is one record per line (each followed by ``\\n``): canonicalizer id, module header,
  capability requests, metadata, then each function (sorted by id) with its parameters and statements;
* nested nodes (types, expressions, literal values) are records embedded as string fields, so every
  nesting level escapes its child again;
* sorting is ordinal (UTF-16 code unit order, like .NET ``StringComparer.Ordinal``);
* the hash is the lowercase SHA-256 hex of the UTF-8 bytes of the text.

Because each nesting level escapes its child again, a backslash or control character ``d`` levels
deep costs ``2**d`` characters. DotBoxD has no guard against that. Here one walk of the AST first
measures the text with integers only (``canonical_size``); a module whose canonical text would
exceed ``MAX_CANONICAL_UNITS``, or whose records would total more than ``MAX_CANONICAL_WORK``, is
rejected with ``E-CANON-LIMIT`` before anything is built. The same walk, over text instead of
sizes, then builds it. Both walks use explicit stacks, never recursion.

The small encoder API (``encode_field``, ``encode_record``, ``hash_records``, ``sha256_hex``,
``ordinal_key``, ``format_f64``) is public so that plan, policy and binding-manifest hashes reuse
exactly the same encoding.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from dotboxd.core.ast import (
    Binary,
    Break,
    Call,
    Continue,
    Expr,
    ExprStmt,
    ForRange,
    If,
    Literal,
    LiteralKind,
    Module,
    Return,
    Set,
    Stmt,
    TypeRef,
    Unary,
    UnaryOp,
    Var,
    Visibility,
    While,
)
from dotboxd.core.diagnostics import reject

CANONICALIZER_ID = "dotboxd-canonicalizer-1"
"""Identity of this encoding; equal to DotBoxD's because the bytes are identical (spec/canonical.md)."""

MAX_CANONICAL_UNITS = 32 * 1024 * 1024
"""Most UTF-16 code units of canonical text held at once (the final text is one such moment)."""

MAX_CANONICAL_WORK = 256 * 1024 * 1024
"""Most UTF-16 code units of records built in total while encoding one module (bounds time)."""

# ---------------------------------------------------------------------------------------------
# Fields and records


def _escape_table() -> dict[int, str]:
    table = {code: f"\\u{code:04x}" for code in range(0x20)}
    table.update({code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)})  # .NET char.IsControl
    table[ord("\\")] = "\\\\"
    table[ord("\r")] = "\\r"
    table[ord("\n")] = "\\n"
    table[ord("\t")] = "\\t"
    return table


_ESCAPES = _escape_table()
_NEEDS_ESCAPE = re.compile("[\\\\\x00-\x1f\x7f-\x9f]")


def escape_text(value: str) -> str:
    """Backslash, CR, LF and TAB as two-character escapes; every other C0/C1 control (.NET
    ``char.IsControl``) as ``\\uXXXX`` with lowercase hex; everything else unchanged."""
    if _NEEDS_ESCAPE.search(value) is None:
        return value
    return value.translate(_ESCAPES)


def utf16_len(value: str) -> int:
    """The length .NET's ``string.Length`` reports: code points above U+FFFF count twice."""
    if value.isascii():
        return len(value)
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def _field(value: str | None) -> tuple[str, int]:
    """One encoded field and its UTF-16 length."""
    if value is None:
        return "n;", 2
    escaped = escape_text(value)
    size = utf16_len(escaped)
    prefix = str(size)
    return f"s{prefix}:{escaped};", size + len(prefix) + 3


def encode_field(value: str | None) -> str:
    """``n;`` for None, else ``s<utf16 length of escaped>:<escaped>;``."""
    return _field(value)[0]


def _record(fields: Sequence[str | None]) -> tuple[str, int]:
    parts: list[str] = []
    total = 0
    for value in fields:
        text, size = _field(value)
        parts.append(text)
        total += size
    return "".join(parts), total


def encode_record(*fields: str | None) -> str:
    """A record: its fields encoded and concatenated (no separator, no terminator)."""
    return _record(fields)[0]


def ordinal_key(value: str) -> bytes:
    """Sort key equal to .NET ``StringComparer.Ordinal``: UTF-16 code unit order. Python's own
    ``str`` order compares code points, which differs once astral characters meet U+E000..U+FFFF."""
    return value.encode("utf-16-be", "surrogatepass")


_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical_bytes(text: str) -> bytes:
    """The UTF-8 bytes that are hashed. A lone surrogate becomes U+FFFD (as .NET's ``Encoding.UTF8``
    does); surrogate code points that form a pair in UTF-16 are joined first."""
    if _SURROGATE.search(text) is not None:
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.encode("utf-8")


def sha256_hex(text: str) -> str:
    """Lowercase SHA-256 hex of ``canonical_bytes(text)``."""
    return hashlib.sha256(canonical_bytes(text)).hexdigest()


def hash_records(records: Iterable[str]) -> str:
    """DotBoxD's ``HashRecords``: the records joined with ``\\n`` (no trailing newline), hashed.
    Callers sort the records first when their order carries no meaning (policy, bindings)."""
    return sha256_hex("\n".join(records))


# ---------------------------------------------------------------------------------------------
# Numbers


def format_f64(value: float) -> str:
    """``double.ToString("R", InvariantCulture)`` of .NET Core 3.0 and later.

    The digits are the shortest string that round-trips (the same digits Python's ``repr``
    chooses). The layout follows .NET's general format with ``nMaxDigits = max(digits, 17)``:
    scientific notation when the decimal point would sit more than ``nMaxDigits`` places right of
    the first digit or when the number is below 1e-4; the exponent is ``E``, a sign, and at least
    two digits (``1E+20``, ``1E-05``). Negative zero prints as ``-0``.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "-Infinity" if value < 0 else "Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    scale = len(whole) + (int(exponent) if exponent else 0)  # decimal point position after digit 0
    stripped = digits.lstrip("0")
    scale -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    count = len(digits)
    if scale > max(count, 17) or scale < -3:
        power = scale - 1
        body = digits[0] + ("." + digits[1:] if count > 1 else "")
        return f"{sign}{body}E{'+' if power >= 0 else '-'}{abs(power):02d}"
    if scale <= 0:
        return f"{sign}0.{'0' * -scale}{digits}"
    if scale >= count:
        return sign + digits + "0" * (scale - count)
    return f"{sign}{digits[:scale]}.{digits[scale:]}"


def format_guid(value: str) -> str:
    """.NET ``Guid.ToString("N")``: 32 lowercase hex digits, no hyphens."""
    return value.replace("-", "").lower()


# ---------------------------------------------------------------------------------------------
# Nodes

_UNARY_SYMBOLS = {UnaryOp.NOT: "!", UnaryOp.NEG: "-"}

T = TypeVar("T")


def _literal_fields(literal: Literal) -> tuple[str, ...]:
    """The value record's fields: ``(unit)``, ``(bool, true)``, ``(i32, 5)``, ``(f64, 1E+20)``,
    ``(string, s)``, ``(guid, 32hex)``, ``(opaque-id, brand, v)``, ``(path, p)``, ``(uri, u)``."""
    kind, value = literal.kind, literal.value
    if kind is LiteralKind.UNIT:
        return ("unit",)
    if kind is LiteralKind.BOOL and isinstance(value, bool):
        return ("bool", "true" if value else "false")
    if kind in (LiteralKind.I32, LiteralKind.I64) and isinstance(value, int) and not isinstance(value, bool):
        return (kind.value, str(value))
    if kind is LiteralKind.F64 and isinstance(value, (int, float)) and not isinstance(value, bool):
        return ("f64", format_f64(float(value)))
    if isinstance(value, str):
        if kind is LiteralKind.STRING:
            return ("string", value)
        if kind is LiteralKind.GUID:
            return ("guid", format_guid(value))
        if kind is LiteralKind.OPAQUE_ID and literal.brand is not None:
            return ("opaque-id", literal.brand, value)
        if kind is LiteralKind.PATH:
            return ("path", value)
        if kind is LiteralKind.URI:
            return ("uri", value)
    raise TypeError(f"malformed {kind.value} literal in the AST: {value!r}")


class _Algebra(Protocol[T]):
    """What the module walk computes per string and per record: the text itself, or its size."""

    def value(self, text: str) -> T:
        """A string taken from the AST (a name, a literal's text, a keyword)."""
        ...

    def record(self, fields: Sequence[T | None]) -> T:
        """A record of fields (None is the null field); usable as a field of an enclosing record."""
        ...


class _Text:
    """The canonical text itself."""

    def value(self, text: str) -> str:
        return text

    def record(self, fields: Sequence[str | None]) -> str:
        return _record(fields)[0]


@dataclass(frozen=True, slots=True)
class _Size:
    """A string known only by its UTF-16 length and how many characters escaping will expand:
    backslashes, CR/LF/TAB (one extra unit each) and other controls (five extra units each)."""

    units: int
    backslashes: int = 0
    short_controls: int = 0
    long_controls: int = 0

    def escaped(self) -> tuple[int, int]:
        """(units, backslashes) after escaping: every escape adds backslashes, no controls remain."""
        units = self.units + self.backslashes + self.short_controls + 5 * self.long_controls
        return units, 2 * self.backslashes + self.short_controls + self.long_controls


_SHORT_CONTROLS = re.compile("[\r\n\t]")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


class _Sizer:
    """Exact sizes of the canonical text, computed with integers only (so that an exponentially
    large text is measured in microseconds, never built), plus the total size of every record
    that building the text would create."""

    def __init__(self) -> None:
        self.work = 0

    def value(self, text: str) -> _Size:
        if _NEEDS_ESCAPE.search(text) is None:
            return _Size(utf16_len(text))
        short = len(_SHORT_CONTROLS.findall(text))
        return _Size(utf16_len(text), text.count("\\"), short, len(_CONTROLS.findall(text)) - short)

    def record(self, fields: Sequence[_Size | None]) -> _Size:
        units = backslashes = 0
        for field_size in fields:
            if field_size is None:
                units += 2
                continue
            escaped_units, escaped_backslashes = field_size.escaped()
            units += escaped_units + len(str(escaped_units)) + 3
            backslashes += escaped_backslashes
        self.work += units
        return _Size(units, backslashes)


def _walk_type(alg: _Algebra[T], root: TypeRef) -> T:
    """``(type, name, T...)``, bottom-up with an explicit stack."""
    done: list[T] = []
    stack: list[tuple[TypeRef, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node.arguments and not expanded:
            stack.append((node, True))
            stack.extend((arg, False) for arg in reversed(node.arguments))
            continue
        args = _pop(done, len(node.arguments))
        done.append(alg.record([alg.value("type"), alg.value(node.name), *args]))
    return done[0]


def _walk_expr(alg: _Algebra[T], root: Expr) -> T:
    """``(lit, V)``, ``(var, n)``, ``(unary, op, E)``, ``(bin, op, E, E)`` and
    ``(call, name, null|T, E...)``; operators in symbol form (``!``, ``-``, ``+``, ``&&``, ...)."""
    done: list[T] = []
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, Var):
            done.append(alg.record([alg.value("var"), alg.value(node.name)]))
        elif isinstance(node, Literal):
            value = alg.record([alg.value(f) for f in _literal_fields(node)])
            done.append(alg.record([alg.value("lit"), value]))
        elif not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))
        else:
            parts = _pop(done, len(_children(node)))
            if isinstance(node, Unary):
                done.append(alg.record([alg.value("unary"), alg.value(_UNARY_SYMBOLS[node.op]), *parts]))
            elif isinstance(node, Binary):
                done.append(alg.record([alg.value("bin"), alg.value(node.op.symbol), *parts]))
            else:
                assert isinstance(node, Call)
                generic = None if node.generic_type is None else _walk_type(alg, node.generic_type)
                done.append(alg.record([alg.value("call"), alg.value(node.name), generic, *parts]))
    return done[0]


def _pop(stack: list[T], count: int) -> list[T]:
    """The last ``count`` items of ``stack``, removed from it."""
    if count == 0:
        return []
    items = stack[-count:]
    del stack[-count:]
    return items


def _children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.args
    return ()


def _walk_statements(alg: _Algebra[T], body: Sequence[Stmt], lines: list[T]) -> None:
    """One line per statement plus block markers, from a work stack (no recursion)."""

    def line(*fields: T | str) -> None:
        lines.append(alg.record([alg.value(f) if isinstance(f, str) else f for f in fields]))

    stack: list[Stmt | str] = list(reversed(body))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            line(item)
        elif isinstance(item, Set):
            line("set", item.name, _walk_expr(alg, item.value))
        elif isinstance(item, Return):
            line("return", _walk_expr(alg, item.value))
        elif isinstance(item, ExprStmt):
            line("expr", _walk_expr(alg, item.value))
        elif isinstance(item, If):
            line("if", _walk_expr(alg, item.condition))
            stack.append("endif")
            stack.extend(reversed(item.else_))
            stack.append("else")
            stack.extend(reversed(item.then))
        elif isinstance(item, While):
            line("while", _walk_expr(alg, item.condition))
            stack.append("endwhile")
            stack.extend(reversed(item.body))
        elif isinstance(item, ForRange):
            line("for", item.local, _walk_expr(alg, item.start), _walk_expr(alg, item.end))
            stack.append("endfor")
            stack.extend(reversed(item.body))
        elif isinstance(item, Continue):
            line("continue")
        elif isinstance(item, Break):
            line("break")
        else:
            raise TypeError(f"unknown statement node {type(item).__name__}")


def _walk_module(alg: _Algebra[T], module: Module) -> list[T]:
    """The module's lines (records without their LF terminators), in canonical order."""
    lines: list[T] = []

    def line(*fields: T | str) -> None:
        lines.append(alg.record([alg.value(f) if isinstance(f, str) else f for f in fields]))

    line("canonicalizer", CANONICALIZER_ID)
    line("module", module.id, module.version, module.target_sandbox_version)
    requests = sorted(
        module.capability_requests, key=lambda r: (ordinal_key(r.id), ordinal_key(r.reason or ""))
    )
    for request in requests:
        line("requires", request.id, request.reason or "")
    for key, value in sorted(module.metadata, key=lambda item: ordinal_key(item[0])):
        line("metadata", key, value)
    for fn in sorted(module.functions, key=lambda f: ordinal_key(f.id)):
        entry = "entry" if fn.visibility is Visibility.ENTRYPOINT else "private"
        line("fn", entry, fn.id, _walk_type(alg, fn.return_type))
        for param in fn.parameters:
            line("param", param.name, _walk_type(alg, param.type))
        _walk_statements(alg, fn.body, lines)
    return lines


def canonical_size(module: Module) -> tuple[int, int]:
    """(UTF-16 units of the canonical text, units of all records building it would create),
    computed without building anything."""
    sizer = _Sizer()
    lines = _walk_module(sizer, module)
    return sum(size.units + 1 for size in lines), sizer.work


def canonical_lines(
    module: Module, *, max_units: int = MAX_CANONICAL_UNITS, max_work: int = MAX_CANONICAL_WORK
) -> list[str]:
    """The canonical records of ``module``, one per line, without the ``\\n`` terminators.

    The size is measured first (``canonical_size``); a module whose canonical text would exceed
    ``max_units`` UTF-16 units, or whose records would total more than ``max_work`` units, is
    rejected with ``E-CANON-LIMIT`` before any of it is built."""
    units, work = canonical_size(module)
    if units > max_units or work > max_work:
        raise reject(
            "E-CANON-LIMIT",
            f"the canonical form of this module would be {units:,} UTF-16 units"
            + ("" if units <= max_units else f"; the limit is {max_units:,}")
            + (
                "" if work <= max_work else f" and building it would copy {work:,} units (limit {max_work:,})"
            ),
            hint="each nesting level escapes its child again, doubling backslashes and control "
            "characters; keep such string literals out of deeply nested expressions",
            units=units,
            work=work,
            max_units=max_units,
            max_work=max_work,
        )
    return _walk_module(_Text(), module)


def canonical_text(
    module: Module, *, max_units: int = MAX_CANONICAL_UNITS, max_work: int = MAX_CANONICAL_WORK
) -> str:
    """DotBoxD's ``CanonicalModuleHasher.Serialize``: every record followed by ``\\n``.

    Raises ``DotBoxDError`` (``E-CANON-LIMIT``) when the text would exceed its budget."""
    return "".join(line + "\n" for line in canonical_lines(module, max_units=max_units, max_work=max_work))


def module_hash(module: Module) -> str:
    """Lowercase SHA-256 hex of the UTF-8 canonical text (DotBoxD's ``CanonicalModuleHasher.Hash``)."""
    return sha256_hex(canonical_text(module))
