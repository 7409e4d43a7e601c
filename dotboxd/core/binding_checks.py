"""The twelve registry checks one binding must pass (spec/validation.md section 8, DotBoxD's order).

``check_binding`` returns the first failure as a Diagnostic naming the binding, so a registry can
report every bad binding at once; duplicates need all descriptors and are checked by the registry."""

from __future__ import annotations

import re
from typing import Any

from dotboxd.core.binding_model import (
    BUILTIN_CAPABILITIES,
    BUILTIN_CAPABILITY_EFFECTS,
    RESERVED_CAPABILITIES,
    AuditKind,
    AuditLevel,
    BindingDescriptor,
    Cost,
    Safety,
    is_builtin_capability,
)
from dotboxd.core.builtins import EXACT_STUBS, GENERIC_STUB
from dotboxd.core.diagnostics import Diagnostic
from dotboxd.core.effects import (
    PURE,
    Effect,
    effect_names,
    effects_text,
    unknown_bits,
)
from dotboxd.core.types import (
    MAX_TYPE_DEPTH,
    OpaqueIdType,
    SandboxType,
    contains_brand,
)

# ---------------------------------------------------------------------------------------------
# Registry checks (spec/validation.md section 8, in DotBoxD's order)

_DOTTED = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+")
_CLR_ROOTS = frozenset(
    s.lower()
    for s in (
        "System",
        "Microsoft",
        "Assembly",
        "Type",
        "Reflection",
        "Process",
        "Environment",
        "Thread",
        "Task",
        "DllImport",
        "IServiceProvider",
    )
)
_EXTERNAL = frozenset({Safety.READ_ONLY_EXTERNAL, Safety.SIDE_EFFECTING_EXTERNAL})


def _clr_root(dotted: str) -> str | None:
    segments = dotted.split(".")
    root = segments[1] if segments[0].lower() == "host" and len(segments) > 1 else segments[0]
    return root if root.lower() in _CLR_ROOTS else None


def binding_problem(
    code: str, b: BindingDescriptor, message: str, hint: str = "", **evidence: Any
) -> Diagnostic:
    return Diagnostic(
        code,
        f"binding {b.id or '<missing id>'}: {message}",
        b.origin,
        None,
        {"binding": b.id, **evidence},
        hint,
    )


