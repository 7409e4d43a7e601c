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
deep costs ``2**d`` characters. DotBoxD has no guard against that. Here the text is built in one
bottom-up walk that knows every record's exact size and backslash count before building it
(integers carried with each built piece: built text never holds a control character, so escaping it
again only doubles its backslashes). Such doubling needs a backslash in a record that will be
escaped again; the first time one shows up, the whole module is measured with integers only
(``canonical_size``'s walk) and refused with ``E-CANON-LIMIT`` if its text would exceed
``MAX_CANONICAL_UNITS`` or its records would total more than ``MAX_CANONICAL_WORK``. Without one,
sizes only add up and running checks stop the build at the same budgets. Either way the decision is
the one a full measurement would give, no string beyond the budget is built, and typical modules
(no escapes) are walked once. All walks use explicit stacks, never recursion.

The field/record encoder and the hash (``encode_field``, ``encode_record``, ``hash_records``,
``sha256_hex``, ``canonical_bytes``, ``ordinal_key``) live in ``dotboxd.core.records``, the one encoder
that plan, policy and binding-manifest hashes use too; they are re-exported here with ``format_f64``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from dotboxd.core.ast import (
    BINARY_SYMBOLS,
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
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.records import (
    BACKSLASH,
    NULL_FIELD,
    CanonicalPiece,
    canonical_bytes,
    encode_field,
    encode_record,
    escape_text,
    hash_records,
    ordinal_key,
    sha256_hex,
    string_field,
    utf16_len,
)

CANONICALIZER_ID = "dotboxd-canonicalizer-1"
"""Identity of this encoding; equal to DotBoxD's because the bytes are identical (spec/canonical.md)."""

MAX_CANONICAL_UNITS = 32 * 1024 * 1024
"""Most UTF-16 code units of canonical text held at once (the final text is one such moment)."""

MAX_CANONICAL_WORK = 256 * 1024 * 1024
"""Most UTF-16 code units of records built in total while encoding one module (bounds time)."""

# ---------------------------------------------------------------------------------------------
# Fields and records


# The field and record encoding itself lives in ``dotboxd.core.records`` (one encoder for module,
# policy, manifest and plan hashes); it is re-exported here as this module's public encoder API.

_TWO_BACKSLASHES = BACKSLASH * 2


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


_SMALL = 10**18
_LOG10_2 = math.log10(2)


@lru_cache(maxsize=64)
def _power_of_ten(exponent: int) -> int:
    power: int = 10**exponent
    return power


def _digit_count(number: int) -> int:
    """Decimal digits of a non-negative int. Sizes of hostile texts can be astronomically large
    (only ever measured, never built): counted from the bit length, since ``str`` of a huge int is
    slow and refused beyond 4300 digits."""
    if number < _SMALL:
        return len(str(number))
    upper = int(number.bit_length() * _LOG10_2) + 1  # the count is ``upper`` or ``upper - 1``
    return upper if number >= _power_of_ten(upper - 1) else upper - 1


# ---------------------------------------------------------------------------------------------
# Nodes


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


def _fields(*values: str) -> CanonicalPiece:
    """Several string fields concatenated (the leading, fixed part of a record)."""
    pieces = [string_field(value) for value in values]
    return "".join(p[0] for p in pieces), sum(p[1] for p in pieces), sum(p[2] for p in pieces)


# Fixed record heads and lines, encoded once.
_TYPE = _fields("type")
_VAR = _fields("var")
_LIT = _fields("lit")
_CALL = _fields("call")
_RETURN = _fields("return")
_EXPR = _fields("expr")
_IF = _fields("if")
_SET = _fields("set")
_FOR = _fields("for")
_WHILE = _fields("while")
_BIN_HEADS = {op: _fields("bin", symbol) for op, symbol in BINARY_SYMBOLS.items()}
_UNARY_HEADS = {UnaryOp.NOT: _fields("unary", "!"), UnaryOp.NEG: _fields("unary", "-")}
_ELSE, _ENDIF, _ENDWHILE, _ENDFOR = (_fields(word) for word in ("else", "endif", "endwhile", "endfor"))
_CONTINUE, _BREAK = _fields("continue"), _fields("break")
_CANONICALIZER_LINE = _fields("canonicalizer", CANONICALIZER_ID)
_NOTHING: CanonicalPiece = ("", 0, 0)
_VISIBILITY = {Visibility.ENTRYPOINT: "entry", Visibility.PRIVATE: "private"}


_NONE: CanonicalPiece = ("", -1, -1)  # a placeholder, told apart by identity


def _children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Call):
        return node.args
    raise TypeError(f"unknown expression node {type(node).__name__}")


class _OverBudget(Exception):
    """Raised inside the walk once the module is known to exceed a budget (caught below)."""


class _Encoder:
    """One walk over a module that emits its canonical lines (``build``) or only measures them.

    Every record is a ``CanonicalPiece``; its size follows from its fields' sizes (integers) before its
    text is built. Building is guarded in two ways:

    * Exponential growth needs a backslash in a record that will be escaped again (a *nested*
      record: anything but a line). The first time one appears, the whole module is measured with
      integers only (a second ``_Encoder`` with ``build=False``) and refused at once if it does not
      fit; a module without such escapes, nearly every real one, never pays for that walk.
    * Without that growth sizes only add up, and two running checks bound the building: the records
      built so far, the next one included, stay within ``max_work``; the finished lines plus every
      piece waiting to be embedded in the current line (``held``: each ends up inside it) stay
      within ``max_units``. Both are lower bounds of the final totals, so memory stays within about
      twice ``max_units`` and a refusal is a refusal of the full measurement too.

    Measuring builds no text (pieces carry their head text or none) and refuses nothing. Its sizes
    can be astronomically large; with ``cap`` every record size saturates there (a record is at
    least as large as each of its children, so every total below ``cap`` stays exact).
    """

    def __init__(self, module: Module, build: bool, max_units: int, max_work: int, cap: int | None) -> None:
        self.module = module
        self.build = build
        self.max_units = max_units
        self.max_work = max_work
        self.cap = cap
        self.measured: tuple[int, int] | None = None  # (units, work) once the escape walk has run
        self.lines: list[str] = []
        self.units = 0  # finished lines, LFs included
        self.work = 0  # every record built so far, lines included
        self.held = 0  # built pieces not yet embedded in the current line
        self.strings: dict[str, CanonicalPiece] = {}  # string -> its field
        self.vars: dict[str, CanonicalPiece] = {}  # name -> ``(var, name)``
        self.scalars: dict[str, CanonicalPiece] = {}  # name -> ``(type, name)``
        self.literals: dict[tuple[LiteralKind, str, str | None], tuple[CanonicalPiece, CanonicalPiece]] = {}

    # -- accounting -------------------------------------------------------------------------

    def admit(self, units: int, backslashes: int, consumed: int, nested: bool) -> None:
        """Account for a record of ``units`` that embeds pieces of ``consumed`` units, before it
        is built; ``nested`` records will be escaped again, lines will not."""
        work = self.work + units
        if not self.build:
            self.work = work
            return
        if backslashes and nested and self.measured is None:
            self.measure()
        held = self.held + units - consumed
        if work > self.max_work or self.units + held > self.max_units:
            raise _OverBudget
        self.work, self.held = work, held

    def measure(self) -> None:
        """Escapes may now double at every level above: measure everything, refuse if too big."""
        self.measured = _measure(self.module, self.max_units, self.max_work)
        units, work = self.measured
        if units > self.max_units or work > self.max_work:
            raise _OverBudget

    def leaf(self, piece: CanonicalPiece) -> CanonicalPiece:
        """A nested record made of string fields only (already encoded): account for it."""
        self.admit(piece[1], piece[2], 0, True)
        return piece

    def record(
        self, head: CanonicalPiece, children: Sequence[CanonicalPiece], nested: bool = True
    ) -> CanonicalPiece:
        """``head`` (string fields) followed by each child record embedded as an escaped field."""
        text, units, backslashes = head
        consumed = 0
        for _child, child_units, child_backslashes in children:
            escaped = child_units + child_backslashes
            units += escaped + (len(str(escaped)) if escaped < _SMALL else _digit_count(escaped)) + 3
            backslashes += 2 * child_backslashes
            consumed += child_units
        self.admit(units, backslashes, consumed, nested)
        if not self.build:
            if self.cap is not None and units > self.cap:
                units, backslashes = self.cap, min(backslashes, self.cap)
            return "", units, backslashes
        if len(children) == 1:
            child, child_units, child_backslashes = children[0]
            if child_backslashes:
                child = child.replace(BACKSLASH, _TWO_BACKSLASHES)
            return f"{text}s{child_units + child_backslashes}:{child};", units, backslashes
        parts = [text]
        for child, child_units, child_backslashes in children:
            if child_backslashes:
                child = child.replace(BACKSLASH, _TWO_BACKSLASHES)
            parts.append(f"s{child_units + child_backslashes}:{child};")
        return "".join(parts), units, backslashes

    def line(self, head: CanonicalPiece, *children: CanonicalPiece) -> None:
        text, units, _ = self.record(head, children, nested=False)
        self.units += units + 1
        if self.build:
            self.held -= units
            if self.units + self.held > self.max_units:
                raise _OverBudget
            self.lines.append(text)

    # -- strings ----------------------------------------------------------------------------

    def string(self, value: str) -> CanonicalPiece:
        piece = self.strings.get(value)
        if piece is None:
            piece = self.strings[value] = string_field(value)
        return piece

    def head(self, keyword: CanonicalPiece, *values: str) -> CanonicalPiece:
        text, units, backslashes = keyword
        for value in values:
            field_text, field_units, field_backslashes = self.string(value)
            text += field_text
            units += field_units
            backslashes += field_backslashes
        return text, units, backslashes

    # -- nodes ------------------------------------------------------------------------------

    def type(self, root: TypeRef) -> CanonicalPiece:
        """``(type, name, T...)``, bottom-up with an explicit stack (a node is pushed again, marked
        True, below its arguments, and built once they are done)."""
        if not root.arguments:
            return self.leaf(self.scalar(root.name))
        done: list[CanonicalPiece] = []
        todo: list[tuple[TypeRef, bool]] = [(root, False)]
        while todo:
            node, expanded = todo.pop()
            if not node.arguments:
                done.append(self.leaf(self.scalar(node.name)))
            elif not expanded:
                todo.append((node, True))
                todo.extend((arg, False) for arg in reversed(node.arguments))
            else:
                count = len(node.arguments)
                args = done[-count:]
                del done[-count:]
                done.append(self.record(self.head(_TYPE, node.name), args))
        return done[0]

    def scalar(self, name: str) -> CanonicalPiece:
        piece = self.scalars.get(name)
        if piece is None:
            piece = self.scalars[name] = self.head(_TYPE, name)
        return piece

    def literal(self, node: Literal) -> CanonicalPiece:
        """``(lit, V)``. Both records are encoded once per distinct literal (keyed by ``repr``,
        which tells ``0.0`` from ``-0.0`` and ``1`` from ``True``) but accounted for at every
        occurrence."""
        key = (node.kind, repr(node.value), node.brand)
        cached = self.literals.get(key)
        if cached is None:
            value_record = self.leaf(self.head(_NOTHING, *_literal_fields(node)))
            lit = self.record(_LIT, (value_record,))
            self.literals[key] = (value_record, lit)
            return lit
        value_record, lit = cached
        self.admit(value_record[1], value_record[2], 0, True)
        self.admit(lit[1], lit[2], value_record[1], True)
        return lit

    def var(self, node: Var) -> CanonicalPiece:
        piece = self.vars.get(node.name)
        if piece is None:
            piece = self.vars[node.name] = self.head(_VAR, node.name)
        return self.leaf(piece)

    def simple(self, node: Expr) -> CanonicalPiece | None:
        """The record of a variable or literal; None for a node with children."""
        if isinstance(node, Var):
            return self.var(node)
        if isinstance(node, Literal):
            return self.literal(node)
        return None

    def expr(self, root: Expr) -> CanonicalPiece:
        """``(lit, V)``, ``(var, n)``, ``(unary, op, E)``, ``(bin, op, E, E)`` and
        ``(call, name, null|T, E...)``, bottom-up with an explicit stack.

        Only nodes with children go on the stack: first to push their compound children, then
        again (marked True) to be built; variables and literals are encoded where their parent is
        built, compound children's records are taken from ``done``."""
        piece = self.simple(root)
        if piece is not None:
            return piece
        done: list[CanonicalPiece] = []
        todo: list[tuple[Expr, bool]] = [(root, False)]
        while todo:
            node, expanded = todo.pop()
            if not expanded:
                todo.append((node, True))
                for child in reversed(_children(node)):
                    if not isinstance(child, (Var, Literal)):
                        todo.append((child, False))
            elif isinstance(node, Binary):
                right = self.simple(node.right) or done.pop()
                left = self.simple(node.left) or done.pop()
                done.append(self.record(_BIN_HEADS[node.op], (left, right)))
            elif isinstance(node, Unary):
                done.append(self.record(_UNARY_HEADS[node.op], (self.simple(node.operand) or done.pop(),)))
            else:
                assert isinstance(node, Call)
                args = [self.simple(arg) or _NONE for arg in reversed(node.args)]
                for index, arg_piece in enumerate(args):
                    if arg_piece is _NONE:
                        args[index] = done.pop()
                args.reverse()
                if node.generic_type is None:
                    head = self.head(_CALL, node.name)
                    head = (head[0] + NULL_FIELD[0], head[1] + NULL_FIELD[1], head[2])
                else:
                    head = self.head(_CALL, node.name)
                    args.insert(0, self.type(node.generic_type))
                done.append(self.record(head, args))
        return done[0]

    def statements(self, body: Sequence[Stmt]) -> None:
        """One line per statement plus block markers, from a work stack (no recursion)."""
        todo: list[Stmt | CanonicalPiece] = list(reversed(body))
        while todo:
            item = todo.pop()
            if isinstance(item, tuple):
                self.line(item)
            elif isinstance(item, Set):
                self.line(self.head(_SET, item.name), self.expr(item.value))
            elif isinstance(item, Return):
                self.line(_RETURN, self.expr(item.value))
            elif isinstance(item, ExprStmt):
                self.line(_EXPR, self.expr(item.value))
            elif isinstance(item, If):
                self.line(_IF, self.expr(item.condition))
                todo.append(_ENDIF)
                todo.extend(reversed(item.else_))
                todo.append(_ELSE)
                todo.extend(reversed(item.then))
            elif isinstance(item, While):
                self.line(_WHILE, self.expr(item.condition))
                todo.append(_ENDWHILE)
                todo.extend(reversed(item.body))
            elif isinstance(item, ForRange):
                start = self.expr(item.start)
                self.line(self.head(_FOR, item.local), start, self.expr(item.end))
                todo.append(_ENDFOR)
                todo.extend(reversed(item.body))
            elif isinstance(item, Continue):
                self.line(_CONTINUE)
            elif isinstance(item, Break):
                self.line(_BREAK)
            else:
                raise TypeError(f"unknown statement node {type(item).__name__}")

    def walk(self) -> None:
        """The module's lines, in canonical order."""
        module = self.module
        self.line(_CANONICALIZER_LINE)
        self.line(self.head(_NOTHING, "module", module.id, module.version, module.target_sandbox_version))
        requests = sorted(
            module.capability_requests, key=lambda r: (ordinal_key(r.id), ordinal_key(r.reason or ""))
        )
        for request in requests:
            self.line(self.head(_NOTHING, "requires", request.id, request.reason or ""))
        for key, value in sorted(module.metadata, key=lambda item: ordinal_key(item[0])):
            self.line(self.head(_NOTHING, "metadata", key, value))
        for fn in sorted(module.functions, key=lambda f: ordinal_key(f.id)):
            head = self.head(_NOTHING, "fn", _VISIBILITY[fn.visibility], fn.id)
            self.line(head, self.type(fn.return_type))
            for param in fn.parameters:
                self.line(self.head(_NOTHING, "param", param.name), self.type(param.type))
            self.statements(fn.body)


_EVIDENCE_CAP = 2**63 - 1
"""Sizes beyond .NET's ``long`` are reported as this: hostile texts can measure thousands of
digits, which neither JSON consumers nor ``str(int)`` take."""


def _measure(module: Module, *limits: int) -> tuple[int, int]:
    """(units, work) of ``module``, exact while they stay within every limit given and the
    evidence cap; beyond that saturated just above them, so comparisons with the limits hold."""
    cap = max(_EVIDENCE_CAP, *limits) + 1
    walker = _Encoder(module, False, 0, 0, cap)
    walker.walk()
    return min(walker.units, cap), min(walker.work, cap)


def canonical_size(module: Module) -> tuple[int, int]:
    """(UTF-16 units of the canonical text, units of all records building it would create),
    computed with integers only, without building anything (exact, however large)."""
    walker = _Encoder(module, False, 0, 0, None)
    walker.walk()
    return walker.units, walker.work


def _amount(number: int) -> str:
    return f"{number:,}" if number <= _EVIDENCE_CAP else f"more than {_EVIDENCE_CAP:,}"


def _limit_error(units: int, work: int, max_units: int, max_work: int) -> DotBoxDError:
    return reject(
        "E-CANON-LIMIT",
        f"the canonical form of this module would be {_amount(units)} UTF-16 units"
        + ("" if units <= max_units else f"; the limit is {max_units:,}")
        + (
            ""
            if work <= max_work
            else f" and building it would copy {_amount(work)} units (limit {max_work:,})"
        ),
        hint="each nesting level escapes its child again, doubling backslashes and control "
        "characters; keep such string literals out of deeply nested expressions",
        units=min(units, _EVIDENCE_CAP),
        work=min(work, _EVIDENCE_CAP),
        max_units=max_units,
        max_work=max_work,
    )


def canonical_lines(
    module: Module, *, max_units: int = MAX_CANONICAL_UNITS, max_work: int = MAX_CANONICAL_WORK
) -> list[str]:
    """The canonical records of ``module``, one per line, without the ``\\n`` terminators.

    A module whose canonical text would exceed ``max_units`` UTF-16 units, or whose records would
    total more than ``max_work`` units, is rejected with ``E-CANON-LIMIT`` (with its sizes as
    evidence) before any string beyond those budgets is built."""
    encoder = _Encoder(module, True, max_units, max_work, None)
    try:
        encoder.walk()
        if encoder.units > max_units or encoder.work > max_work:
            raise _OverBudget
    except _OverBudget:
        units, work = encoder.measured or _measure(module, max_units, max_work)
        raise _limit_error(units, work, max_units, max_work) from None
    return encoder.lines


def canonical_text(
    module: Module, *, max_units: int = MAX_CANONICAL_UNITS, max_work: int = MAX_CANONICAL_WORK
) -> str:
    """DotBoxD's ``CanonicalModuleHasher.Serialize``: every record followed by ``\\n``.

    Raises ``DotBoxDError`` (``E-CANON-LIMIT``) when the text would exceed its budget."""
    lines = canonical_lines(module, max_units=max_units, max_work=max_work)
    lines.append("")
    return "\n".join(lines)


def module_hash(module: Module) -> str:
    """Lowercase SHA-256 hex of the UTF-8 canonical text (DotBoxD's ``CanonicalModuleHasher.Hash``)."""
    return sha256_hex(canonical_text(module))


__all__ = [
    "CANONICALIZER_ID",
    "MAX_CANONICAL_UNITS",
    "MAX_CANONICAL_WORK",
    "canonical_bytes",
    "canonical_lines",
    "canonical_size",
    "canonical_text",
    "encode_field",
    "encode_record",
    "escape_text",
    "format_f64",
    "format_guid",
    "hash_records",
    "module_hash",
    "ordinal_key",
    "sha256_hex",
    "utf16_len",
]
