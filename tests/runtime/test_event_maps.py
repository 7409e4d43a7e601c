"""``core.event_maps``: a host event read in one pass, against the general routine.

The reader may only ever take an event the general routine (``coerce_host_value``) accepts, and must
build the very map it builds (entries, shape); everything else - hostile input included - it leaves
to the general routine (None) without running any of the host's code. Its per-key-set cache must
not change an answer, and stays bounded.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any

import pytest

from dotboxd.core import event_maps, literal_rules
from dotboxd.core.ast import TypeRef
from dotboxd.core.values import MapValue, SandboxFault, Shape, TokenEntries, coerce_host_value, shape_of
from dotboxd.runtime.execution import host_event_projector, host_event_reader

I32_MAP = TypeRef("Map", (TypeRef("String"), TypeRef("I32")))
BOOL_MAP = TypeRef("Map", (TypeRef("String"), TypeRef("Bool")))
F64_MAP = TypeRef("Map", (TypeRef("String"), TypeRef("F64")))


def _walked(value: MapValue) -> Shape:
    """The map's shape summed from its entries (not the one the reader stored)."""
    return shape_of(MapValue(list(value.entries.values())))


def _reader(ref: TypeRef = I32_MAP) -> Any:
    reader = host_event_reader(ref, lambda shape: ("derived", shape))
    assert reader is not None
    return reader


ACCEPTED: list[tuple[TypeRef, dict[str, Any]]] = [
    (I32_MAP, {"hp": 3, "level": 12}),
    (I32_MAP, {"level": 12, "hp": 3}),  # the same key set in another order
    (I32_MAP, {}),
    (I32_MAP, {"a": -(2**31), "b": 2**31 - 1}),
    (I32_MAP, {"": 0}),
    (I32_MAP, {f"k{i}": i for i in range(200)}),  # more keys than a kept key set
    (I32_MAP, {"x" * 5000: 1}),  # more key units than a kept key set
    (BOOL_MAP, {"on": True, "off": False}),
    (F64_MAP, {"x": 1.5, "y": -0.0}),
]


@pytest.mark.parametrize(("ref", "event"), ACCEPTED, ids=range(len(ACCEPTED)))
def test_the_reader_builds_the_general_routines_map(ref: TypeRef, event: dict[str, Any]) -> None:
    reader = _reader(ref)
    for _ in range(2):  # a key set seen for the first time, then kept (if small enough)
        found = reader(event)
        assert found is not None
        value, derived = found
        general = coerce_host_value(event, ref, literal_rules)
        assert type(value) is MapValue and value == general
        assert value.sorted_entries() == general.sorted_entries()
        assert value.shape == general.shape == _walked(value)
        assert type(value.entries) is TokenEntries
        assert derived == ("derived", value.shape)
        with pytest.raises(AttributeError):
            value.shape = Shape()  # type: ignore[misc]  # immutable, as every map


class _Str(str):
    __slots__ = ()


class _Int(int):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


class _Alarm:
    """A key whose hash and equality must never be consulted by the reader."""

    calls = 0

    def __hash__(self) -> int:
        _Alarm.calls += 1
        return hash("hp")

    def __eq__(self, other: object) -> bool:
        _Alarm.calls += 1
        raise RuntimeError("the reader ran host code")


class _LyingStr(str):
    """Equal to ``"hp"`` and hashed like it: a str subclass the cache must not mistake for it."""

    def __hash__(self) -> int:
        _Alarm.calls += 1
        return hash("hp")

    def __eq__(self, other: object) -> bool:
        _Alarm.calls += 1
        return True


REFUSED: list[Any] = [
    _Dict({"hp": 3}),
    OrderedDict(hp=3),
    {_Str("hp"): 3},
    {"hp": _Int(3)},
    {"hp": True},
    {"hp": 2**31},
    {"hp": -(2**31) - 1},
    {"hp": 1.0},
    {"h\u00e9": 1},  # not ASCII: the general routine reads it
    {1: 3},
    {None: 3},
    [("hp", 3)],
    "hp",
    None,
]


@pytest.mark.parametrize("event", REFUSED, ids=range(len(REFUSED)))
def test_anything_else_is_left_to_the_general_routine(event: Any) -> None:
    reader = _reader()
    reader({"hp": 1})  # a kept key set the refused events must not be matched against
    assert reader(event) is None


@pytest.mark.parametrize("make", [lambda: _reader(), lambda: _projector()], ids=["reader", "projector"])
def test_hostile_keys_are_never_hashed_or_compared(make: Any) -> None:
    reader = make()
    reader({"hp": 1, "level": 2})
    events = [{_Alarm(): 1, "level": 2}, {_LyingStr("hp"): 1, "level": 2}, {"level": 2, _LyingStr("hp"): 1}]
    _Alarm.calls = 0  # building the dicts hashed their keys
    for event in events:
        assert reader(event) is None
    assert _Alarm.calls == 0


