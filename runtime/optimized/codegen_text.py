"""Code generation of owned strings: a bulk loop that builds a text in a parts list.

Why: ``s = string.concatBudgeted(s, x)`` costs a stub call and a meter settlement per piece, and
the common producers of ``x`` (``int32.toStringInvariant``, a literal) one more. When the loop owns
``s`` (``owned_text.owned_text``), the generated code instead takes a parts list and the rooms
before the loop, charges each concatenation inline and appends the piece, and joins the text once
after the loop (``text_parts``):

    p, L, h, m, r = _s_sown(R, v, kind)          # before the loop
    ...                                         # each s = string.concatBudgeted(s, x), in the loop
    x = _p_i2s(e); n = _p_slen(x); c = L + n; q = FIXED + 2 * c
    if f >= q and h >= 2 and c <= m and r >= c + n:
        f = f - q; h = h - 2; r = r - (c + n); L = c; _p_part(p, x)
    else:
        _s_sox(R, f, lr, producer_site, concat_site, p, e)   # settles, then the exact stubs raise
                                                     # (_s_soxl for a literal, _s_soxv for a local)
    ...
    v = _s_smat(R, p)                            # after the loop

``FIXED`` is the fuel of the statement's segments (the statement, the call nodes, the operands, as
the reference charges them) plus the producer's and the concatenation's fixed fuel
(``text_parts``, read from ``core.costs``), ``2 * c`` the concatenation's per-byte fuel on its result
of ``c`` UTF-16 units. Every check is a final total of a counter that only grows, so the statement
fits if and only if every one of its charges fits: when the test declines, the exact stubs fail at
the very charge the reference fails at (fuel, host calls, ``maxStringLength``,
``maxTotalStringBytes`` before ``maxAllocatedBytes``: the room ``r`` is the smaller of the two).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dotboxd.core import ast as ir
from dotboxd.core import costs
from dotboxd.core.values import utf16_len
from dotboxd.runtime.locations import NO_ORDINAL

from . import pyast as P
from .owned_text import FROM_INT, FROM_LITERAL, FROM_LOCAL, owned_text, piece_kind
from .text_chunk import NUMBER_TEXT, NUMBER_UNITS
from .text_parts import CONCAT_FIXED_FUEL, LITERAL_FUEL, PRODUCER_CALLS, TO_STRING_FUEL, UNIT_FUEL

if TYPE_CHECKING:
    from collections.abc import Container

    from .codegen import _FunctionEmitter

_R, _F = P.name("R"), P.name("f")
_OWN_STMTS = {FROM_INT: 6, FROM_LITERAL: 4, FROM_LOCAL: 4}
"""The statements an owned concatenation emits itself when its operands need none (the producer's
text and length for a number, the result, the fuel, the units, the ``if``)."""
FALLBACKS = {FROM_INT: "_s_sox", FROM_LITERAL: "_s_soxl", FROM_LOCAL: "_s_soxv"}
"""The exact fallback of a concatenation, by its piece's kind (``text_parts.exact_fallbacks``)."""


@dataclass(slots=True)
class OwnedText:
    """The slots of a text a checked bulk loop builds in a parts list."""

    slot: str
    """The text's own local (``v<n>``): stale while the loop runs, rebound by ``_s_smat`` after it."""
    parts: str
    """``p<n>``: the parts list (only ``_p_part``, ``_s_sox`` and ``_s_smat`` may receive it)."""
    length: str
    """``t<n>``: the text's UTF-16 length so far."""
    calls: str
    """``t<n>``: host calls left (``maxHostCalls`` minus those made)."""
    longest: str
    """``t<n>``: ``maxStringLength``."""
    room: str
    """``t<n>``: UTF-16 units of new text that still fit both the string-byte and allocation budgets."""
    kind: int
    """The producer kind of every piece (``owned_text.PRODUCERS``)."""
    forms: list[ConcatForm] = field(default_factory=list)
    """The loop's concatenations as generated, in order (``codegen_strchunk`` reads them)."""


@dataclass(slots=True)
class ConcatForm:
    """One owned concatenation as generated: what a pre-checked fast chunk (``codegen_strchunk``)
    needs to append the same piece without the checks."""

    kind: int
    """The piece's producer kind (``owned_text.FROM_*``)."""
    stmts: list[ast.stmt] | None
    """The statements the concatenation emitted, in its block, or None when they are not one run."""
    fixed: int
    """The fuel of the statement besides the concatenation's per-byte fuel (``FIXED``)."""
    piece: ast.expr
    """The piece's text as a fast chunk computes it: ``_p_strchunk_i2s(e)``, or a literal's fetched slot."""
    operand: ast.expr | None
    """``e`` of ``_p_i2s(e)`` (None for a literal)."""
    most: int
    """The most UTF-16 units the piece can have."""


def take_owned_text(
    emitter: _FunctionEmitter, stmt: ir.While | ir.ForRange, inline: Container[str]
) -> OwnedText | None:
    """Before a checked bulk loop that builds an owned text: ``p, L, h, m, r = _s_sown(R, v, kind)``."""
    found = owned_text(emitter.plan, emitter.info, stmt, inline)
    if found is None:
        return None
    name, kind = found
    new = emitter.slots.new
    owned = OwnedText(emitter.var(name), new("p"), new("t"), new("t"), new("t"), new("t"), kind)
    targets: list[ast.expr] = [
        P.store(owned.parts),
        *(P.store(s) for s in (owned.length, owned.calls, owned.longest, owned.room)),
    ]
    call = P.call("_s_sown", _R, P.name(owned.slot), P.const(kind))
    emitter.emit(P.Assign([P.Tuple(targets, P.STORE)], call))
    return owned


