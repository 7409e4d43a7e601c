"""A host event (a ``dict`` given for a ``Map<String, scalar>`` parameter) read in one pass.

Why: a host calls a small predicate once per event, and reading the event used to cost more than
the kernel itself - four Python frames, and per key an ASCII test, a length and a running maximum,
then a cached shape looked up by its three numbers. Events of one stream have the same few key
sets, and everything a key set decides is fixed: whether every key is ASCII, the map's shape
(``text_keyed_map_shape``) and whatever a caller derives from that shape once (a fast lane: the
input's charges). So the reader checks each entry's classes (``type(...) is``, which never runs
host code), builds the entries, and looks the key set up by the tuple of its keys - only once
every key is known to be an exact ``str``, whose hash and equality are the interpreter's own. Key
sets are kept up to ``KEY_SETS_KEPT`` per reader, each of at most ``KEY_SET_KEYS`` keys and
``KEY_SET_UNITS`` code points, ``KEPT_UNITS`` in all (a huge or ever-changing key set is summed per
call instead).

What it accepts, and the value it builds, is exactly what ``runtime.execution``'s map reader
accepted and built before it: an exact ``dict`` whose keys are exact ASCII ``str`` and whose values
pass the element test, snapshotted first (``dict.copy``: a host thread cannot change what was
checked), entries keyed by token (``TokenEntries``). Anything else - a dict subclass, a mapping
that lies, a non-ASCII or non-``str`` key, a value of the wrong class or out of range - gives None,
and the caller takes its general routine, which also words the error.

A *projecting* reader (``event_projector``, issue 16) checks exactly the same and keeps its key
sets the same way, but builds no map: it hands back the checked snapshot itself (a private ``dict``
of exact ASCII ``str`` keys and checked scalar values), for an entry whose verifier found the event
used only by fused literal reads (``runtime.optimized.verify_projection``), which read the snapshot
directly. Where the derived value is None (charges not counted without a meter) it builds the map
after all, since the caller then charges the map's shape itself. ``event_map`` builds, from a
projected snapshot, the very map the plain reader would have built (for a read that falls back to
the exact stubs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from dotboxd.core.values import MapDraft, MapValue, Shape, TokenEntries, text_keyed_map_shape

KEY_SETS_KEPT = 256
"""Most key sets one reader keeps (as many as ``text_keyed_map_shape`` shares shapes)."""

KEY_SET_KEYS = 64
"""Most keys of a key set that is kept (a bigger event is summed on every call)."""

KEY_SET_UNITS = 4096
"""Most code points, all keys together, of a key set that is kept."""

KEPT_UNITS = 65536
"""Most code points of all the key sets one reader keeps together: a host that keeps many entries
(each with its readers) fed with ever-new long keys holds at most this much per reader."""

_Derived = TypeVar("_Derived")

Snapshot = dict[str, object]
"""A projected host event: the checked private copy of the host's dict (see the module docstring)."""

KeySet = tuple[Shape, _Derived] | tuple[()]
"""A key set's shape and what was derived from it; ``()`` for a key set the reader does not take."""


KeptSets = tuple[
    Callable[[tuple[str, ...]], "KeySet[_Derived] | None"],
    Callable[[tuple[str, ...]], "KeySet[_Derived]"],
    Callable[[tuple[str, ...]], "_Derived | None"],
]
"""``_key_sets``: the kept key sets' ``get``, what finds (and keeps) a key set, and the ``get`` of
the derived values of kept ASCII key sets that have one."""


def _key_sets(derive: Callable[[Shape], _Derived]) -> KeptSets[_Derived]:
    """One reader's kept key sets: their ``get`` (None for a key set not kept), what finds a key
    set's shape and derived value from its keys, keeping it when there is room, and - for the
    projector's common event, a kept ASCII key set whose derived value is not None - that value
    by its keys alone (one lookup; None for any other key set)."""
    key_sets: dict[tuple[str, ...], KeySet[_Derived]] = {}
    derived_of: dict[tuple[str, ...], _Derived] = {}
    kept_units = 0
    keeping = threading.Lock()  # host threads: the room test and the keeping are one step

    def key_set(keys: tuple[str, ...]) -> KeySet[_Derived]:
        """The shape of a map with these (exact ``str``) keys and scalar values and what ``derive``
        makes of it, kept when the key set is small enough and there is room; ``()`` when a key is
        not ASCII (the general routine reads such an event)."""
        nonlocal kept_units
        found: KeySet[_Derived] = ()
        if all(key.isascii() for key in keys):
            sizes = [len(key) for key in keys]  # ASCII: UTF-16 lengths
            shape = text_keyed_map_shape(len(keys), max(sizes, default=0), sum(sizes))
            found = (shape, derive(shape))
        units = sum(map(len, keys))
        if len(keys) > KEY_SET_KEYS or units > KEY_SET_UNITS:
            return found
        with keeping:  # only a key set not seen yet comes here: the common event never locks
            if keys not in key_sets and len(key_sets) < KEY_SETS_KEPT and kept_units + units <= KEPT_UNITS:
                key_sets[keys] = found
                if found and found[1] is not None:
                    derived_of[keys] = found[1]
                kept_units += units
        return found

    return key_sets.get, key_set, derived_of.get


