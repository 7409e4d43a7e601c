"""The built-in catalogue: every entry types as documented and carries honest facts."""

from __future__ import annotations

import pytest

from dotboxd.core.builtins import (
    BASE_SURFACE,
    BUILTINS,
    EXACT_STUBS,
    EXT_SURFACE,
    CallSite,
    CallTypeError,
    GenericRule,
    lookup,
    surface_needed,
)
from dotboxd.core.effects import PURE, Effect
from dotboxd.core.types import BOOL, F64, I32, I64, STRING, UNIT, ListType, MapType, RecordType, SandboxType

EXPECTED_NAMES = {
    "math.abs",
    "math.min",
    "math.max",
    "math.clamp",
    "math.sqrt",
    "math.floor",
    "math.ceil",
    "math.round",
    "int32.toStringInvariant",
    "string.length",
    "string.isEmpty",
    "string.substringBudgeted",
    "string.concatBudgeted",
    "string.equals",
    "string.compareOrdinal",
    "list.empty",
    "list.of",
    "list.count",
    "list.get",
    "list.add",
    "map.empty",
    "map.containsKey",
    "map.get",
    "map.set",
    "map.remove",
    "record.new",
    "record.get",
    "numeric.toI64",
    "numeric.toF64",
}
EXTENSION_NAMES = {
    "string.contains",
    "string.indexOf",
    "string.lastIndexOf",
    "string.startsWith",
    "string.endsWith",
    "string.toLowerInvariant",
    "string.toUpperInvariant",
    "math.sin",
    "math.cos",
    "math.tan",
    "list.slice",
    "map.count",
    "parse.int",
    "string.split",
    "string.replace",
    "format.simple",
    "map.keys",
}


def typed(name: str, *args: object, generic: object = None, consts: tuple[int | None, ...] = ()) -> object:
    return BUILTINS[name].result_type(CallSite(tuple(args), generic, consts))  # type: ignore[arg-type]


def refused(
    name: str, *args: object, generic: object = None, consts: tuple[int | None, ...] = ()
) -> CallTypeError:
    with pytest.raises(CallTypeError) as info:
        typed(name, *args, generic=generic, consts=consts)
    return info.value


def test_catalogue_is_exactly_dotboxds_list() -> None:
    assert set(BUILTINS) == EXPECTED_NAMES | EXTENSION_NAMES
    assert {n for n, b in BUILTINS.items() if b.surface == EXT_SURFACE} == EXTENSION_NAMES
    assert {n for n, b in BUILTINS.items() if b.surface == BASE_SURFACE} == EXPECTED_NAMES
    assert lookup("math.abs") is BUILTINS["math.abs"]
    assert lookup("nope") is None


def test_every_builtin_is_pure_and_alloc_matches_effects() -> None:
    for b in BUILTINS.values():
        assert not (b.effects & ~PURE) and b.effects & Effect.CPU
        assert bool(b.effects & Effect.ALLOC) == b.allocates, b.name


def test_pure_functions_count_as_host_calls_and_intrinsics_do_not() -> None:
    # DotBoxD registers math.*, string.* and int32.toStringInvariant as pure bindings
    counted = {n for n, b in BUILTINS.items() if b.counts_as_host_call}
    assert counted == {
        n for n in BUILTINS if n.split(".")[0] in ("math", "string", "int32", "parse", "format")
    }


def test_only_builtins_that_cannot_fail_may_be_reordered() -> None:
    # fuel aside, these can end a run with nothing: no value error, no host call, nothing built
    cannot_fail = {n for n, b in BUILTINS.items() if not b.can_fail}
    assert cannot_fail == {
        "list.count",
        "map.count",
        "map.containsKey",
        "record.get",
        "numeric.toI64",
        "numeric.toF64",
    }


def test_generic_rules() -> None:
    generic = {n for n, b in BUILTINS.items() if b.generic is not GenericRule.FORBIDDEN}
    assert generic == {"list.empty", "map.empty", "record.new"}


