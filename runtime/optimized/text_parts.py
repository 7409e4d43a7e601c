"""Owned strings at run time: the parts list a bulk loop builds a text in, and its settlement.

Why: a loop the code generator proved to own a text (``owned_text.owned_text``) appends each
concatenated piece to a private list and charges the concatenation inline from a few locals
(fuel, host calls left, the longest text allowed, the string-byte room); see ``codegen_text``. The
meter must still hold the reference's counters wherever it can be observed: every chunk reservation
and every failure path synchronizes it (``stubs.sync``), and the loop's end materializes the text.
This module is that bookkeeping:

* ``take`` (``_s_sown``) starts the list with the current text and returns the rooms, read from the
  meter; nothing else in the loop charges host calls, string bytes or allocation, so the rooms stay
  exact while the loop runs;
* ``settle`` charges the pieces appended since the last settlement: their string bytes (and the
  same amount of allocation), their host calls (by built-in name, in the reference's order) and
  their fuel charges' deadline cadence, all derived from the pieces and the producer kind, with the
  same ``core.costs`` numbers the stubs use one call at a time;
* ``materialize`` (``_s_smat``) settles and joins the pieces once: building a text of length n is
  O(n) in time, whatever the number of pieces;
* ``exact_fallback`` builds ``_s_sox``: when an inline check declines, it settles, materializes and
  runs the exact stubs of the producer and the concatenation, which fail at the charge the reference
  fails at.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import Any, Final

from dotboxd.core import costs
from dotboxd.core.values import utf16_len
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import Meter

from .owned_text import _DECIMAL, CONCAT, FROM_INT, FROM_LITERAL, FROM_LOCAL, FROM_MIXED, PRODUCERS, TO_STRING

_CONCAT_COST: Final = costs.BUILTIN_COSTS[CONCAT]
_TO_STRING_COST: Final = costs.BUILTIN_COSTS[TO_STRING]
_TEXT_WALK: Final = costs.shape_walk_fuel(1)
"""Walk fuel of a new text's shape (one node)."""

CONCAT_FIXED_FUEL: Final = _CONCAT_COST.base + _TEXT_WALK
"""Fuel of one concatenation before its per-byte fuel (base, then the result's shape walk)."""
TO_STRING_FUEL: Final = _TO_STRING_COST.base + _TEXT_WALK
"""Fuel of one ``int32.toStringInvariant`` (base, then the result's shape walk)."""
LITERAL_FUEL: Final = _TEXT_WALK
"""Fuel of a text literal's shape charge (the literal's expression fuel is in its segment)."""
UNIT_FUEL: Final = _CONCAT_COST.per_result_byte * costs.string_bytes(1)
"""A concatenation's per-byte fuel per UTF-16 unit of its result."""
assert all(
    _CONCAT_COST.per_result_byte * costs.string_bytes(n) == UNIT_FUEL * n for n in (0, 1, 7, 4096, 2**40)
), "the inline per-unit fuel of an owned concatenation no longer matches core.costs"

_CONCAT_TICKS: Final = (1 if _CONCAT_COST.base else 0) + (1 if _TEXT_WALK else 0)
_PRODUCER_TICKS: Final = {
    FROM_INT: (1 if _TO_STRING_COST.base else 0) + (1 if _TEXT_WALK else 0),
    FROM_LITERAL: 1 if _TEXT_WALK else 0,
}
"""Fuel charges (the deadline cadence's unit) of a producer: what the fast stubs settle for it."""
PRODUCER_CALLS: Final = {FROM_INT: 1, FROM_LITERAL: 0, FROM_LOCAL: 0}
"""Host calls a piece's producer makes, by the piece's kind (``int32.toStringInvariant`` is a pure
built-in)."""
_STRING_BYTES_PER_UNIT: Final = costs.string_bytes(1)