def check_binding(b: BindingDescriptor, *, require_invoke: bool = False) -> Diagnostic | None:
    """The first registry check ``b`` fails (DotBoxD's order), or None. Duplicates are checked by
    the registry, which sees all descriptors."""
    # 1. required fields
    missing = [
        name
        for name, value in (
            ("id", b.id),
            ("version", b.version),
            ("returnType", b.return_type),
            ("costModel", b.cost),
            ("auditLevel", b.audit),
            ("safety", b.safety),
        )
        if value is None or value == ""
    ]
    if b.parameters is None:
        missing.append("parameters")
    if require_invoke and b.invoke is None:
        missing.append("invoke")
    if missing:
        return binding_problem("E-BINDING-REQUIRED", b, f"missing {', '.join(missing)}", missing=missing)
    # 2. id and capability are dotted identifiers, not rooted in host machinery
    if not isinstance(b.id, str) or _DOTTED.fullmatch(b.id) is None:
        return binding_problem(
            "E-BINDING-ID", b, "the id must be a dotted identifier such as 'game.world.kill'", id=str(b.id)
        )
    root = _clr_root(b.id)
    if root is not None:
        return binding_problem(
            "E-BINDING-DANGER", b, f"the id is rooted in the host namespace '{root}'", root=root
        )
    if b.capability is not None:
        if not isinstance(b.capability, str) or not (
            _DOTTED.fullmatch(b.capability) or b.capability in BUILTIN_CAPABILITIES
        ):
            return binding_problem(
                "E-BINDING-CAP",
                b,
                f"the capability '{b.capability}' is not a concrete dotted identifier",
                capability=str(b.capability),
            )
        cap_root = _clr_root(b.capability)
        if cap_root is not None:
            return binding_problem(
                "E-BINDING-DANGER",
                b,
                f"the capability is rooted in the host namespace '{cap_root}'",
                root=cap_root,
            )
        if b.capability in RESERVED_CAPABILITIES:
            return binding_problem(
                "E-BINDING-CAP",
                b,
                f"the capability '{b.capability}' is reserved to the runtime",
                hint="mark the binding is_async instead of requiring dotboxd.runtime.async",
                capability=b.capability,
            )
    # 3. effects known and non-empty
    if not isinstance(b.effects, int) or isinstance(b.effects, bool) or int(b.effects) <= 0:
        return binding_problem(
            "E-BINDING-EFFECT", b, "effects must be a non-empty effect set", effects=str(b.effects)
        )
    if unknown_bits(int(b.effects)):
        return binding_problem(
            "E-BINDING-EFFECT",
            b,
            f"effects carry unknown bit(s) {unknown_bits(int(b.effects))}",
            effects=int(b.effects),
        )
    # 4. audit level, kind and safety are known
    if not isinstance(b.audit, AuditLevel) or not isinstance(b.audit_kind, AuditKind):
        return binding_problem(
            "E-BINDING-AUDIT", b, f"unknown audit level or kind ({b.audit!r}, {b.audit_kind!r})"
        )
    if not isinstance(b.safety, Safety):
        return binding_problem("E-BINDING-SAFETY", b, f"unknown safety class {b.safety!r}")
    effects = Effect(int(b.effects))
    impure = effects & ~PURE
    # 5. non-pure effects need a capability; a capability with only pure effects is an error
    if impure and b.capability is None:
        return binding_problem(
            "E-BINDING-CAP",
            b,
            f"effects {effects_text(effects)} go beyond Cpu|Alloc but no capability is required",
            hint="every side effect must be gated by a capability the policy grants",
            effects=effect_names(effects),
        )
    if not impure and b.capability is not None:
        return binding_problem(
            "E-BINDING-CAP",
            b,
            f"capability '{b.capability}' gates only pure effects {effects_text(effects)}",
            hint="declare the effect the capability protects, or drop the capability",
            capability=b.capability,
        )
    # 6. external or effectful bindings need a capability and an audit level
    if b.safety in _EXTERNAL or impure:
        if b.capability is None:
            return binding_problem(
                "E-BINDING-CAP", b, f"a {b.safety.value} binding must require a capability"
            )
        if b.audit is AuditLevel.NONE:
            return binding_problem(
                "E-BINDING-AUDIT",
                b,
                "an external or effectful binding must be audited (audit level None)",
                hint="use PerCall, PerResource, Summary or FullInputOutput",
            )
    # 7. a custom capability needs a grant validator
    if b.capability is not None and not is_builtin_capability(b.capability) and b.grant_validator is None:
        return binding_problem(
            "E-BINDING-GRANT",
            b,
            f"custom capability '{b.capability}' has no grant validator",
            hint="pass grant_validator=GrantParameters(...) (GrantParameters() accepts parameterless grants)",
        )
    # 8. built-in capability / effect pairings
    needed = BUILTIN_CAPABILITY_EFFECTS.get(b.capability or "")
    if needed is not None:
        allowed = needed | Effect.CPU | Effect.ALLOC | Effect.AUDIT
        if not effects & needed or effects & ~allowed:
            return binding_problem(
                "E-BINDING-CAP-EFFECT",
                b,
                f"capability '{b.capability}' must carry {effects_text(needed)} and only Cpu, Alloc or Audit "
                f"besides; declared {effects_text(effects)}",
                capability=b.capability,
                effects=effect_names(effects),
            )
    # 9. dangerous bindings are never registered; pure-intrinsic claims must be true
    if b.safety is Safety.DANGEROUS_REQUIRES_REVIEW:
        return binding_problem(
            "E-BINDING-SAFETY", b, "DangerousRequiresReview bindings are rejected until reviewed"
        )
    if b.safety is Safety.PURE_INTRINSIC and (impure or b.capability is not None or b.is_async):
        return binding_problem(
            "E-BINDING-SAFETY", b, "a PureIntrinsic binding must be pure, synchronous and capability-free"
        )
    # 10. costs are non-negative integers
    cost = b.cost
    assert cost is not None
    if not _nonneg_int(cost.base_fuel) or not _nonneg_int(cost.per_byte_fuel):
        return binding_problem(
            "E-BINDING-COST", b, "base and per-byte fuel must be integers >= 0", cost=_cost_evidence(cost)
        )
    if cost.max_calls_per_run is not None and not _nonneg_int(cost.max_calls_per_run):
        return binding_problem(
            "E-BINDING-COST", b, "maxCallsPerRun must be an integer >= 0", cost=_cost_evidence(cost)
        )
    if not isinstance(cost.allocation_from_return_bytes, bool):
        return binding_problem("E-BINDING-COST", b, "allocationFromReturnBytes must be a boolean")
    # 11. the compiled stub is allowlisted
    if b.compiled_stub != GENERIC_STUB:
        stub = EXACT_STUBS.get(b.compiled_stub)
        if stub is None:
            return binding_problem(
                "E-BINDING-COMPILED", b, f"'{b.compiled_stub}' is not an allowlisted runtime stub"
            )
        if b.safety is not Safety.PURE_INTRINSIC or b.audit is not AuditLevel.NONE:
            return binding_problem(
                "E-BINDING-COMPILED", b, "an exact stub needs a PureIntrinsic binding with audit None"
            )
        if stub != (tuple(b.parameters), b.return_type):
            return binding_problem(
                "E-BINDING-COMPILED",
                b,
                f"stub {b.compiled_stub} has a different signature than {b.signature}",
                stub=b.compiled_stub,
            )
    # 12. types are built-in sandbox types (no brands, nothing deeper than the limit)
    for index, t in enumerate((*b.parameters, b.return_type)):
        where = "return type" if index == len(b.parameters) else f"parameter {index + 1}"
        problem = _binding_type_problem(t)
        if problem is not None:
            return binding_problem("E-BINDING-TYPE", b, f"{where} {t}: {problem}", type=str(t))
    return None


def _binding_type_problem(t: object) -> str | None:
    if not isinstance(t, SandboxType):
        return "is not a sandbox type"
    if contains_brand(t):
        return "opaque-id brands are module vocabulary; bindings use built-in types only"
    if t.depth > MAX_TYPE_DEPTH:
        return f"is nested deeper than {MAX_TYPE_DEPTH}"
    if isinstance(t, OpaqueIdType):
        return "is not a built-in type"
    return None


def _nonneg_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _cost_evidence(cost: Cost) -> dict[str, Any]:
    return {
        "baseFuel": cost.base_fuel,
        "perByteFuel": cost.per_byte_fuel,
        "maxCallsPerRun": cost.max_calls_per_run,
    }


__all__ = [
    "binding_problem",
    "check_binding",
]
