"""The JSON binding manifest (DotBoxD's section 11) and conformance-case ``bindings`` entries.

Reading builds descriptors without ``invoke`` (the CLI and the conformance corpus have no
callables); shape errors are E-BINDING-MANIFEST, policy-relevant problems their E-BINDING-* code.
Writing gives DotBoxD's key names; reading accepts the conformance-case spellings too."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dotboxd.core.binding_model import (
    PARAMETERLESS_GRANT,
    AuditKind,
    AuditLevel,
    BindingDescriptor,
    Cost,
    GrantParameters,
    Safety,
    sandbox_type_of,
)
from dotboxd.core.builtins import GENERIC_STUB
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.effects import (
    effect_names,
    parse_effect_names,
)
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_json
from dotboxd.core.suggest import did_you_mean
from dotboxd.core.types import (
    SandboxType,
)

# ---------------------------------------------------------------------------------------------
# JSON manifest form (DotBoxD's) and conformance-case ``bindings`` entries


def binding_to_json(b: BindingDescriptor) -> dict[str, Any]:
    """The manifest entry of ``b`` (DotBoxD's manifest key names)."""
    cost = b.cost
    entry: dict[str, Any] = {
        "id": b.id,
        "version": b.version,
        "parameters": [p.to_json() for p in b.parameters],
        "returnType": b.return_type.to_json(),
        "effects": effect_names(b.effects),
        "isAsync": b.is_async,
        "requiredCapability": b.capability,
        "costModel": None
        if cost is None
        else {
            "baseFuel": cost.base_fuel,
            "perByteFuel": cost.per_byte_fuel,
            "allocationFromReturnBytes": cost.allocation_from_return_bytes,
            "maxCallsPerRun": cost.max_calls_per_run,
        },
        "auditLevel": b.audit.value,
        "auditKind": b.audit_kind.value,
        "safety": b.safety.value,
        "compiledTarget": {"kind": "RuntimeStub", "method": b.compiled_stub},
    }
    if isinstance(b.grant_validator, GrantParameters):
        entry["grantParameters"] = {
            "required": list(b.grant_validator.required),
            "optional": list(b.grant_validator.optional),
        }
    return entry


def manifest_to_json(bindings: Iterable[BindingDescriptor]) -> dict[str, Any]:
    return {
        "manifestVersion": 1,
        "sandboxRuntimeVersion": "1.0.0",
        "bindings": [binding_to_json(b) for b in bindings],
    }


# Accepted spellings: DotBoxD's manifest names first, then the conformance-case names.
_ALIASES: dict[str, tuple[str, ...]] = {
    "capability": ("requiredCapability", "capability"),
    "cost": ("costModel", "cost"),
    "audit": ("auditLevel", "audit"),
}
_ENTRY_KEYS = frozenset(
    {
        "id",
        "version",
        "parameters",
        "returnType",
        "effects",
        "isAsync",
        "requiredCapability",
        "capability",
        "costModel",
        "cost",
        "auditLevel",
        "audit",
        "auditKind",
        "safety",
        "compiledTarget",
        "grantParameters",
        "behavior",
        "description",
    }
)
_COST_KEYS = frozenset({"baseFuel", "perByteFuel", "allocationFromReturnBytes", "maxCallsPerRun"})


def _manifest_error(message: str, pointer: str, hint: str = "") -> DotBoxDError:
    return reject(
        "E-BINDING-MANIFEST",
        message,
        pointer,
        hint=hint
        or 'a manifest is {"bindings": [entry, ...]}; an entry\'s keys are ' + ", ".join(sorted(_ENTRY_KEYS)),
    )


def _pick(obj: Mapping[str, Any], logical: str, pointer: str) -> tuple[Any, str] | None:
    found = [k for k in _ALIASES.get(logical, (logical,)) if k in obj]
    if len(found) > 1:
        raise _manifest_error(f"both '{found[0]}' and '{found[1]}' are given", pointer)
    return (obj[found[0]], found[0]) if found else None


def binding_from_json(obj: Any, pointer: str = "") -> BindingDescriptor:
    """Build a descriptor (without ``invoke``) from a manifest entry or a conformance-case entry.

    Shape errors raise E-BINDING-MANIFEST; policy-relevant problems (unknown effects, audit level,
    safety, types) raise the matching E-BINDING-* code. The full registry checks still run in
    :meth:`BindingRegistry.build`. A missing ``grantParameters`` means a parameterless grant."""
    if not isinstance(obj, dict):
        raise _manifest_error("a binding entry must be an object", pointer)
    extra = sorted(set(obj) - _ENTRY_KEYS)
    if extra:
        raise _manifest_error(
            f"unknown binding propert{'ies' if len(extra) > 1 else 'y'} {', '.join(extra)}",
            f"{pointer}/{extra[0]}",
            did_you_mean(extra[0], _ENTRY_KEYS),
        )
    bid = obj.get("id")
    if not isinstance(bid, str):
        raise _manifest_error("'id' must be a string", f"{pointer}/id")
    params_raw = obj.get("parameters", [])
    if not isinstance(params_raw, list):
        raise _manifest_error("'parameters' must be a list", f"{pointer}/parameters")
    params: list[SandboxType] = []
    names: list[str] = []
    for i, p in enumerate(params_raw):
        where = f"{pointer}/parameters/{i}"
        if isinstance(p, dict) and "type" in p:
            if set(p) - {"name", "type"} or not isinstance(p.get("name", ""), str):
                raise _manifest_error('a named parameter is {"name": str, "type": type}', where)
            names.append(p.get("name", f"arg{i}"))
            params.append(sandbox_type_of(p["type"], f"{where}/type"))
        else:
            names.append(f"arg{i}")
            params.append(sandbox_type_of(p, where))
    if "returnType" not in obj:
        raise reject("E-BINDING-REQUIRED", f"binding {bid}: missing returnType", pointer, binding=bid)
    ret = sandbox_type_of(obj["returnType"], f"{pointer}/returnType")
    effects_raw = obj.get("effects", [])
    if not isinstance(effects_raw, list) or not all(isinstance(e, str) for e in effects_raw):
        raise _manifest_error("'effects' must be a list of effect names", f"{pointer}/effects")
    effects, unknown = parse_effect_names(effects_raw)
    if unknown:
        raise reject(
            "E-BINDING-EFFECT",
            f"binding {bid}: unknown effect(s) {', '.join(unknown)}",
            f"{pointer}/effects",
            binding=bid,
        )
    cap_entry = _pick(obj, "capability", pointer)
    capability = cap_entry[0] if cap_entry else None
    if capability is not None and not isinstance(capability, str):
        raise _manifest_error(
            "the capability must be a string or null", f"{pointer}/{cap_entry[1] if cap_entry else ''}"
        )
    cost = _cost_from_json(_pick(obj, "cost", pointer), pointer)
    audit = _enum_field(obj, "audit", AuditLevel, "E-BINDING-AUDIT", pointer, bid)
    safety = _enum_field(obj, "safety", Safety, "E-BINDING-SAFETY", pointer, bid)
    kind_raw = obj.get("auditKind", AuditKind.BINDING_CALL.value)
    try:
        audit_kind = AuditKind(kind_raw)
    except ValueError:
        raise reject(
            "E-BINDING-AUDIT",
            f"binding {bid}: unknown audit kind {kind_raw!r}",
            f"{pointer}/auditKind",
            binding=bid,
        ) from None
    is_async = obj.get("isAsync", False)
    if not isinstance(is_async, bool):
        raise _manifest_error("'isAsync' must be a boolean", f"{pointer}/isAsync")
    version = obj.get("version", "1.0.0")
    if not isinstance(version, str):
        raise _manifest_error("'version' must be a string", f"{pointer}/version")
    stub = GENERIC_STUB
    target = obj.get("compiledTarget")
    if target is not None:
        if (
            not isinstance(target, dict)
            or target.get("kind") != "RuntimeStub"
            or not isinstance(target.get("method"), str)
        ):
            raise reject(
                "E-BINDING-COMPILED",
                f'binding {bid}: compiledTarget must be {{"kind": "RuntimeStub", "method": name}}',
                f"{pointer}/compiledTarget",
                binding=bid,
            )
        stub = target["method"]
    validator = _grant_parameters_from_json(obj.get("grantParameters"), f"{pointer}/grantParameters")
    description = obj.get("description", "")
    return BindingDescriptor.declare(
        bid,
        tuple(params),
        ret,
        effects,
        capability,
        cost,
        audit,
        safety,
        version=version,
        is_async=is_async,
        audit_kind=audit_kind,
        grant_validator=validator,
        compiled_stub=stub,
        parameter_names=tuple(names),
        description=description if isinstance(description, str) else "",
        origin=pointer,
    )


def _enum_field(
    obj: Mapping[str, Any], logical: str, enum: type[Any], code: str, pointer: str, bid: str
) -> Any:
    entry = _pick(obj, logical, pointer)
    if entry is None:
        return None
    try:
        return enum(entry[0])
    except ValueError:
        raise reject(
            code, f"binding {bid}: unknown {entry[1]} {entry[0]!r}", f"{pointer}/{entry[1]}", binding=bid
        ) from None


def _cost_from_json(entry: tuple[Any, str] | None, pointer: str) -> Cost | None:
    if entry is None:
        return None
    raw, key = entry
    where = f"{pointer}/{key}"
    if not isinstance(raw, dict) or set(raw) - _COST_KEYS or "baseFuel" not in raw:
        raise _manifest_error(
            "a cost model is {baseFuel, perByteFuel?, allocationFromReturnBytes?, maxCallsPerRun?}", where
        )
    base = raw["baseFuel"]
    per_byte = raw.get("perByteFuel", 0)
    alloc = raw.get("allocationFromReturnBytes", False)
    max_calls = raw.get("maxCallsPerRun")
    for name, value in (("baseFuel", base), ("perByteFuel", per_byte)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise reject("E-BINDING-COST", f"{name} must be an integer", f"{where}/{name}")
    if max_calls is not None and (not isinstance(max_calls, int) or isinstance(max_calls, bool)):
        raise reject("E-BINDING-COST", "maxCallsPerRun must be an integer or null", f"{where}/maxCallsPerRun")
    if not isinstance(alloc, bool):
        raise reject(
            "E-BINDING-COST",
            "allocationFromReturnBytes must be a boolean",
            f"{where}/allocationFromReturnBytes",
        )
    return Cost(base, per_byte, alloc, max_calls)


def _grant_parameters_from_json(raw: Any, pointer: str) -> GrantParameters:
    if raw is None:
        return PARAMETERLESS_GRANT
    if not isinstance(raw, dict) or set(raw) - {"required", "optional"}:
        raise _manifest_error('grantParameters is {"required": [names], "optional": [names]}', pointer)
    lists = []
    for key in ("required", "optional"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _manifest_error(f"grantParameters.{key} must be a list of names", f"{pointer}/{key}")
        lists.append(tuple(value))
    return GrantParameters(lists[0], lists[1])


def load_binding_manifest(
    data: bytes | str | Mapping[str, Any] | Sequence[Any],
) -> tuple[BindingDescriptor, ...]:
    """Parse a manifest (``{"manifestVersion": 1, "bindings": [...]}``) or a bare list of entries
    (the conformance-case ``bindings`` array). Text input is decoded strictly (duplicate keys and
    NaN are refused). Raises DotBoxDError (E-BINDING-MANIFEST and friends)."""
    obj: Any = data
    if isinstance(data, (bytes, str)):
        obj = read_json(data, HOST_DOCUMENT_BUDGETS, code="E-BINDING-MANIFEST", what="the manifest")
    if isinstance(obj, Mapping):
        extra = set(obj) - {"manifestVersion", "sandboxRuntimeVersion", "bindings"}
        if extra:
            raise _manifest_error(f"unknown manifest properties {', '.join(sorted(extra))}", "")
        if obj.get("manifestVersion", 1) != 1:
            raise _manifest_error("manifestVersion must be 1", "/manifestVersion")
        entries = obj.get("bindings")
        prefix = "/bindings"
    else:
        entries = obj
        prefix = ""
    if not isinstance(entries, list):
        raise _manifest_error("'bindings' must be a list", prefix)
    return tuple(binding_from_json(e, f"{prefix}/{i}") for i, e in enumerate(entries))


__all__ = [
    "binding_from_json",
    "binding_to_json",
    "load_binding_manifest",
    "manifest_to_json",
]