class TextParts:
    """The pieces of an owned text and how much of them the meter has been charged for."""

    __slots__ = ("done", "fast_from", "kind", "length", "literals", "parts")

    def __init__(self, parts: list[str], kind: int) -> None:
        self.parts = parts
        """The text's pieces; ``parts[0]`` is the text the loop started from."""
        self.done = 1
        """Pieces already charged (the first is the text itself, charged when it was made)."""
        self.length = utf16_len(parts[0])
        """UTF-16 length of ``parts[:done]`` joined."""
        self.kind = kind
        """The producer kind of every piece after the first (``owned_text.PRODUCERS``)."""
        self.literals: dict[str, int] = {}
        """The loop's literal pieces and their UTF-16 lengths (``literal_text``)."""
        self.fast_from = -1
        """Where the pre-checked fast chunk running now started appending (``text_chunk.fits``),
        or -1 when none runs: only that chunk's pieces are charged their fuel by ``text_chunk.done``."""


def _internal(message: str) -> SandboxError:
    return SandboxError("R-HOST-INTERNAL", message)


def settle(meter: Meter, record: TextParts) -> tuple[int, int]:
    """Charge the concatenations appended since the last settlement: per piece of ``u`` units onto a
    text of ``L``, the producer's new text (``2u`` string bytes, none for a local) and the result
    (``2 (L + u)``), the host calls, and the deadline cadence of the stubs' fuel charges. Returns
    (the concatenations settled, the sum of their results' UTF-16 lengths): what a pre-checked fast
    chunk charges as fuel (``text_chunk.done``), measured in the same pass."""
    parts, done, kind = record.parts, record.done, record.kind
    count = len(parts) - done
    if count <= 0:
        return 0, 0
    new = parts[done:]
    known = record.literals
    literal_count = 0
    pieces: Iterator[int]  # measured once, as the lengths accumulate (no list of them: issue 16)
    if kind == FROM_INT:
        pieces = map(len, new)  # decimal digits and sign: one unit each
    elif kind == FROM_LOCAL:
        pieces = map(utf16_len, new)
    else:  # literals (measured when fetched), or numbers' texts and literals none of which is a number
        pieces = map(known.get, new, map(len, new))
        literal_count = sum(map(known.__contains__, new))
    number_count = count - literal_count if kind in (FROM_INT, FROM_MIXED) else 0
    lengths = list(accumulate(pieces, initial=record.length))  # the text's length after each piece
    length = lengths[-1]
    results = sum(lengths) - lengths[0]
    units = results + (length - lengths[0] if kind != FROM_LOCAL else 0)  # the pieces' own texts
    nonempty = len(lengths) - bisect_right(lengths, 0, 1)  # results of length 0: no per-byte fuel
    ticks = (
        number_count * _PRODUCER_TICKS[FROM_INT]
        + literal_count * _PRODUCER_TICKS[FROM_LITERAL]
        + count * _CONCAT_TICKS
        + (nonempty if UNIT_FUEL else 0)
    )
    producer_calls = number_count * PRODUCER_CALLS[FROM_INT] * costs.HOST_CALL_COUNT
    concat_calls = (CONCAT, count * costs.HOST_CALL_COUNT)
    calls: tuple[tuple[str, int], ...] = (concat_calls,)
    if producer_calls:  # the built-in the first piece calls first is recorded first, as the reference does
        number = (TO_STRING, producer_calls)
        calls = (number, concat_calls) if new[0] not in known else (concat_calls, number)
    text_bytes = _STRING_BYTES_PER_UNIT * units
    limits = meter.limits
    if (
        length > limits.max_string_length
        or meter.string_bytes + text_bytes > limits.max_total_string_bytes
        or meter.allocated_bytes + text_bytes > limits.max_allocated_bytes
        or meter.host_calls + producer_calls + concat_calls[1] > limits.max_host_calls
    ):
        # the inline checks refuse every piece that would not fit, so only code that skipped them
        # gets here (the verifier admits none): refuse the run rather than record or join the text
        raise _internal("owned text went past a limit its inline checks enforce")
    meter.settle_owned_text(text_bytes, ticks, calls)
    record.done = len(parts)
    record.length = length
    return count, results


