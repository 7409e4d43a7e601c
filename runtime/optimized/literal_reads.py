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
limit or the fuel would refuse, a deadline check falls due, the key is missing - it calls the very
two stubs the unfused code calls, in the same order, from the same state. A run that has its meter
takes the two fast paths' meter branches inline (``sync``, ``Meter.settle_value`` for the literal,
then ``Meter.settle_fuel`` for the read), and where one of them declines it calls what that fast
path calls then (its exact stub, with the same arguments), so no settlement is asked twice and the
clock is read at the same charges. Either way the value, the error, the failing charge, the usage
at that point and the deadline cadence are the unfused stubs' (and through them the meter's).
``tests/optimized/test_literal_reads.py`` runs both backends at every fuel budget around each fused
read, and compares the clock reads with the unfused compilation's.

Projected events (rule 25, ``verify_projection``): the fast lane may pass, for an entry's host event
that the verifier found used only as the map of fused reads, the event's checked snapshot - a plain
``dict`` of exact ASCII ``str`` keys and checked scalar values (``core.event_maps.event_projector``)
- instead of the map built from it. No value of a kernel is a ``dict``, so ``type(m) is dict`` tells
the two apart. The lazy paths read the snapshot by key where they read the map's entries by token
(the same answer, the same size); every other path first builds the map the plain reader would have
built (``event_map``) and goes on exactly as with it.

Inline reads (rule 29, ``inline_reads``): in such an entry the code generator writes the lazy path
of ``_fused_get`` / ``_fused_has`` for a snapshot into the generated function itself, in front of
the stub call. Any change to those lazy paths (their conditions, their updates, their order of
charges) must be made to ``inline_reads.form`` too; ``tests/optimized/test_inline_reads.py`` holds
the two to the reference at every fuel budget and limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from dotboxd.core import costs
from dotboxd.core.event_maps import Snapshot, event_map
from dotboxd.core.values import MapValue, Value

from .fastops import READ_FUEL_TABLE, WALK_FUEL_TABLE

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
_WALKS: Final = len(WALK_FUEL_TABLE)
_read_fuel = costs.read_fuel
_MISSING: Final = object()
"""What a fused ``get`` finds under a key its map does not hold."""
_walk_fuel = costs.shape_walk_fuel


_Stubs = tuple[Stub, Stub, Stub, Stub]
"""(the literal's stub, its exact stub, the read's stub, its exact stub)."""


def _fused_get(stubs: _Stubs, sync: Callable[[Any, int, int], Any]) -> Stub:
    text, _, read, _ = stubs
    with_meter = _with_meter(False, stubs, sync)

    def stub(
        state: Any, f: int, lref: int, tsite: int, index: int, rsite: int, m: MapValue | Snapshot
    ) -> tuple[Value, int]:
        if not state.lazy:
            return with_meter(state, f, lref, tsite, index, rsite, m)
        # a fast-lane run without its meter yet (``pending``)
        totals = state.totals
        paid = f - totals[tsite]
        size = state.literals[index]  # -1: not counted without a meter
        strings = state.strings + size
        if paid >= 0 and size >= 0 and strings <= state.room:
            item: Any
            if type(m) is dict:  # a projected host event (rule 25): its checked snapshot, by key
                item = m.get(state.texts[index][0], _MISSING)  # a string literal (rule 23)
                n = len(m)
            else:
                entries = m.entries  # type: ignore[union-attr]  # a map: not a dict
                entry = entries.get((str, state.texts[index][0]))
                item = _MISSING if entry is None else entry[1]
                n = len(entries)
            if item is not _MISSING:  # a missing key: the exact read raises
                after = paid - totals[rsite] - (READ_FUEL_TABLE[n] if n < _TABLED else _read_fuel(n))
                ticks = state.ticks + 1
                if after >= 0 and ticks < _EVERY:
                    state.strings = strings
                    state.left = paid  # what the literal's ``sync`` would have written
                    state.ticks = ticks
                    return item, after
        key, f = text(state, f, lref, tsite, index)
        return read(state, f, lref, rsite, event_map(m) if type(m) is dict else m, key)

    stub.__name__ = GET
    return stub