def event_reader(
    value_ok: Callable[[object], bool],
    int_range: tuple[int, int] | None,
    derive: Callable[[Shape], _Derived],
) -> Callable[[object], tuple[MapValue, _Derived] | None]:
    """The reader of host events for one parameter (see the module docstring): ``value_ok`` is the
    element test of the value type, ``int_range`` the accepted range when the values are integers
    (tested inline, as ``value_ok`` would), ``derive`` what to keep per key set besides its shape
    (computed once per kept key set: a fast lane's input charges)."""
    seen, key_set, _ = _key_sets(derive)
    ints = int_range is not None
    lo, hi = int_range if int_range is not None else (0, -1)
    final = MapValue
    draft = MapDraft

    def read(raw: object) -> tuple[MapValue, _Derived] | None:
        if type(raw) is not dict:
            return None
        snapshot = raw.copy()  # a host thread cannot change what is checked
        entries = TokenEntries()
        for key, item in snapshot.items():
            if not (
                type(key) is str and ((type(item) is int and lo <= item <= hi) if ints else value_ok(item))
            ):
                return None
            entries[(str, key)] = (key, item)  # key_token, inlined
        found = seen(tuple(snapshot))  # exact ``str`` keys by now: hashed by the interpreter
        if found is None:
            found = key_set(tuple(snapshot))
        if not found:
            return None
        built = draft()  # plain stores, then the immutable class (``MapDraft``)
        built.entries = entries
        built.shape = found[0]
        built.__class__ = final
        return built, found[1]

    return read


def event_projector(
    value_ok: Callable[[object], bool],
    int_range: tuple[int, int] | None,
    derive: Callable[[Shape], _Derived],
) -> Callable[[object], tuple[MapValue | Snapshot, _Derived] | None]:
    """``event_reader``'s projecting twin (see the module docstring): the same checks, refusals and
    kept key sets; the checked snapshot instead of the map wherever the derived value is not None."""
    seen, key_set, derived_of = _key_sets(derive)
    if int_range is not None:
        return _int_projector(int_range, seen, key_set, derived_of)

    def project(raw: object) -> tuple[MapValue | Snapshot, _Derived] | None:
        if type(raw) is not dict:
            return None
        snapshot: Snapshot = raw.copy()  # private: what is checked is what the reads see
        for key, item in snapshot.items():
            if not (type(key) is str and value_ok(item)):
                return None
        # exact ``str`` keys by now: hashed by the interpreter
        return _projected(snapshot, tuple(snapshot), seen, key_set)

    return project


ONE_DIGIT = (1 << 30) - 1
"""The largest magnitude of a CPython one-digit integer: compared on the interpreter's fast path."""


def _int_projector(
    int_range: tuple[int, int],
    seen: Callable[[tuple[str, ...]], KeySet[_Derived] | None],
    key_set: Callable[[tuple[str, ...]], KeySet[_Derived]],
    derived_of: Callable[[tuple[str, ...]], _Derived | None],
) -> Callable[[object], tuple[MapValue | Snapshot, _Derived] | None]:
    """``event_projector`` for integer values (the usual event: ``Map<String, I32>``), its tests
    written out for them: per entry, the key's class, the value's class, and the value first
    against its range clipped to the one-digit integers (``ONE_DIGIT``: a bound such as ``-2**31``
    makes every comparison a generic one), then - only outside that - against the range itself.
    The same checks, refusals and kept key sets as the general projector."""
    lo, hi = int_range
    near_lo, near_hi = max(lo, -ONE_DIGIT), min(hi, ONE_DIGIT)

    def project(raw: object) -> tuple[MapValue | Snapshot, _Derived] | None:
        if type(raw) is not dict:
            return None
        snapshot: Snapshot = raw.copy()  # private: what is checked is what the reads see
        for key, item in snapshot.items():
            if (
                type(key) is not str
                or type(item) is not int
                or not (near_lo <= item <= near_hi or lo <= item <= hi)
            ):
                return None
        keys = tuple(snapshot)  # exact ``str`` keys by now: hashed by the interpreter
        derived = derived_of(keys)  # the common event: a kept key set with its charges
        if derived is not None:
            return snapshot, derived
        return _projected(snapshot, keys, seen, key_set)

    return project


def _projected(
    snapshot: Snapshot,
    keys: tuple[str, ...],
    seen: Callable[[tuple[str, ...]], KeySet[_Derived] | None],
    key_set: Callable[[tuple[str, ...]], KeySet[_Derived]],
) -> tuple[MapValue | Snapshot, _Derived] | None:
    """What both projectors answer for a checked snapshot whose key set's charges are not kept
    beside it: None for a refused key set, the map itself where the derived value is None (not
    counted without a meter: the caller charges the map's shape), the snapshot otherwise."""
    found = seen(keys)
    if found is None:
        found = key_set(keys)
    if not found:
        return None
    if found[1] is None:
        return _built(snapshot, found[0]), found[1]
    return snapshot, found[1]


def _built(snapshot: Snapshot, shape: Shape) -> MapValue:
    """The map of a checked snapshot (exact ASCII ``str`` keys, checked values) of that shape."""
    entries = TokenEntries()
    for key, item in snapshot.items():
        entries[(str, key)] = (key, item)  # key_token, inlined
    built: MapValue = MapDraft()  # plain stores, then the immutable class (``MapDraft``)
    built.entries = entries
    built.shape = shape
    built.__class__ = MapValue
    return built


def event_map(snapshot: Snapshot) -> MapValue:
    """The map the plain reader builds from the event whose projected snapshot is ``snapshot``:
    the same entries, the same (shared) shape. Only a projecting reader's snapshot is given here."""
    sizes = [len(key) for key in snapshot]  # ASCII keys (the reader admitted only them): UTF-16 lengths
    return _built(snapshot, text_keyed_map_shape(len(sizes), max(sizes, default=0), sum(sizes)))


__all__ = [
    "KEPT_UNITS",
    "KEY_SETS_KEPT",
    "KEY_SET_KEYS",
    "KEY_SET_UNITS",
    "Snapshot",
    "event_map",
    "event_projector",
    "event_reader",
]
