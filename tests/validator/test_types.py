"""Semantic sandbox types: resolution, spellings, brands, depth and map keys."""

from __future__ import annotations

import pytest

from dotboxd.core.ast import TypeRef
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.types import (
    BOOL,
    F64,
    GUID,
    I32,
    I64,
    MAX_TYPE_DEPTH,
    SANDBOX_PATH,
    STRING,
    UNIT,
    ListType,
    MapType,
    OpaqueIdType,
    RecordType,
    SandboxType,
    brand_name_problem,
    is_map_key_type,
    parse_type_text,
    resolve_type,
    to_type_ref,
    type_name_class,
    type_ref_from_json,
)


def resolve(text: str, brands: tuple[str, ...] = ()) -> SandboxType:
    return resolve_type(parse_type_text(text), brands)


def reject_code(text: str, brands: tuple[str, ...] = ()) -> tuple[str, str]:
    with pytest.raises(DotBoxDError) as info:
        resolve(text, brands)
    d = info.value.diagnostic
    return d.code, d.evidence["reason"]


def test_scalars_resolve_to_singletons() -> None:
    for t in (UNIT, BOOL, I32, I64, F64, STRING, GUID, SANDBOX_PATH):
        assert resolve(str(t)) is t


def test_composites_resolve_structurally_and_print_back() -> None:
    t = resolve("Map<String, List<Record<I32, Bool>>>")
    assert t == MapType(STRING, ListType(RecordType((I32, BOOL))))
    assert str(t) == "Map<String, List<Record<I32, Bool>>>"
    assert resolve(str(t)) == t
    assert t.depth == 3


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Object", "forbidden"),
        ("object", "forbidden"),
        ("System.String", "forbidden"),
        ("microsoft.Thing", "forbidden"),
        ("HttpClient", "forbidden"),
        ("Decimal", "deferred"),
        ("Tuple<I32>", "deferred"),
        ("Widget", "undeclared-brand"),
        ("i32", "unknown"),
        ("lower_case", "unknown"),
    ],
)
def test_unknown_forbidden_and_deferred_names(text: str, reason: str) -> None:
    assert reject_code(text) == ("E-TYPE-UNKNOWN", reason)


@pytest.mark.parametrize("text", ["List", "List<I32, I32>", "Map<I32>", "Record", "I32<Bool>"])
def test_generic_arity(text: str) -> None:
    assert reject_code(text)[0] == "E-TYPE-ARITY"


def test_declared_brand_is_a_type_and_arity_checked() -> None:
    assert resolve("PlayerId", ("PlayerId",)) == OpaqueIdType("PlayerId")
    assert reject_code("PlayerId<I32>", ("PlayerId",))[0] == "E-TYPE-ARITY"


@pytest.mark.parametrize("key", ["F64", "Unit", "Guid", "List<I32>", "Map<I32, I32>", "Record<I32>"])
def test_bad_map_keys(key: str) -> None:
    assert reject_code(f"Map<{key}, I32>") == ("E-TYPE-MAP-KEY", "map-key")


def test_map_key_diagnostic_points_at_the_key() -> None:
    ref = TypeRef("Map", (TypeRef("F64", pointer="/k"), TypeRef("I32", pointer="/v")), pointer="/m")
    with pytest.raises(DotBoxDError) as info:
        resolve_type(ref)
    assert info.value.diagnostic.pointer == "/k"


@pytest.mark.parametrize("key", ["Bool", "I32", "I64", "String", "SandboxPath", "SandboxUri", "PlayerId"])
def test_good_map_keys(key: str) -> None:
    t = resolve(f"Map<{key}, I32>", ("PlayerId",))
    assert isinstance(t, MapType) and is_map_key_type(t.key)


def test_depth_limit_is_exactly_eight() -> None:
    ok = "List<" * MAX_TYPE_DEPTH + "I32" + ">" * MAX_TYPE_DEPTH
    assert resolve(ok).depth == MAX_TYPE_DEPTH
    too_deep = "List<" * (MAX_TYPE_DEPTH + 1) + "I32" + ">" * (MAX_TYPE_DEPTH + 1)
    code, reason = reject_code(too_deep)
    assert (code, reason) == ("E-TYPE-DEPTH", "depth")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("PlayerId", False),
        ("Q", False),
        ("A_1", False),
        ("playerId", True),
        ("String", True),
        ("Object", True),
        ("OBJECT", True),
        ("List", True),
        ("Decimal", True),
        ("X" * 65, True),
        ("Player-Id", True),
    ],
)
def test_brand_names(name: str, problem: bool) -> None:
    assert (brand_name_problem(name) is not None) == problem


def test_type_name_classes() -> None:
    assert type_name_class("I32") == "scalar"
    assert type_name_class("Map") == "composite"
    assert type_name_class("Stream") == "forbidden"
    assert type_name_class("F32") == "deferred"
    assert type_name_class("PlayerId") == "other"


def test_json_and_text_spellings_round_trip() -> None:
    t = resolve("Map<String, List<I32>>")
    assert type_ref_from_json(t.to_json()) == to_type_ref(t)
    assert resolve_type(type_ref_from_json({"name": "List", "arguments": ["Bool"]})) == ListType(BOOL)


@pytest.mark.parametrize(
    "bad", ["List<", "List<I32", "<I32>", "List<I32>>", "I32 I64", "Map<I32,>", "a+b", 3, {"x": 1}]
)
def test_malformed_type_spellings_raise_value_error(bad: object) -> None:
    with pytest.raises(ValueError):
        type_ref_from_json(bad)
