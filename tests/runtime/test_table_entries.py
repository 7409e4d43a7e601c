"""Maps handed out of an owned loop (``flat_map_over``) keep their entries as a dict
(``TableEntries``) instead of a HAMT: every read, update, comparison and encoding must give what
the same map built the ordinary way (``MapValue(pairs)``) gives (issue 16)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core.ast import TypeRef
from dotboxd.core.values import (
    Guid,
    MapValue,
    SandboxFault,
    TableEntries,
    Value,
    check_typed,
    encode_typed,
    flat_map_over,
    value_token,
    values_equal,
)
from dotboxd.grammar import literals

T = TypeRef

_INT_KEYS = st.dictionaries(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1), max_size=40)
_TEXT_KEYS = st.dictionaries(st.text(max_size=6), st.integers(-5, 5) | st.booleans() | st.none(), max_size=40)
_PROBES: tuple[Value, ...] = (
    0,
    1,
    -1,
    2,
    True,
    False,
    1.0,
    0.0,
    None,
    "",
    "a",
    "1",
    Guid("00000000-0000-0000-0000-000000000001"),
)


def _both(table: dict[Value, Value]) -> tuple[MapValue, MapValue]:
    handed = flat_map_over(table)
    built = MapValue(table.items())
    return handed, built


def _agree(handed: MapValue, built: MapValue, probes: tuple[Value, ...]) -> None:
    assert len(handed) == len(built)
    assert handed.shape == built.shape
    assert handed.sorted_entries() == built.sorted_entries()
    assert handed == built and built == handed
    assert hash(handed) == hash(built)
    assert value_token(handed) == value_token(built)
    assert values_equal(handed, built)
    for key in probes:
        assert handed.contains(key) == built.contains(key), key
        try:
            expected: object = built.get(key)
        except SandboxFault as fault:
            expected = fault.code
        try:
            got: object = handed.get(key)
        except SandboxFault as fault:
            got = fault.code
        assert got == expected and type(got) is type(expected), key


@given(_INT_KEYS)
def test_int_keyed_hand_back_reads_like_a_hamt(table: dict[Value, Value]) -> None:
    handed, built = _both(table)
    assert isinstance(handed.entries, TableEntries) or not table  # an empty map stays the empty HAMT
    _agree(handed, built, (*_PROBES, *list(table)[:5]))
    kind = T("Map", (T("I32"), T("I32")))
    assert encode_typed(handed, kind) == encode_typed(built, kind)
    assert check_typed(handed, kind, literals) is None


@given(_TEXT_KEYS)
def test_text_keyed_hand_back_reads_like_a_hamt(table: dict[Value, Value]) -> None:
    handed, built = _both(table)
    assert isinstance(handed.entries, TableEntries) or not table  # an empty map stays the empty HAMT
    _agree(handed, built, (*_PROBES, *list(table)[:5]))


@given(_INT_KEYS, st.integers(-3, 3), st.integers(-3, 3))
def test_updates_of_a_hand_back_are_ordinary_versions(table: dict[Value, Value], key: int, item: int) -> None:
    handed, built = _both(table)
    before = handed.sorted_entries()
    for update in (lambda m: m.set(key, item), lambda m: m.remove(key), lambda m: m.set(True, item)):
        new_handed, new_built = update(handed), update(built)
        _agree(new_handed, new_built, (*_PROBES, key))
    assert not isinstance(handed.set(key, item).entries, TableEntries)  # a new version is a HAMT
    assert handed.sorted_entries() == before  # the receiver never changes
    _agree(handed, built, (*_PROBES, key))


def test_the_hand_back_copies_the_dict() -> None:
    """The owned loop's dict may be reused; nothing done to it reaches the value."""
    table: dict[Value, Value] = {1: 10, 2: 20}
    handed = flat_map_over(table)
    table[3] = 30
    table[1] = 0
    assert handed.sorted_entries() == [(1, 10), (2, 20)]


def test_the_trie_is_built_once_for_repeated_updates() -> None:
    handed = flat_map_over({k: k for k in range(100)})
    entries = handed.entries
    assert isinstance(entries, TableEntries)
    first = entries.trie()
    handed.set(500, 1)
    handed.remove(3)
    assert entries.trie() is first


def test_token_classes_never_alias() -> None:
    """``1``, ``1.0`` and ``True`` are different keys: a dict keyed by raw ints would alias them."""
    handed = flat_map_over({1: 1, 0: 0})
    assert not handed.contains(True) and not handed.contains(1.0) and not handed.contains(False)
    with pytest.raises(SandboxFault):
        handed.get(True)
    grown = handed.set(True, 7)
    assert len(grown) == 3 and grown.get(1) == 1 and grown.get(True) == 7


def test_other_key_classes_still_build_a_hamt() -> None:
    for table in ({1.5: 1, 2.5: 2}, {True: 1}, {None: 3}, {}):
        handed, built = _both(table)  # type: ignore[arg-type]
        assert not isinstance(handed.entries, TableEntries)
        _agree(handed, built, _PROBES)


@pytest.mark.parametrize(
    "table",
    [{1: [1]}, {"a": "b"}, {"a": 1, 2: 2}, {(1,): 1}],
)
def test_the_hand_back_fails_closed_on_what_no_owned_map_holds(table: dict[object, object]) -> None:
    with pytest.raises(TypeError):
        flat_map_over(table)  # type: ignore[arg-type]