def release_owned_text(emitter: _FunctionEmitter, owned: OwnedText) -> None:
    """After the loop: ``v = _s_smat(R, p)`` settles the pieces and joins them, once."""
    emitter.emit(P.assign(owned.slot, P.call("_s_smat", _R, P.name(owned.parts))))


def _segment_total(emitter: _FunctionEmitter) -> int:
    segment = emitter.segment
    return sum(segment.charges) if segment is not None else 0


def owned_concat(emitter: _FunctionEmitter, owned: OwnedText, node: ir.Call) -> ast.expr:
    """``s = string.concatBudgeted(s, x)`` onto the chunk's owned text (the module docstring's form)."""
    receiver, piece = node.args
    block, before = emitter.out, len(emitter.out)
    emitter.expr(receiver)  # its expression fuel; the stale operand is not read
    kind = piece_kind(piece)  # the loop's kind, or for FROM_MIXED this statement's own
    new = emitter.slots.new
    length: ast.expr
    value: ast.expr
    fast_piece: ast.expr
    number: ast.expr | None = None
    most = NUMBER_UNITS
    if kind == FROM_INT:
        assert isinstance(piece, ir.Call)
        emitter.charge(costs.EXPRESSION_FUEL)  # the toStringInvariant node (``expr`` charges it first)
        operand = emitter.expr(piece.args[0])
        if emitter.out is not block or len(block) != before:
            block = []  # the operand needed statements of its own (a check, a paid segment): no fast form
        fixed = _segment_total(emitter) + TO_STRING_FUEL
        producer_site = emitter.take_located_segment(emitter.ordinal(piece))
        text, count = new("t"), new("t")
        emitter.emit(P.assign(text, P.call("_p_i2s", operand)))
        emitter.emit(P.assign(count, P.call("_p_slen", P.name(text))))
        value, length = P.name(text), P.name(count)
        fast_piece, number = P.call(NUMBER_TEXT, operand), operand
    elif kind == FROM_LITERAL:
        assert isinstance(piece, ir.Literal) and isinstance(piece.value, str)
        emitter.charge(costs.EXPRESSION_FUEL)  # the literal node
        fixed = _segment_total(emitter) + LITERAL_FUEL
        producer_site = emitter.take_segment()
        index = emitter.tables.text(piece)
        operand = P.const(index)
        text = new("t")
        assert emitter.chunk is not None
        emitter.chunk.view_stmts.append(P.assign(text, P.call("_s_tlit", _R, operand)))
        most = utf16_len(piece.value)
        value, length, fast_piece = P.name(text), P.const(most), P.name(text)
    else:
        assert kind == FROM_LOCAL
        operand = emitter.expr(piece)
        fixed, producer_site = 0, 0
        count = new("t")
        emitter.emit(P.assign(count, P.call("_p_u16len", operand)))
        value, length, fast_piece = operand, P.name(count), operand
    fixed += _segment_total(emitter) + CONCAT_FIXED_FUEL
    at = emitter.ordinal(node)
    concat_site = emitter.take_segment() if at == NO_ORDINAL else emitter.take_located_segment(at)
    result, fuel = new("t"), new("t")
    emitter.emit(P.assign(result, P.add(P.name(owned.length), length)))
    emitter.emit(P.assign(fuel, P.add(P.const(fixed), P.mul(P.const(UNIT_FUEL), P.name(result)))))
    units: ast.expr = P.name(result)
    if kind != FROM_LOCAL:
        units = P.name(new("t"))
        emitter.emit(P.assign(units.id, P.add(P.name(result), length)))
    calls = PRODUCER_CALLS[kind] + costs.HOST_CALL_COUNT
    fits = P.and_(
        P.compare(_F, P.GTE, P.name(fuel)),
        P.compare(P.name(owned.calls), P.GTE, P.const(calls)),
        P.compare(P.name(result), P.LTE, P.name(owned.longest)),
        P.compare(P.name(owned.room), P.GTE, units),
    )
    charged = [
        P.assign("f", P.sub(_F, P.name(fuel))),
        P.assign(owned.calls, P.sub(P.name(owned.calls), P.const(calls))),
        P.assign(owned.room, P.sub(P.name(owned.room), units)),
        P.assign(owned.length, P.name(result)),
        P.expr_stmt(P.call("_p_part", P.name(owned.parts), value)),
    ]
    exact = P.call(
        FALLBACKS[kind],
        _R,
        _F,
        emitter.lref(),
        P.const(producer_site),
        P.const(concat_site),
        P.name(owned.parts),
        operand,
    )
    emitter.emit(P.if_(fits, charged, [P.expr_stmt(exact)]))
    emitted = block[before:] if emitter.out is block and len(block) == before + _OWN_STMTS[kind] else None
    owned.forms.append(ConcatForm(kind, emitted, fixed, fast_piece, number, most))
    return P.name(owned.slot)


__all__ = ["ConcatForm", "OwnedText", "owned_concat", "release_owned_text", "take_owned_text"]
