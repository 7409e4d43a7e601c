"""Sandbox values: tag-strict equality and map keys, copy-on-write, UTF-16 rules, shapes, encoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core.ast import TypeRef
from dotboxd.core.values import (
    Guid,
    ListValue,
    MapValue,
    OpaqueId,
    RecordValue,
    SandboxFault,
    SandboxPath,
    SandboxUri,
    Shape,
    coerce_host_value,
    compare_ordinal,
    decode_typed,
    encode_typed,
    key_token,
    shape_of,
    utf16_len,
    utf16_substring,
    value_token,
    values_equal,
)
from dotboxd.grammar import literals

T = TypeRef


def L(t: TypeRef) -> TypeRef:
    return T("List", (t,))


def M(k: TypeRef, v: TypeRef) -> TypeRef:
    return T("Map", (k, v))


def test_map_keys_of_different_kinds_never_collide() -> None:
    m = MapValue().set(1, "int").set(True, "bool").set(1.0, "float")
    assert len(m) == 3
    assert m.get(1) == "int" and m.get(True) == "bool" and m.get(1.0) == "float"
    assert key_token(1) != key_token(True)


def test_equality_is_tag_strict() -> None:
    assert not values_equal(1, True)
    assert not values_equal(1, 1.0)
    assert not values_equal(ListValue([1]), ListValue([True]))
    assert values_equal(ListValue([1, 2]), ListValue([1, 2]))
    assert values_equal(-0.0, 0.0)
    assert value_token(-0.0) == value_token(0.0)
    assert not values_equal("a", SandboxPath("a"))
    assert not values_equal(SandboxPath("a"), SandboxUri("a"))


def test_map_equality_ignores_insertion_order() -> None:
    a = MapValue().set("x", 1).set("y", 2)
    b = MapValue().set("y", 2).set("x", 1)
    assert values_equal(a, b)
    assert hash(a) == hash(b)
    assert not values_equal(a, MapValue().set("x", 1))


def test_copy_on_write_never_changes_the_source() -> None:
    base = ListValue([1, 2])
    grown = base.append(3)
    assert base.items == (1, 2) and grown.items == (1, 2, 3)
    m = MapValue().set("k", 1)
    m2 = m.set("k", 2)
    m3 = m2.remove("k")
    assert m.get("k") == 1 and m2.get("k") == 2 and len(m3) == 0 and len(m2) == 1
    with pytest.raises(AttributeError):
        base.items = ()  # type: ignore[misc]


def test_map_get_missing_key_is_not_found() -> None:
    with pytest.raises(SandboxFault) as info:
        MapValue().get("nope")
    assert info.value.category == "NotFound"


def test_remove_of_missing_key_is_a_noop() -> None:
    m = MapValue().set(1, 2)
    assert values_equal(m.remove(5), m)


def test_utf16_length_counts_astral_characters_twice() -> None:
    assert utf16_len("abc") == 3
    assert utf16_len("é") == 1
    assert utf16_len("😀") == 2
    assert utf16_len("a😀b") == 4


def test_ordinal_compare_uses_utf16_code_units() -> None:
    # U+FF61 (a BMP char above the surrogate range) sorts after U+1F600 by code point,
    # but before it by UTF-16 code units (0xFF61 > 0xD83D): ordinal says the astral one is smaller.
    assert compare_ordinal("😀", "\uff61") == -1
    assert ("😀" > "\uff61") is True  # Python's code-point order disagrees
    assert (
        compare_ordinal("a", "b") == -1 and compare_ordinal("b", "a") == 1 and compare_ordinal("x", "x") == 0
    )


def test_substring_in_utf16_units() -> None:
    assert utf16_substring("hello", 1, 3) == "ell"
    assert utf16_substring("a😀b", 1, 2) == "😀"
    assert utf16_substring("abc", 3, 0) == ""
    for start, length in [(-1, 1), (0, -1), (2, 2), (4, 0)]:
        with pytest.raises(SandboxFault) as info:
            utf16_substring("abc", start, length)
        assert info.value.code == "R-STRING-RANGE"
    with pytest.raises(SandboxFault):
        utf16_substring("a😀b", 1, 1)  # would split the surrogate pair
    with pytest.raises(SandboxFault):
        utf16_substring("a😀b", 2, 1)


@given(st.text(max_size=20), st.integers(0, 25), st.integers(0, 25))
def test_substring_matches_utf16_slicing(text: str, start: int, length: int) -> None:
    units = text.encode("utf-16-le")
    n = len(units) // 2
    try:
        got = utf16_substring(text, start, length)
    except SandboxFault:
        in_range = start + length <= n
        if in_range:  # then it must have been a split pair
            piece = units[2 * start : 2 * (start + length)]
            with pytest.raises(UnicodeDecodeError):
                piece.decode("utf-16-le")
        return
    assert got.encode("utf-16-le") == units[2 * start : 2 * (start + length)]


def test_shapes_count_nodes_elements_depth_and_text() -> None:
    assert shape_of(5) == Shape()
    assert shape_of("ab") == Shape(1, 0, 0, 0, 0, 2, 4)
    inner = ListValue(["x", "yz"])
    outer = ListValue([inner, ListValue([])])
    s = shape_of(outer)
    assert s.nodes == 1 + 3 + 1
    assert s.elements == 2 + 2 + 0
    assert s.max_list == 2 and s.depth == 2 and s.max_string == 2 and s.string_bytes == 6
    m = MapValue().set("k", ListValue([1, 2, 3]))
    assert shape_of(m).max_map == 1 and shape_of(m).max_list == 3 and shape_of(m).elements == 4
    assert shape_of(RecordValue([1, "abc"])).max_list == 2


@given(st.lists(st.lists(st.integers(-5, 5), max_size=4), max_size=6))
def test_incremental_shapes_equal_recomputed_shapes(rows: list[list[int]]) -> None:
    built = ListValue([])
    m = MapValue()
    for i, row in enumerate(rows):
        item = ListValue(row)
        built = built.append(item)
        m = m.set(i % 3, item)
    assert built.shape == ListValue(built.items).shape
    assert m.shape == MapValue(m.entries.values()).shape


def test_typed_decoding_is_directed_by_the_declared_type() -> None:
    rules = literals
    assert decode_typed(1, T("I64"), rules) == 1
    assert decode_typed(1, T("F64"), rules) == 1.0 and isinstance(decode_typed(1, T("F64"), rules), float)
    assert decode_typed(None, T("Unit"), rules) is None
    assert decode_typed({"type": "PlayerId", "value": "p-1"}, T("PlayerId"), rules) == OpaqueId(
        "PlayerId", "p-1"
    )
    m = decode_typed([["b", 2], ["a", 1]], M(T("String"), T("I32")), rules)
    assert isinstance(m, MapValue) and m.get("a") == 1
    assert encode_typed(m, M(T("String"), T("I32"))) == [["a", 1], ["b", 2]]
    g = decode_typed("0F8FAD5B-D9CB-469F-A165-70867728950E", T("Guid"), rules)
    assert g == Guid("0f8fad5b-d9cb-469f-a165-70867728950e")


@pytest.mark.parametrize(
    ("data", "type_ref"),
    [
        (True, T("I32")),
        (1.0, T("I32")),
        (2**31, T("I32")),
        (2**63, T("I64")),
        ("1", T("I32")),
        (1, T("Bool")),
        (0, T("Unit")),
        (1e400, T("F64")),
        ("../x", T("SandboxPath")),
        ("https://u:p@h/", T("SandboxUri")),
        ("not-a-guid", T("Guid")),
        ("\ud800", T("String")),
        ([1, "x"], L(T("I32"))),
        ([[1, 1], [1, 2]], M(T("I32"), T("I32"))),
        ([1], T("Record", (T("I32"), T("I32")))),
        ({"type": "ItemId", "value": "i"}, T("PlayerId")),
        ({"type": "PlayerId", "value": "bad value!"}, T("PlayerId")),
    ],
)
def test_typed_decoding_rejects_mismatches(data: object, type_ref: TypeRef) -> None:
    with pytest.raises(SandboxFault) as info:
        decode_typed(data, type_ref, literals)
    assert info.value.category == "InvalidInput"


def test_host_values_are_rebuilt_and_checked() -> None:
    raw = [1, 2]
    v = coerce_host_value(raw, L(T("I32")), literals)
    raw.append(3)
    assert isinstance(v, ListValue) and v.items == (1, 2)
    forged = ListValue([1, 2], shape=Shape(0, 0, 0, 0, 0, 0, 0))
    rebuilt = coerce_host_value(forged, L(T("I32")), literals)
    assert isinstance(rebuilt, ListValue) and rebuilt.shape.elements == 2
    for bad, t in [
        (True, T("I32")),
        (float("nan"), T("F64")),
        (SandboxPath("../etc"), T("SandboxPath")),
        ("../etc", T("SandboxPath")),
        ("https://user@host/", T("SandboxUri")),
        (object(), T("String")),
        ({1: 2}, M(T("String"), T("I32"))),
    ]:
        with pytest.raises(SandboxFault):
            coerce_host_value(bad, t, literals)


# --- incremental shapes (map.set / list.add must equal a full walk, in O(1) when they can) -------

_leaf = st.one_of(
    st.integers(-3, 3),
    st.text(alphabet="ab\u00e9\U0001f600", max_size=5),
    st.booleans(),
    st.floats(-2.0, 2.0, allow_nan=False),
)
_values = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(ListValue),
        st.lists(st.tuples(st.integers(0, 3), inner), max_size=3).map(MapValue),
        st.lists(inner, min_size=1, max_size=3).map(RecordValue),
    ),
    max_leaves=12,
)


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4), _values), max_size=25))
def test_map_updates_keep_the_shape_of_a_full_walk(ops: list[tuple[bool, int, object]]) -> None:
    m = MapValue()
    for is_set, key, value in ops:
        before = m
        m = m.set(key, value) if is_set else m.remove(key)  # type: ignore[arg-type]
        assert m.shape == MapValue(m.entries.values()).shape
        assert before.shape == MapValue(before.entries.values()).shape  # the source is untouched


@given(st.lists(_values, max_size=20))
def test_list_appends_keep_the_shape_of_a_full_walk(items: list[object]) -> None:
    built = ListValue([])
    for item in items:
        built = built.append(item)  # type: ignore[arg-type]
        assert built.shape == ListValue(built.items).shape


def test_replacing_a_scalar_value_does_not_walk_the_map(monkeypatch: pytest.MonkeyPatch) -> None:
    from dotboxd.core import values as values_module

    m = MapValue((k, k) for k in range(100))
    m = m.set("longest text", ListValue([1, 2, 3]))

    def no_walk(entries: object) -> Shape:
        raise AssertionError("the whole map was walked")

    monkeypatch.setattr(values_module, "_map_shape", no_walk)
    updated = m.set(7, 70).set(8, "x").set("longest text", ListValue([1, 2, 3, 4]))
    monkeypatch.undo()
    assert updated.shape == MapValue(updated.entries.values()).shape


def test_replacing_the_only_holder_of_a_maximum_walks_again() -> None:
    m = MapValue([(1, "a" * 40), (2, "b"), (3, ListValue([1] * 9))])
    shorter = m.set(1, "c").set(3, 0)
    assert shorter.shape.max_string == 1 and shorter.shape.max_list == 0 and shorter.shape.depth == 1
    assert shorter.shape == MapValue(shorter.entries.values()).shape


def test_frozen_constructor_builds_ordinary_frozen_records() -> None:
    from dataclasses import FrozenInstanceError

    from dotboxd.core.values import frozen_constructor, new_shape

    fast = new_shape(3, 2, 2, 0, 1, 5, 10)
    slow = Shape(3, 2, 2, 0, 1, 5, 10)
    assert type(fast) is Shape and fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    with pytest.raises(FrozenInstanceError):
        fast.nodes = 4  # type: ignore[misc]
    assert new_shape() == Shape() and new_shape(nodes=2, depth=1) == Shape(nodes=2, depth=1)
    with pytest.raises(TypeError):
        new_shape(1, 2, 3, 4, 5, 6, 7, 8)

    class Plain:  # not a dataclass: nothing to speed up, the class itself is the constructor
        pass

    assert frozen_constructor(Plain) is Plain


@given(
    steps=st.lists(
        st.tuples(st.integers(0, 40), st.one_of(st.integers(-5, 5), st.text(max_size=3))), max_size=60
    )
)
def test_list_versions_sharing_a_buffer_stay_independent(steps: list[tuple[int, object]]) -> None:
    """``append`` on any version (the newest one, which grows the shared buffer in place, or an
    older one, which must copy) never changes what another version holds; shapes match a fresh
    build of the same items."""
    versions = [ListValue([])]
    model: list[tuple[object, ...]] = [()]
    for pick, item in steps:
        i = pick % len(versions)
        versions.append(versions[i].append(item))  # type: ignore[arg-type]  # ints and texts are values
        model.append((*model[i], item))
    for version, expected in zip(versions, model, strict=True):
        assert version.items == expected and tuple(version) == expected and len(version) == len(expected)
        assert [version[k] for k in range(len(version))] == list(expected)
        assert version.shape == ListValue(expected).shape  # type: ignore[arg-type]
        with pytest.raises(IndexError):
            version[len(version)]