def take(state: Any, text: str, kind: int) -> tuple[list[str], int, int, int, int]:
    """Before a bulk loop that builds ``text``: (its parts list, its UTF-16 length, the host calls
    left, ``maxStringLength``, the string-byte room in units). The room is the smaller of what
    ``maxTotalStringBytes`` and ``maxAllocatedBytes`` leave, since every new text charges both by
    the same amount and nothing else in the loop charges either."""
    if type(text) is not str or kind not in PRODUCERS:
        raise _internal("owned text is not a text")
    if state.owned_text is not None:
        raise _internal("owned text taken twice")
    meter: Meter = state.meter
    limits = meter.limits
    record = TextParts([text], kind)
    state.owned_text = record
    byte_room = min(
        limits.max_total_string_bytes - meter.string_bytes,
        limits.max_allocated_bytes - meter.allocated_bytes,
    )
    host_calls = limits.max_host_calls - meter.host_calls
    return (
        record.parts,
        record.length,
        host_calls,
        limits.max_string_length,
        byte_room // _STRING_BYTES_PER_UNIT,
    )


def materialize(state: Any, parts: list[str]) -> str:
    """After the loop (or before an exact fallback): settle the pieces and join them, once."""
    record = state.owned_text
    if record is None or record.parts is not parts:
        raise _internal("owned text was not taken")
    settle(state.meter, record)
    state.owned_text = None
    return "".join(parts)


def exact_fallbacks(
    to_string: Callable[..., tuple[Any, int]],
    literal: Callable[..., tuple[Any, int]],
    concat: Callable[..., int],
) -> dict[str, Callable[..., None]]:
    """``_s_sox`` / ``_s_soxl`` / ``_s_soxv(R, f, lr, producer_site, concat_site, parts, x)``: an owned
    concatenation whose inline check declined, with a number's text (``to_string`` of the int
    ``x``), a literal (``literal`` of text index ``x``) or a local (``x`` itself, nothing to charge)
    as its piece. Each settles and materializes the text, then charges the producer and the
    concatenation through the exact stubs, which raise exactly where the reference does."""

    def fallback(producer: Callable[..., tuple[Any, int]] | None) -> Callable[..., None]:
        def run(state: Any, f: int, lref: int, site: int, concat_site: int, parts: list[str], x: Any) -> None:
            text = materialize(state, parts)
            piece = x
            if producer is not None:
                piece, f = producer(state, f, lref, site, x)
            concat(state, f, lref, concat_site, text, piece)
            raise _internal("owned concatenation check disagreed with the meter")

        return run

    return {"_s_sox": fallback(to_string), "_s_soxl": fallback(literal), "_s_soxv": fallback(None)}


def literal_text(state: Any, index: int) -> str:
    """``_s_tlit``: the text of literal ``index`` of the artifact's table, uncharged - for a loop
    that appends the literal as a piece and charges its shape inline each time it is evaluated. The
    owned text being built learns the literal's UTF-16 length (``settle`` measures its pieces by it)."""
    record = state.owned_text
    if record is None:
        raise _internal("a literal piece outside an owned text")
    text: str = state.texts[index][0]
    if record.kind == FROM_MIXED and _DECIMAL.match(text):
        raise _internal("a literal piece that reads as a number in a mixed owned text")
    record.literals[text] = utf16_len(text)
    return text


__all__ = [
    "CONCAT_FIXED_FUEL",
    "FROM_INT",
    "FROM_LITERAL",
    "FROM_LOCAL",
    "LITERAL_FUEL",
    "PRODUCER_CALLS",
    "TO_STRING_FUEL",
    "UNIT_FUEL",
    "TextParts",
    "exact_fallbacks",
    "literal_text",
    "materialize",
    "settle",
    "take",
]