def test_the_general_routine_refuses_what_the_reader_left_and_a_run_reports_it() -> None:
    for event in ({"hp": True}, {"hp": 2**31}, {1: 3}, _Dict({"hp": "x"})):
        with pytest.raises(SandboxFault):
            coerce_host_value(event, I32_MAP, literal_rules)


def test_a_read_event_is_a_snapshot() -> None:
    """The map read, and the projector's snapshot, are the event as it was when read."""
    event = {"hp": 3, "level": 12}
    found, projected = _reader()(event), _projector()(event)
    assert found is not None and projected is not None
    event["hp"] = -1
    event["new"] = 5
    assert found[0].sorted_entries() == [("hp", 3), ("level", 12)] and len(found[0]) == 2
    assert projected[0] == {"hp": 3, "level": 12}


def test_derive_runs_once_per_kept_key_set_and_the_cache_is_bounded() -> None:
    calls: list[Shape] = []
    reader = event_maps.event_reader(
        lambda item: False, (0, 10), lambda shape: calls.append(shape) or len(calls)
    )
    for _ in range(3):
        assert reader({"a": 1, "b": 2}) is not None
        assert reader({"b": 1, "a": 2}) is not None  # another order: another kept key set
    assert len(calls) == 2
    kept = event_maps.KEY_SETS_KEPT
    for i in range(kept + 50):  # past the bound: still read right, summed per call
        found = reader({f"k{i}": 1, "common": 2})
        assert found is not None and found[0].shape == _walked(found[0])
    before = len(calls)
    for i in range(kept + 40, kept + 50):  # not kept: derived again on every read
        reader({f"k{i}": 1, "common": 2})
    assert len(calls) == before + 10
    big = {f"k{i}": i for i in range(event_maps.KEY_SET_KEYS + 1)}
    reader = event_maps.event_reader(lambda item: False, (0, 100), lambda shape: calls.append(shape))
    before = len(calls)
    reader(big)
    reader(big)
    assert len(calls) == before + 2  # too many keys to keep


def test_a_non_ascii_key_set_is_remembered_as_not_read() -> None:
    reader = _reader()
    for _ in range(3):
        assert reader({"h\u00e9": 1}) is None
    general = coerce_host_value({"h\u00e9": 1}, I32_MAP, literal_rules)
    assert general.sorted_entries() == [("h\u00e9", 1)]


def test_only_string_keyed_scalar_maps_get_a_reader() -> None:
    assert host_event_reader(TypeRef("Map", (TypeRef("String"), TypeRef("String"))), lambda s: s) is None
    assert host_event_reader(TypeRef("Map", (TypeRef("I32"), TypeRef("I32"))), lambda s: s) is None
    assert host_event_reader(TypeRef("List", (TypeRef("I32"),)), lambda s: s) is None
    nested = TypeRef("Map", (TypeRef("String"), TypeRef("List", (TypeRef("I32"),))))
    assert host_event_reader(nested, lambda s: s) is None


def test_the_kept_key_sets_hold_a_bounded_number_of_code_points() -> None:
    """Ever-new long keys (a host fed hostile events) are kept only up to ``KEPT_UNITS`` code points
    in all; the events past it are read right, their key sets summed (and derived) per call."""
    calls: list[Shape] = []
    reader = event_maps.event_reader(lambda item: False, (0, 10), lambda shape: calls.append(shape))
    long = event_maps.KEY_SET_UNITS - 8
    fits = event_maps.KEPT_UNITS // long
    for i in range(fits + 5):
        event = {f"{i:08d}" + "k" * long: 1}  # KEY_SET_UNITS code points each
        for _ in range(2):
            found = reader(event)
            assert found is not None and found[0].shape == _walked(found[0])
    assert len(calls) == fits + 2 * 5  # the first ``fits`` key sets kept, the rest derived per read


def test_threads_never_keep_more_key_sets_than_the_bound() -> None:
    """Host threads reading ever-new long key sets at once: the room test and the keeping are one
    step, so the kept key sets never hold more than ``KEPT_UNITS`` code points together however the
    threads interleave (the switch interval is made tiny to interleave them as much as possible)."""
    derived: list[Shape] = []
    reader = event_maps.event_reader(lambda item: False, (0, 10), lambda shape: derived.append(shape))
    long = event_maps.KEY_SET_UNITS - 8
    fits = event_maps.KEPT_UNITS // long
    events = [{f"{i:08d}" + "k" * long: 1} for i in range(4 * fits)]
    start = threading.Barrier(8)

    def read_all(offset: int) -> None:
        start.wait()
        for index in range(len(events)):
            assert reader(events[(index + offset * 7) % len(events)]) is not None

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=read_all, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    derived.clear()
    for event in events:  # a kept key set is not derived again
        reader(event)
    kept = len(events) - len(derived)
    assert kept == fits  # as many as fit, never more (nor fewer: each key set is kept once)