@pytest.mark.parametrize(
    ("name", "args", "result"),
    [
        ("math.abs", (I32,), I32),
        ("math.clamp", (I32, I32, I32), I32),
        ("math.sqrt", (F64,), F64),
        ("int32.toStringInvariant", (I32,), STRING),
        ("string.length", (STRING,), I32),
        ("string.substringBudgeted", (STRING, I32, I32), STRING),
        ("string.compareOrdinal", (STRING, STRING), I32),
        ("string.contains", (STRING, STRING), BOOL),
        ("string.indexOf", (STRING, STRING), I32),
        ("string.lastIndexOf", (STRING, STRING), I32),
        ("string.startsWith", (STRING, STRING), BOOL),
        ("string.endsWith", (STRING, STRING), BOOL),
        ("string.toLowerInvariant", (STRING,), STRING),
        ("string.toUpperInvariant", (STRING,), STRING),
        ("math.sin", (F64,), F64),
        ("parse.int", (STRING,), I32),
        ("math.tan", (F64,), F64),
        ("numeric.toI64", (I32,), I64),
        ("numeric.toF64", (I32,), F64),
        ("numeric.toF64", (I64,), F64),
        ("list.count", (ListType(BOOL),), I32),
        ("list.get", (ListType(BOOL), I32), BOOL),
        ("list.add", (ListType(BOOL), BOOL), ListType(BOOL)),
        ("list.of", (I64, I64), ListType(I64)),
        ("list.of", (), ListType(UNIT)),
        ("map.get", (MapType(STRING, F64), STRING), F64),
        ("map.count", (MapType(STRING, F64),), I32),
        ("map.keys", (MapType(STRING, F64),), ListType(STRING)),
        ("map.keys", (MapType(BOOL, I32),), ListType(BOOL)),
        ("string.split", (STRING, STRING), ListType(STRING)),
        ("string.replace", (STRING, STRING, STRING), STRING),
        ("format.simple", (STRING, ListType(STRING)), STRING),
        ("list.slice", (ListType(BOOL), I32, I32), ListType(BOOL)),
        ("map.containsKey", (MapType(I32, F64), I32), BOOL),
        ("map.set", (MapType(I32, F64), I32, F64), MapType(I32, F64)),
        ("map.remove", (MapType(I32, F64), I32), MapType(I32, F64)),
    ],
)
def test_signatures(name: str, args: tuple[object, ...], result: object) -> None:
    assert typed(name, *args) == result


def test_surface_needed_is_the_smallest_surface_holding_every_builtin() -> None:
    assert surface_needed([]) == BASE_SURFACE
    assert surface_needed(["string.length", "my.binding"]) == BASE_SURFACE
    assert surface_needed(["string.length", "string.contains"]) == EXT_SURFACE


def test_generic_builtins() -> None:
    assert typed("list.empty", generic=STRING) == ListType(STRING)
    m = MapType(STRING, I32)
    assert typed("map.empty", generic=m) == m
    r = RecordType((I32, STRING))
    assert typed("record.new", I32, STRING, generic=r) == r
    assert refused("map.empty", generic=ListType(I32)).code == "E-CALL-GENERIC"
    assert refused("record.new", I32, generic=I32).code == "E-CALL-GENERIC"
    assert refused("record.new", I32, generic=r).code == "E-CALL-ARITY"


def test_no_widening_and_mismatch_evidence() -> None:
    err = refused("math.abs", I64)
    assert (err.code, err.arg_index, err.expected, err.actual) == ("E-TYPE-MISMATCH", 0, "I32", "I64")
    assert refused("numeric.toF64", F64).code == "E-TYPE-MISMATCH"
    assert refused("numeric.toI64", I64).code == "E-TYPE-MISMATCH"
    assert refused("list.of", I32, I64).arg_index == 1
    assert refused("map.get", MapType(STRING, I32), I32).arg_index == 1
    assert refused("list.get", I32, I32).code == "E-TYPE-MISMATCH"
    assert refused("map.keys", ListType(I32)).code == "E-TYPE-MISMATCH"
    assert refused("format.simple", STRING, ListType(I32)).arg_index == 1


def test_arity() -> None:
    assert refused("math.min", I32).code == "E-CALL-ARITY"
    assert refused("list.empty", I32, generic=I32).code == "E-CALL-ARITY"


def test_record_get_needs_a_constant_in_range() -> None:
    r = RecordType((I32, STRING))
    assert typed("record.get", r, I32, consts=(None, 1)) == STRING
    assert refused("record.get", r, I32, consts=(None, None)).code == "E-CALL-RECORD-INDEX"
    assert refused("record.get", r, I32, consts=(None, 2)).code == "E-CALL-RECORD-INDEX"
    assert refused("record.get", r, I32, consts=(None, -1)).code == "E-CALL-RECORD-INDEX"
    assert refused("record.get", I32, I32, consts=(None, 0)).code == "E-TYPE-MISMATCH"


def test_constructors_respect_the_depth_limit() -> None:
    deep: SandboxType = I32
    for _ in range(8):
        deep = ListType(deep)
    assert refused("list.of", deep).code == "E-TYPE-DEPTH"
    assert refused("list.empty", generic=deep).code == "E-TYPE-DEPTH"


def test_exact_stubs_match_their_builtins() -> None:
    for b in BUILTINS.values():
        if b.stub is not None:
            params, result = EXACT_STUBS[b.stub]
            assert b.result_type(CallSite(params)) == result, b.name