def _fused_has(stubs: _Stubs, sync: Callable[[Any, int, int], Any]) -> Stub:
    text, _, read, _ = stubs
    with_meter = _with_meter(True, stubs, sync)

    def stub(
        state: Any, f: int, lref: int, tsite: int, index: int, rsite: int, m: MapValue | Snapshot
    ) -> tuple[Value, int]:
        if not state.lazy:
            return with_meter(state, f, lref, tsite, index, rsite, m)
        # as ``_fused_get``; a missing key is an answer here, not a refusal
        size = state.literals[index]
        strings = state.strings + size
        totals = state.totals
        paid = f - totals[tsite]
        if size >= 0 and paid >= 0 and strings <= state.room:
            ticks = state.ticks + 1
            projected = type(m) is dict  # a projected host event (rule 25): its checked snapshot
            entries: Any = m if projected else m.entries  # type: ignore[union-attr]  # a map
            n = len(entries)
            after = paid - totals[rsite] - (READ_FUEL_TABLE[n] if n < _TABLED else _read_fuel(n))
            if after >= 0 and ticks < _EVERY:  # the literal's charges, then the read's
                state.ticks = ticks
                state.strings = strings
                state.left = paid
                key = state.texts[index][0]  # a string literal (rule 23)
                return (key if projected else (str, key)) in entries, after
        key, f = text(state, f, lref, tsite, index)
        return read(state, f, lref, rsite, event_map(m) if type(m) is dict else m, key)

    stub.__name__ = HAS
    return stub


def _with_meter(contains: bool, stubs: _Stubs, sync: Callable[[Any, int, int], Any]) -> Stub:
    """A fused read in a run that has its meter: ``fastops.text_literal``'s meter branch, then the
    read's (``contains``: ``map.containsKey``'s, else ``map.get``'s), inline; where one declines,
    what that fast path calls then (its exact stub), so no settlement is asked twice."""
    _, exact_text, read, exact_read = stubs

    def stub(
        state: Any, f: int, lref: int, tsite: int, index: int, rsite: int, m: MapValue | Snapshot
    ) -> tuple[Value, int]:
        if type(m) is dict:  # a projected host event (rule 25): the map the plain reader builds
            m = event_map(m)
        totals = state.totals
        paid = f - totals[tsite]
        if paid >= 0:
            key, shape = state.texts[index]
            nodes = shape.nodes
            after = paid - (WALK_FUEL_TABLE[nodes] if nodes < _WALKS else _walk_fuel(nodes))
            meter = sync(state, paid, 0)
            if meter.settle_value(after, 1 if after != paid else 0, 0, shape):
                entries = m.entries  # type: ignore[union-attr]  # a map by now (built above)
                entry = entries.get((str, key))
                if contains or entry is not None:
                    n = len(entries)
                    done = after - totals[rsite] - (READ_FUEL_TABLE[n] if n < _TABLED else _read_fuel(n))
                    if meter.settle_fuel(done, 1):
                        return (entry is not None if contains else entry[1]), done  # type: ignore[index]
                return exact_read(state, after, lref, rsite, m, key)  # as the read's fast path does
        key, f = exact_text(state, f, lref, tsite, index)  # as the literal's fast path does
        return read(state, f, lref, rsite, m, key)

    return stub


def literal_read_stubs(
    text: Stub, exact_text: Stub, builtin: Callable[[str], Stub], exact: Callable[[str], Stub], sync: Any
) -> Mapping[str, Stub]:
    """The fused stubs by name, over the stubs the unfused code calls - ``text`` (``_s_text``) and
    ``builtin(name)`` (``_s_i_map_get``, ``_s_i_map_containsKey``: fast, then exact) - the exact
    stubs their fast paths fall back to (``exact_text``, ``exact(name)``), and ``stubs.sync``."""
    return {
        GET: _fused_get((text, exact_text, builtin("map.get"), exact("map.get")), sync),
        HAS: _fused_has((text, exact_text, builtin("map.containsKey"), exact("map.containsKey")), sync),
    }


__all__ = ["ARITY", "GET", "HAS", "READS", "literal_read_stubs"]