# --- the projecting twin (``event_projector``, rule 25's snapshot) ------------------------------


def _projector(ref: TypeRef = I32_MAP, derive: Any = None) -> Any:
    projector = host_event_projector(ref, derive or (lambda shape: ("derived", shape)))
    assert projector is not None
    return projector


@pytest.mark.parametrize(("ref", "event"), ACCEPTED, ids=range(len(ACCEPTED)))
def test_the_projector_hands_the_checked_snapshot_whose_map_is_the_readers(
    ref: TypeRef, event: dict[str, Any]
) -> None:
    projector, reader = _projector(ref), _reader(ref)
    for _ in range(2):  # a key set seen for the first time, then kept (if small enough)
        found, read = projector(event), reader(event)
        assert found is not None and read is not None
        snapshot, derived = found
        assert type(snapshot) is dict and snapshot == event and snapshot is not event  # a private copy
        assert derived == read[1] == ("derived", read[0].shape)
        built = event_maps.event_map(snapshot)
        assert type(built) is MapValue and type(built.entries) is TokenEntries
        assert built == read[0] and built.sorted_entries() == read[0].sorted_entries()
        assert built.shape is read[0].shape  # the shared shape: charged the same


@pytest.mark.parametrize("event", REFUSED, ids=range(len(REFUSED)))
def test_the_projector_refuses_what_the_reader_refuses(event: Any) -> None:
    projector = _projector()
    projector({"hp": 1})
    assert projector(event) is None


def test_without_charges_the_projector_builds_the_map() -> None:
    """A key set whose charges are not counted without a meter (derived None): the caller charges
    the map's shape itself, so it gets the map the reader builds."""
    projector, reader = _projector(derive=lambda shape: None), _reader()
    for event in ({"hp": 3, "level": 12}, {}):
        found, read = projector(event), reader(event)
        assert found is not None and read is not None and found[1] is None
        assert type(found[0]) is MapValue and found[0] == read[0] and found[0].shape is read[0].shape


def test_only_string_keyed_scalar_maps_get_a_projector() -> None:
    assert host_event_projector(TypeRef("Map", (TypeRef("String"), TypeRef("String"))), lambda s: s) is None
    assert host_event_projector(TypeRef("List", (TypeRef("I32"),)), lambda s: s) is None


I64_MAP = TypeRef("Map", (TypeRef("String"), TypeRef("I64")))
EDGES = [
    0,
    *(sign * (2**30 + d) for sign in (1, -1) for d in (-2, -1, 0, 1)),  # around the one-digit bound
    *(sign * (2**31 + d) for sign in (1, -1) for d in (-2, -1, 0, 1)),  # around the I32 bounds
    *(sign * (2**63 + d) for sign in (1, -1) for d in (-2, -1, 0, 1)),  # around the I64 bounds
]


@pytest.mark.parametrize("ref", [I32_MAP, I64_MAP], ids=["I32", "I64"])
def test_the_integer_projector_takes_exactly_the_readers_values_around_every_bound(ref: TypeRef) -> None:
    """The integer projector tests a value against its range clipped to the one-digit integers
    first, then against the range itself: at each value around the clip and the type's bounds it
    takes (and refuses) exactly what the reader takes, alone and next to an accepted value."""
    projector, reader = _projector(ref), _reader(ref)
    for value in EDGES:
        for event in ({"hp": value}, {"hp": 1, "level": value}, {"level": value, "hp": 1}):
            found, read = projector(event), reader(event)
            assert (found is None) == (read is None), (ref.arguments[1].name, value)
            if found is not None and read is not None:
                assert found[0] == event and event_maps.event_map(found[0]) == read[0]


class _Watched(int):
    """An integer whose comparisons would be host code: recorded, never expected."""

    calls = 0

    def __le__(self, other: object) -> bool:
        _Watched.calls += 1
        return True

    def __ge__(self, other: object) -> bool:
        _Watched.calls += 1
        return True

    def __lt__(self, other: object) -> bool:
        _Watched.calls += 1
        return False

    def __gt__(self, other: object) -> bool:
        _Watched.calls += 1
        return False


def test_the_integer_projector_never_compares_an_int_subclass() -> None:
    projector = _projector()
    projector({"hp": 1})
    for value in (_Watched(3), _Watched(2**40)):
        assert projector({"hp": value}) is None and projector({"hp": 1, "level": value}) is None
    assert _Watched.calls == 0
