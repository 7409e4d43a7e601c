"""Pre-checked fast chunks of owned strings: the rooms of a whole chunk checked once, at its start.

Why (issue 16): an owned concatenation (``codegen_text``) checks four rooms and updates four
locals per piece - fuel, host calls, ``maxStringLength``, the string-byte room - which is most of
the loop's interpreter work (``string_build`` ran at ~3.4x plain CPython). Yet a piece's length is
bounded: ``int32.toStringInvariant`` returns at most 11 UTF-16 units and a literal is the same text
every time. So at a chunk's reservation the worst growth of its ``n`` iterations is known in closed
form (``core.costs.text_appends_*``): when the worst case fits every room, no check inside the
chunk can fail, and the chunk's body only appends its pieces
(``for i in _range(k, k + n): _p_part(p, _p_strchunk_i2s(x))``). Its charges are then derived from the pieces
themselves when the chunk ends, in the pass that settles their bytes and host calls:

* ``fits`` (``_s_strfits(R, f, n, fixed, most)``): the text's pending pieces settled, does the
  worst case of ``n`` iterations (every piece ``most`` units, each iteration ``fixed`` fuel besides
  the concatenation's per-byte fuel) fit the fuel ``f``, the host calls, ``maxStringLength`` and
  the string-byte and allocation room? It records where the chunk starts appending;
* ``done`` (``f, L, h, r = _s_strdone(R, f, p, fixed)``): settles the chunk's pieces (their
  string bytes, allocation, host calls and deadline cadence, ``text_parts.settle``, which refuses
  any that went past a limit), charges their fuel (``fixed`` per piece plus the per-byte fuel of
  each result) and hands the checked form's locals back, recomputed from the meter: the text's
  length, the host calls left and the room.

Every check of the checked form is a final total of a counter that only grows, so when the worst
case fits, every concatenation of the chunk would have passed its checks: the fast chunk charges
exactly what the checked one would, and fails nowhere. When the worst case does not fit, the chunk
runs the checked form, which fails exactly where the reference does. ``done`` does not trust the
generated code either: were a piece appended past a limit (a tampered ``fits`` or its arguments),
it refuses the run (``R-HOST-INTERNAL``) before the text or the meter can be read.
"""

from __future__ import annotations

from typing import Any, Final

from dotboxd.core import costs
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import Meter

from .owned_text import FROM_INT, FROM_LITERAL
from .text_parts import PRODUCER_CALLS, UNIT_FUEL, TextParts, settle

FAST_KINDS: Final = (FROM_INT, FROM_LITERAL)
"""The producer kinds whose piece length a chunk can bound before it runs (a local's cannot)."""
NUMBER_TEXT: Final = "_p_strchunk_i2s"
"""The pure helper a fast chunk makes a number's text with (``str``; the checked form's ``_p_i2s``
is ``int.__repr__``, the same text for an int, ~25 ns slower a call on CPython 3.11)."""
NUMBER_UNITS: Final = len(str(-(2**31)))
"""The longest text ``int32.toStringInvariant`` returns (``-2147483648``)."""
_BYTES_PER_UNIT: Final = costs.string_bytes(1)
assert UNIT_FUEL * costs.text_appends_result_units(3, 2, 5) == costs.text_appends_fuel(3, 2, 5, 0), (
    "the per-unit fuel of owned concatenations no longer matches core.costs"
)


def _internal(message: str) -> SandboxError:
    return SandboxError("R-HOST-INTERNAL", message)


def _record(state: Any) -> TextParts:
    record = state.owned_text
    if record is None:
        raise _internal("a fast owned-text chunk without an owned text")
    return record  # type: ignore[no-any-return]


def rooms(meter: Meter) -> tuple[int, int]:
    """(host calls left, new-text room in UTF-16 units): the checked form's ``h`` and ``r``, from
    the meter (``text_parts.take`` computes the same two at the take)."""
    limits = meter.limits
    byte_room = min(
        limits.max_total_string_bytes - meter.string_bytes,
        limits.max_allocated_bytes - meter.allocated_bytes,
    )
    return limits.max_host_calls - meter.host_calls, byte_room // _BYTES_PER_UNIT


def fits(state: Any, f: int, n: int, fixed: int, most: int) -> bool:
    """``_s_strfits``: whether ``n`` iterations, each one concatenation of a piece of at most ``most``
    units and ``fixed`` fuel besides the concatenation's per-byte fuel, fit every room in the worst
    case. The reservation just synchronized the meter, so the rooms are the meter's."""
    record = _record(state)
    if n <= 0 or record.kind not in FAST_KINDS:
        return False
    meter: Meter = state.meter
    settle(meter, record)  # nothing is pending right after a reservation; cheap when so
    length = record.length
    results = costs.text_appends_result_units(length, most, n)
    calls, room = rooms(meter)
    if not (
        costs.text_appends_fuel(length, most, n, fixed) <= f
        and (PRODUCER_CALLS[record.kind] + costs.HOST_CALL_COUNT) * n <= calls
        and length + most * n <= meter.limits.max_string_length
        and results + most * n <= room  # each result, and each producer's own new text
    ):
        return False
    record.fast_from = len(record.parts)
    return True


def done(state: Any, f: int, parts: list[str], fixed: int) -> tuple[int, int, int, int]:
    """``_s_strdone``: after a fast chunk, settle its pieces and charge their fuel; (the exact fuel,
    the text's length, the host calls left, the room), the checked form's locals."""
    record = _record(state)
    if record.parts is not parts or record.fast_from != record.done:
        raise _internal("a fast owned-text chunk that fits did not start")
    record.fast_from = -1
    meter: Meter = state.meter
    count, results = settle(meter, record)  # refuses pieces past a string, byte or call limit
    f -= count * fixed + UNIT_FUEL * results
    if f < 0:
        raise _internal("a fast owned-text chunk went past its fuel")
    calls, room = rooms(meter)
    return f, record.length, calls, room


__all__ = ["FAST_KINDS", "NUMBER_TEXT", "NUMBER_UNITS", "done", "fits", "rooms"]
