"""The JSON policy form (``dotboxd check --policy``, the conformance ``policy`` object).

Why apart: reading untrusted JSON is its own job - strict keys with did-you-mean hints, a JSON
pointer on every error - and it only feeds the builder, which checks the values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dotboxd.core.bindings import REENTRANT_CAPABILITY
from dotboxd.core.builtins import EXT_SURFACE, SURFACES
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.effects import Effect, parse_effect_names
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_json
from dotboxd.core.limits import LIMIT_BY_JSON
from dotboxd.core.suggest import did_you_mean
from dotboxd.validator.grant_rules import BUILTIN_GRANT_EFFECTS, byte_cap
from dotboxd.validator.grants import param_text, reentrancy_error
from dotboxd.validator.policy_builder import PolicyBuilder, valid_bound
from dotboxd.validator.policy_model import Policy

POLICY_KEYS = frozenset(
    {
        "policyId",
        "limits",
        "allowedEffects",
        "grants",
        "allowRuntimeAsync",
        "deterministic",
        "declaredOpaqueIdTypes",
        "inputBounds",
        "requireStaticBound",
        "proveRlimit",
        "rejectUnusedGrants",
        "languageSurface",
    }
)
GRANT_KEYS = frozenset({"id", "parameters", "effects", "expiresAtUnixMillis", "grantedBy", "reason"})


_FILE_FORM_HINT = "a policy is a JSON object with the keys: " + ", ".join(sorted(POLICY_KEYS))


def _schema(message: str, pointer: str, hint: str = _FILE_FORM_HINT) -> DotBoxDError:
    return reject("E-POLICY-SCHEMA", message, pointer, hint=hint)


def _unknown_key_hint(key: str, known: Iterable[str], what: str) -> str:
    """``did you mean 'maxFuel'?`` for a misspelt key, else the list of the known ones."""
    known = sorted(known)
    return did_you_mean(key, known) or f"{what}: {', '.join(known)}"


def _refuse_unknown_keys(
    obj: Mapping[str, Any], known: frozenset[str], pointer: str, noun: str, known_are: str
) -> None:
    """Refuse every key of ``obj`` outside ``known``, pointing at (and hinting for) the first one."""
    extra = sorted(set(obj) - known)
    if extra:
        raise _schema(
            f"unknown {noun} propert{'ies' if len(extra) > 1 else 'y'} {', '.join(extra)}",
            f"{pointer}/{extra[0]}",
            _unknown_key_hint(extra[0], known, known_are),
        )


def _int_field(value: Any, pointer: str, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _schema("expected an integer" + (" or null" if nullable else ""), pointer)
    return value


def policy_from_json(data: bytes | str | Mapping[str, Any], variables: Mapping[str, str]) -> Policy:
    obj: Any = data
    if isinstance(data, (bytes, str)):
        obj = read_json(data, HOST_DOCUMENT_BUDGETS, code="E-POLICY-SCHEMA", what="the policy")
    if not isinstance(obj, Mapping):
        raise _schema("a policy is a JSON object", "")
    _refuse_unknown_keys(obj, POLICY_KEYS, "", "policy", "the policy keys are")
    b = PolicyBuilder()
    if "policyId" in obj:
        if not isinstance(obj["policyId"], str):
            raise _schema("policyId must be a string", "/policyId")
        b.with_policy_id(obj["policyId"])
    limits = obj.get("limits", {})
    if not isinstance(limits, Mapping):
        raise _schema("limits must be an object", "/limits")
    for name, value in limits.items():
        spec = LIMIT_BY_JSON.get(name)
        if spec is None:
            raise _schema(
                f"unknown limit '{name}'",
                f"/limits/{name}",
                _unknown_key_hint(name, LIMIT_BY_JSON, "the limits are"),
            )
        if spec.null_is_default and value is None:
            continue
        b.with_limits(**{spec.name: _int_field(value, f"/limits/{name}") or 0})
    grants = obj.get("grants", [])
    if not isinstance(grants, list):
        raise _schema("grants must be a list", "/grants")
    for i, g in enumerate(grants):
        _grant_from_json(b, g, f"/grants/{i}", variables)
    if "allowedEffects" in obj:
        raw = obj["allowedEffects"]
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise _schema("allowedEffects must be a list of effect names", "/allowedEffects")
        effects, unknown = parse_effect_names(raw)
        if unknown:
            raise reject(
                "E-POLICY-EFFECT",
                f"unknown effect(s) {', '.join(unknown)}",
                "/allowedEffects",
                effects=unknown,
            )
        b.with_allowed_effects(effects)
    asynchronous = obj.get("allowRuntimeAsync", False)
    if not isinstance(asynchronous, bool):
        raise _schema("allowRuntimeAsync must be a boolean", "/allowRuntimeAsync")
    if asynchronous:
        b.allow_runtime_async()
    det = obj.get("deterministic")
    if det is not None:
        if not isinstance(det, Mapping) or set(det) - {"logicalNowUnixMillis", "randomSeed"}:
            raise _schema("deterministic is {logicalNowUnixMillis?, randomSeed?} or absent", "/deterministic")
        b.deterministic(
            _int_field(det.get("logicalNowUnixMillis"), "/deterministic/logicalNowUnixMillis", True),
            _int_field(det.get("randomSeed"), "/deterministic/randomSeed", True),
        )
    brands = obj.get("declaredOpaqueIdTypes", [])
    if not isinstance(brands, list) or not all(isinstance(x, str) for x in brands):
        raise _schema("declaredOpaqueIdTypes must be a list of names", "/declaredOpaqueIdTypes")
    b.declare_opaque_id_type(*brands)
    bounds = obj.get("inputBounds", {})
    if not isinstance(bounds, Mapping):
        raise _schema("inputBounds is {function: {parameter: [lo, hi]}}", "/inputBounds")
    for fn, params in bounds.items():
        if not isinstance(params, Mapping):
            raise _schema("inputBounds is {function: {parameter: [lo, hi]}}", f"/inputBounds/{fn}")
        for name, bound in params.items():
            if not valid_bound(bound):
                raise _schema(
                    "an input bound is [lo, hi] with integers lo <= hi", f"/inputBounds/{fn}/{name}"
                )
            b.with_input_bounds(fn, **{name: (bound[0], bound[1])})
    static = obj.get("requireStaticBound", False)
    if not isinstance(static, bool):
        raise _schema("requireStaticBound must be a boolean", "/requireStaticBound")
    b.require_static_bound(static)
    if "proveRlimit" in obj:
        b.with_prove_rlimit(_int_field(obj["proveRlimit"], "/proveRlimit"))
    reject_unused = obj.get("rejectUnusedGrants", False)
    if not isinstance(reject_unused, bool):
        raise _schema("rejectUnusedGrants must be a boolean", "/rejectUnusedGrants")
    b.reject_unused_grants(reject_unused)
    surface = obj.get("languageSurface", EXT_SURFACE)
    if surface not in SURFACES:
        raise _schema(
            f"languageSurface must be one of {', '.join(SURFACES)}, got {surface!r}", "/languageSurface"
        )
    b.with_language_surface(surface)
    return b.build()


def _grant_from_json(b: PolicyBuilder, g: Any, pointer: str, variables: Mapping[str, str]) -> None:
    if not isinstance(g, Mapping) or "id" not in g:
        raise _schema(
            "a grant is {id, parameters?, effects?, expiresAtUnixMillis?, grantedBy?, reason?}", pointer
        )
    _refuse_unknown_keys(g, GRANT_KEYS, pointer, "grant", "a grant's keys are")
    if not isinstance(g["id"], str):
        raise _schema("grant id must be a string", f"{pointer}/id")
    params = g.get("parameters", {})
    if not isinstance(params, Mapping) or not all(isinstance(v, (str, int, bool)) for v in params.values()):
        raise _schema("grant parameters are an object of strings", f"{pointer}/parameters")
    text_params = {k: _substitute(param_text(v), variables) for k, v in params.items()}
    effects: Effect | None = None
    if "effects" in g:
        raw = g["effects"]
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise _schema("grant effects must be a list of effect names", f"{pointer}/effects")
        effects, unknown = parse_effect_names(raw)
        if unknown:
            raise reject("E-POLICY-EFFECT", f"unknown effect(s) {', '.join(unknown)}", f"{pointer}/effects")
    for key in ("grantedBy", "reason"):
        if key in g and not isinstance(g[key], str):
            raise _schema(f"{key} must be a string", f"{pointer}/{key}")
    expires = _int_field(g.get("expiresAtUnixMillis"), f"{pointer}/expiresAtUnixMillis", True)
    if g["id"] == REENTRANT_CAPABILITY:
        raise reentrancy_error()
    b.grant(
        g["id"],
        text_params,
        effects=effects if effects is not None else BUILTIN_GRANT_EFFECTS.get(g["id"]),
        expires_at_unix_ms=expires,
        granted_by=g.get("grantedBy", "host"),
        reason=g.get("reason", ""),
    )
    cap = byte_cap(text_params.get("maxBytesPerRun"))
    if cap is not None and g["id"] in _GRANT_BYTE_LIMITS:
        b.limit_if_unset(_GRANT_BYTE_LIMITS[g["id"]], cap)


#: The limit a JSON file grant's ``maxBytesPerRun`` sets, unless the policy's ``limits`` set it.
_GRANT_BYTE_LIMITS = {"file.read": "max_file_bytes_read", "file.write": "max_file_bytes_written"}


def _substitute(text: str, variables: Mapping[str, str]) -> str:
    for name, value in variables.items():
        text = text.replace(name, value)
    return text
