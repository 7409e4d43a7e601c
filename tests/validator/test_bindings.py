"""Host binding declaration: the decorator, the twelve registry checks, manifests and the manifest hash."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any

import pytest

from dotboxd.core.bindings import (
    AuditKind,
    AuditLevel,
    BindingDescriptor,
    BindingRegistry,
    Cost,
    GrantParameters,
    Int32,
    Int64,
    PathText,
    Safety,
    binding_manifest_hash,
    binding_to_json,
    check_binding,
    host_binding,
    load_binding_manifest,
    manifest_to_json,
    standard_bindings,
)
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.effects import Effect
from dotboxd.core.types import (
    BOOL,
    F64,
    I32,
    I64,
    SANDBOX_PATH,
    STRING,
    UNIT,
    ListType,
    MapType,
    OpaqueIdType,
    RecordType,
)
from tests.game_bindings import kill_entry
from tests.probes import read_probe

KILL = BindingDescriptor(
    id="game.world.kill",
    parameters=(I32,),
    return_type=BOOL,
    effects=Effect.CPU | Effect.HOST_STATE_WRITE,
    capability="game.world.monster.write.kill",
    cost=Cost(10, max_calls_per_run=100),
    audit=AuditLevel.PER_CALL,
    safety=Safety.SIDE_EFFECTING_EXTERNAL,
    grant_validator=GrantParameters(),
)


def first_failure(b: BindingDescriptor) -> str | None:
    d = check_binding(b)
    return None if d is None else d.code


def build_error(*descs: BindingDescriptor) -> DotBoxDError:
    with pytest.raises(DotBoxDError) as info:
        BindingRegistry(descs).build()
    return info.value


# -- decorator --------------------------------------------------------------------------------


def test_decorator_reads_unambiguous_hints() -> None:
    @host_binding(
        id="game.world.kill",
        capability="game.world.monster.write.kill",
        effects=Effect.CPU | Effect.HOST_STATE_WRITE,
        cost=Cost(base_fuel=10, max_calls_per_run=100),
    )
    def kill(monster: Int32, reason: str, force: bool, weight: float) -> bool:
        """Kill one monster."""
        return True

    assert kill.parameters == (I32, STRING, BOOL, F64)
    assert kill.return_type == BOOL
    assert kill.parameter_names == ("monster", "reason", "force", "weight")
    assert kill.audit is AuditLevel.PER_CALL and kill.safety is Safety.SIDE_EFFECTING_EXTERNAL
    assert kill.description == "Kill one monster."
    assert kill(1, "x", True, 1.0) is True
    assert check_binding(kill) is None


def test_decorator_composite_and_annotated_hints() -> None:
    @host_binding(id="game.stats.sum", cost=Cost(1))
    def total(xs: list[Int64], m: dict[str, list[bool]], r: tuple[Int32, PathText]) -> None:
        return None

    assert total.parameters == (
        ListType(I64),
        MapType(STRING, ListType(BOOL)),
        RecordType((I32, SANDBOX_PATH)),
    )
    assert total.return_type == UNIT
    assert total.audit is AuditLevel.NONE and total.safety is Safety.PURE_HOST_FACADE


def test_decorator_context_parameter_is_not_typed() -> None:
    @read_probe("game.world.peek", capability="game.world.read", cost=Cost(1), context=True)
    def peek(ctx: Any, monster: Int32) -> Int32:
        return 0

    assert peek.parameters == (I32,) and peek.takes_context


@pytest.mark.parametrize(
    "hint",
    [int, Any, object, list, dict[float, int], tuple[int, ...], bytes, Annotated[int, "I32"]],
)
def test_ambiguous_or_foreign_hints_are_refused(hint: Any) -> None:
    def f(x):  # type: ignore[no-untyped-def]
        return True

    f.__annotations__ = {"x": hint, "return": bool}
    with pytest.raises(DotBoxDError) as info:
        host_binding(id="game.x.y", cost=Cost(1))(f)
    assert info.value.code == "E-BINDING-TYPE"


def test_missing_hints_and_star_args_are_refused() -> None:
    def no_hint(x):  # type: ignore[no-untyped-def]
        return 1

    with pytest.raises(DotBoxDError) as info:
        host_binding(id="game.x.y", cost=Cost(1))(no_hint)
    assert info.value.code == "E-BINDING-TYPE"

    def star(*xs: Int32) -> Int32:
        return 1

    with pytest.raises(DotBoxDError):
        host_binding(id="game.x.y", cost=Cost(1))(star)


def test_explicit_types_override_hints_and_async_is_detected() -> None:
    @read_probe(
        "game.x.load", capability="game.x.read", cost=Cost(5), parameters=["Map<String, I32>"], returns="I64"
    )
    async def load(m: Any) -> Any:
        return 1

    assert load.parameters == (MapType(STRING, I32),) and load.return_type == I64
    assert load.is_async and load.required_effects & Effect.CONCURRENCY
    assert load.required_capabilities == ("game.x.read", "dotboxd.runtime.async")


# -- the twelve checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"cost": None}, "E-BINDING-REQUIRED"),  # 1
        ({"id": ""}, "E-BINDING-REQUIRED"),
        ({"id": "kill"}, "E-BINDING-ID"),  # 2
        ({"id": "game world.kill"}, "E-BINDING-ID"),
        ({"id": "System.IO.read"}, "E-BINDING-DANGER"),
        ({"id": "host.reflection.invoke"}, "E-BINDING-DANGER"),
        ({"capability": "game.*"}, "E-BINDING-CAP"),
        ({"capability": "Process.start"}, "E-BINDING-DANGER"),
        ({"effects": Effect.NONE}, "E-BINDING-EFFECT"),  # 3
        ({"effects": Effect(1) | 1024}, "E-BINDING-EFFECT"),
        ({"audit": "Loud"}, "E-BINDING-AUDIT"),  # 4
        ({"safety": "Risky"}, "E-BINDING-SAFETY"),
        ({"capability": None}, "E-BINDING-CAP"),  # 5
        ({"effects": Effect.CPU | Effect.ALLOC}, "E-BINDING-CAP"),
        ({"audit": AuditLevel.NONE}, "E-BINDING-AUDIT"),  # 6
        ({"grant_validator": None}, "E-BINDING-GRANT"),  # 7
        ({"capability": "file.read"}, "E-BINDING-CAP-EFFECT"),  # 8
        ({"safety": Safety.DANGEROUS_REQUIRES_REVIEW}, "E-BINDING-SAFETY"),  # 9
        ({"safety": Safety.PURE_INTRINSIC}, "E-BINDING-SAFETY"),
        ({"cost": Cost(-1)}, "E-BINDING-COST"),  # 10
        ({"cost": Cost(1, per_byte_fuel=-2)}, "E-BINDING-COST"),
        ({"cost": Cost(1, max_calls_per_run=-1)}, "E-BINDING-COST"),
        ({"compiled_stub": "EvilStub"}, "E-BINDING-COMPILED"),  # 11
        ({"compiled_stub": "AbsI32"}, "E-BINDING-COMPILED"),
        ({"parameters": (OpaqueIdType("PlayerId"),)}, "E-BINDING-TYPE"),  # 12
    ],
)
def test_each_registry_check(changes: dict[str, Any], code: str) -> None:
    assert first_failure(KILL) is None
    assert first_failure(dataclasses.replace(KILL, **changes)) == code


def test_checks_run_in_order() -> None:
    # both a missing capability (check 5) and a negative cost (check 10): check 5 wins
    bad = dataclasses.replace(KILL, capability=None, cost=Cost(-5))
    assert first_failure(bad) == "E-BINDING-CAP"


def test_exact_stub_allowed_for_matching_pure_intrinsic() -> None:
    absb = BindingDescriptor(
        "game.math.abs",
        (I32,),
        I32,
        Effect.CPU,
        None,
        Cost(2),
        AuditLevel.NONE,
        Safety.PURE_INTRINSIC,
        compiled_stub="AbsI32",
    )
    assert first_failure(absb) is None
    assert first_failure(dataclasses.replace(absb, parameters=(I64,))) == "E-BINDING-COMPILED"


def test_builtin_capability_needs_no_grant_validator_and_must_pair_effects() -> None:
    reader = dataclasses.replace(
        KILL, capability="file.read", effects=Effect.CPU | Effect.FILE_READ, grant_validator=None
    )
    assert first_failure(reader) is None
    both = dataclasses.replace(reader, effects=Effect.CPU | Effect.FILE_READ | Effect.NETWORK)
    assert first_failure(both) == "E-BINDING-CAP-EFFECT"


def test_registry_reports_every_bad_binding_and_duplicates() -> None:
    err = build_error(
        KILL, dataclasses.replace(KILL, cost=Cost(-1)), dataclasses.replace(KILL, id="math.abs"), KILL
    )
    assert [d.code for d in err.diagnostics] == ["E-BINDING-COST", "E-BINDING-DUP", "E-BINDING-DUP"]
    assert all(d.evidence["binding"] for d in err.diagnostics)


def test_require_invoke() -> None:
    with pytest.raises(DotBoxDError) as info:
        BindingRegistry([KILL]).build(require_invoke=True)
    assert info.value.code == "E-BINDING-REQUIRED"
    assert "game.world.kill" in BindingRegistry([dataclasses.replace(KILL, invoke=lambda x: True)]).build(
        require_invoke=True
    )


def test_standard_bindings_pass_the_registry() -> None:
    catalog = BindingRegistry(standard_bindings()).build()
    assert {
        "file.readText",
        "file.writeText",
        "time.nowUnixMillis",
        "random.nextI32",
        "log.info",
        "log.warn",
        "net.http.get",
    } == set(catalog)
    assert catalog["file.readText"].required_capabilities == ("file.read", "dotboxd.runtime.async")
    assert catalog["log.info"].audit_kind is AuditKind.SANDBOX_LOG


# -- grant validators -----------------------------------------------------------------------------


def test_grant_parameters_validator() -> None:
    v = GrantParameters(required=("tenant",), optional=("limit",))
    assert v({"tenant": "a"}) is None
    assert v({"tenant": "a", "limit": "3"}) is None
    assert "missing" in (v({}) or "")
    assert "unexpected" in (v({"tenant": "a", "x": "1"}) or "")
    assert GrantParameters()({"x": "1"}) is not None


# -- manifests and hash ---------------------------------------------------------------------------


def test_conformance_entry_and_dotboxd_manifest_mean_the_same_binding() -> None:
    (from_case,) = load_binding_manifest([kill_entry()])
    assert from_case == KILL
    manifest = manifest_to_json([from_case])
    assert manifest["manifestVersion"] == 1
    (round_trip,) = load_binding_manifest(json.dumps(manifest))
    assert round_trip == from_case
    assert binding_to_json(round_trip)["costModel"]["baseFuel"] == 10


def test_named_parameters_and_grant_parameters_in_manifest() -> None:
    (b,) = load_binding_manifest(
        {
            "bindings": [
                kill_entry(
                    parameters=[{"name": "monster", "type": "I32"}], grantParameters={"required": ["tenant"]}
                )
            ]
        }
    )
    assert b.parameter_names == ("monster",)
    assert isinstance(b.grant_validator, GrantParameters) and b.grant_validator.required == ("tenant",)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("{", "E-BINDING-MANIFEST"),
        ('{"bindings": [], "bindings": []}', "E-BINDING-MANIFEST"),
        ('{"manifestVersion": 2, "bindings": []}', "E-BINDING-MANIFEST"),
        ('{"bindings": [{"id": "a.b", "returnType": "I32", "colour": 1}]}', "E-BINDING-MANIFEST"),
        (
            '[{"id": "a.b", "returnType": "I32", "capability": "x.y", "requiredCapability": "x.y"}]',
            "E-BINDING-MANIFEST",
        ),
        ('[{"id": "a.b", "returnType": "I32", "effects": ["Cpu", "DatabaseRead"]}]', "E-BINDING-EFFECT"),
        ('[{"id": "a.b", "returnType": "Object"}]', "E-BINDING-TYPE"),
        ('[{"id": "a.b", "returnType": "List<"}]', "E-BINDING-TYPE"),
        ('[{"id": "a.b"}]', "E-BINDING-REQUIRED"),
        ('[{"id": "a.b", "returnType": "I32", "audit": "Loud"}]', "E-BINDING-AUDIT"),
        ('[{"id": "a.b", "returnType": "I32", "cost": {"baseFuel": 1.5}}]', "E-BINDING-COST"),
        ('[{"id": "a.b", "returnType": "I32", "cost": {"perByteFuel": 1}}]', "E-BINDING-MANIFEST"),
        ('[{"id": "a.b", "returnType": "I32", "compiledTarget": {"kind": "Dll"}}]', "E-BINDING-COMPILED"),
    ],
)
def test_manifest_errors(data: str, code: str) -> None:
    with pytest.raises(DotBoxDError) as info:
        load_binding_manifest(data)
    assert info.value.code == code


def test_manifest_hash_is_order_independent_and_field_sensitive() -> None:
    other = dataclasses.replace(KILL, id="game.world.heal")
    h = binding_manifest_hash([KILL, other])
    assert h == binding_manifest_hash([other, KILL])
    assert h == BindingRegistry([KILL, other]).build().manifest_hash
    for changes in (
        {"cost": Cost(11, max_calls_per_run=100)},
        {"is_async": True},
        {"version": "1.0.1"},
        {"effects": KILL.effects | Effect.AUDIT},
        {"return_type": I32},
        {"grant_validator": GrantParameters(("tenant",))},
    ):
        assert binding_manifest_hash([dataclasses.replace(KILL, **changes), other]) != h, changes
    # the callable is not part of the contract
    assert binding_manifest_hash([dataclasses.replace(KILL, invoke=print), other]) == h


def test_catalog_with_invokers_keeps_the_hash() -> None:
    catalog = BindingRegistry([KILL]).build()
    fixture = catalog.with_invokers({"game.world.kill": lambda x: True})
    assert fixture.manifest_hash == catalog.manifest_hash
    assert fixture["game.world.kill"].invoke is not None and catalog["game.world.kill"].invoke is None
