"""Fused reads of a map at a text literal: ``map.get(m, "hp")`` and ``map.containsKey(m, "hp")``.

Why (issue 16): a predicate over a host event reads each field as ``map.get(ev, "field")``, which
the generated code used to evaluate as two stub calls - the literal (``_s_text``: a new text value,
charged as one) and then the read (``_s_i_map_get``) - each a Python frame and a result tuple, for
what in a fast-lane run without a meter yet (``fastlane.LazyRunState``, ``pending``) is a handful of
integer updates. The fused stubs here make one call of both:

    t, f = _s_lrget(R, f, lr, text_site, text_index, read_site, m)
    t, f = _s_lrhas(R, f, lr, text_site, text_index, read_site, m)

``text_site`` is the fuel segment ``_s_text`` would have paid (it closes the literal's operands),
``text_index`` the literal in the artifact's text table and ``read_site`` the segment the read's
stub would have paid, located at the read's call node (``tables.located_segment``).

Exactness: the fast path is taken only when the run state is armed without a meter (``lazy``) and
*both* calls would have taken their own lazy path (``fastops.text_literal``, then
``fastops._map_get`` / ``_map_contains``) - the literal's segment paid and its text bytes within the
room, the read's segment and read fuel paid, the fuel tick short of a deadline check, and (for
``get``) the key present. It then makes exactly the updates those two paths make, in one step: the
literal's text bytes (``strings``), the fuel the literal's ``sync`` would have written (``left``),
the read's fuel tick (``ticks``), and the fuel returned. Whenever any of that does not hold - a
meter exists, a limit or the fuel would refuse, a deadline check falls due, the key is missing - it
calls the very two stubs the unfused code calls, in the same order, from the same state, so the
value, the error, the failing charge, the usage at that point and the deadline cadence are theirs
(and through them the meter's). ``tests/optimized/test_literal_reads.py`` runs both backends at
every fuel budget around each fused read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from dotboxd.core import costs
from dotboxd.core.values import MapValue, Value

from .fastops import READ_FUEL_TABLE

Stub = Callable[..., tuple[Value, int]]

GET: Final = "_s_lrget"
"""``map.get(m, <text literal>)``, fused."""
HAS: Final = "_s_lrhas"
"""``map.containsKey(m, <text literal>)``, fused."""
READS: Final = {GET: "map.get", HAS: "map.containsKey"}
"""Fused stub -> the built-in whose call with a literal key it stands for."""
ARITY: Final = 7
"""``(R, f, lr, text_site, text_index, read_site, m)``."""

_EVERY: Final = costs.DEADLINE_EVERY_FUEL_CHARGES
_TABLED: Final = len(READ_FUEL_TABLE)
_read_fuel = costs.read_fuel


def _fused_get(text: Stub, get: Stub) -> Stub:
    def stub(
        state: Any, f: int, lref: int, tsite: int, index: int, rsite: int, m: MapValue
    ) -> tuple[Value, int]:
        if state.lazy:  # a fast-lane run without its meter yet: ``pending``
            totals = state.totals
            paid = f - totals[tsite]
            size = state.literals[index]  # -1: not counted without a meter
            strings = state.strings + size
            if paid >= 0 and size >= 0 and strings <= state.room:
                entries = m.entries
                entry = entries.get((str, state.texts[index][0]))  # a string literal (rule 23)
                if entry is not None:
                    n = len(entries)
                    after = paid - totals[rsite] - (READ_FUEL_TABLE[n] if n < _TABLED else _read_fuel(n))
                    ticks = state.ticks + 1
                    if after >= 0 and ticks < _EVERY:
                        state.strings = strings
                        state.left = paid  # what the literal's ``sync`` would have written
                        state.ticks = ticks
                        return entry[1], after
        key, f = text(state, f, lref, tsite, index)
        return get(state, f, lref, rsite, m, key)

    stub.__name__ = GET
    return stub


def _fused_has(text: Stub, has: Stub) -> Stub:
    def stub(
        state: Any, f: int, lref: int, tsite: int, index: int, rsite: int, m: MapValue
    ) -> tuple[Value, int]:
        if state.lazy:  # as ``_fused_get``; a missing key is an answer here, not a refusal
            totals = state.totals
            paid = f - totals[tsite]
            size = state.literals[index]
            strings = state.strings + size
            if paid >= 0 and size >= 0 and strings <= state.room:
                key = state.texts[index][0]  # a string literal (rule 23)
                entries = m.entries
                n = len(entries)
                after = paid - totals[rsite] - (READ_FUEL_TABLE[n] if n < _TABLED else _read_fuel(n))
                ticks = state.ticks + 1
                if after >= 0 and ticks < _EVERY:
                    state.strings = strings
                    state.left = paid
                    state.ticks = ticks
                    return (str, key) in entries, after
        key, f = text(state, f, lref, tsite, index)
        return has(state, f, lref, rsite, m, key)

    stub.__name__ = HAS
    return stub


def literal_read_stubs(text: Stub, builtin_stub: Callable[[str], Stub]) -> Mapping[str, Stub]:
    """The fused stubs by name, over ``text`` (the ``_s_text`` stub generated code calls) and the
    stubs of the two reads (``builtin_stub(name)``: the same fast-then-exact stub ``_s_i_map_*``)."""
    return {
        GET: _fused_get(text, builtin_stub("map.get")),
        HAS: _fused_has(text, builtin_stub("map.containsKey")),
    }


__all__ = ["ARITY", "GET", "HAS", "READS", "literal_read_stubs"]
