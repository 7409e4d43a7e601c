"""Pass 10, policy resolution: the policy grants everything the module needs, and nothing odd.

Steps, in DotBoxD's order (spec/validation.md section 10), each reporting with evidence:

1. the policy's effect sets carry only known bits (E-POLICY-EFFECT);
2. every grant is well formed (E-POLICY-GRANT: pattern syntax, the reserved reentrancy capability,
   two active grants of one id) and its parameters satisfy its capability's rules (E-POLICY-GRANT-
   PARAM): the built-in rules of ``policy.builtin_grant_problem``, else the grant validator of every
   binding requiring that capability; a wildcard grant carries no parameters; a capability known to
   neither the catalogue nor the built-ins accepts only a parameterless grant. A grant must also name
   something the host knows (E-POLICY-GRANT otherwise): a built-in capability, a capability some
   registered binding requires, or (for a wildcard) a pattern matching the latter. The module's
   ``capabilityRequests`` do not count: a request can never make an unknown capability grantable;
3. every capability the module *requests* is granted, unexpired and unrevoked (E-POLICY-CAP /
   E-POLICY-REVOKED);
4. every capability the module *requires* is granted likewise, with the call path from the
   entrypoint to the binding as evidence (E-POLICY-CAP / E-POLICY-REVOKED);
5. the required effects are allowed (E-POLICY-EFFECT, naming the missing effects and the path that
   introduces the first of them). Allowed effects are the policy's set; unless that set is explicit,
   an active grant without stated effects also allows the declared effects of the bindings it covers;
6. a deterministic policy has a logical clock for Time and a seed for Random, neither requires nor
   allows file, network or host-state effects, and allows no async (E-POLICY-DETERMINISM);
7. finally, in strict mode (``rejectUnusedGrants``) every active grant is used: it matches a
   requested or required capability (E-POLICY-GRANT). By default, as in DotBoxD, a known but unused
   grant is accepted with a W-POLICY-UNUSED-GRANT warning, because one host policy serves many
   kernels. Reported last so that a missing capability is named before a superfluous one.

Wildcard grants produce W-POLICY-WILDCARD warnings in the plan.
"""

from __future__ import annotations

from dotboxd.core.bindings import (
    ASYNC_CAPABILITY,
    BUILTIN_CAPABILITIES,
    BindingDescriptor,
    is_builtin_capability,
)
from dotboxd.core.diagnostics import Diagnostic
from dotboxd.core.effects import (
    NONDETERMINISTIC_IO,
    Effect,
    effect_names,
    effects_text,
    unknown_bits,
)

from .context import Context
from .policy import CapabilityGrant, builtin_grant_problem, grant_shape_problem


def run(ctx: Context) -> None:
    policy = ctx.policy
    _known_bits(ctx)
    if ctx.diagnostics:
        return
    active = _grants(ctx)
    if ctx.diagnostics:
        return
    _required(ctx, _requested(ctx))
    if ctx.diagnostics:
        return
    allowed = effective_allowed_effects(ctx, active)
    _effects(ctx, allowed)
    _determinism(ctx, allowed, active)
    if ctx.diagnostics:
        return
    _unused(ctx, active)
    ctx.warnings.extend(policy.warnings())


def _known_bits(ctx: Context) -> None:
    policy = ctx.policy
    bad = unknown_bits(int(policy.allowed_effects))
    if bad:
        ctx.report(
            "E-POLICY-EFFECT",
            f"the policy allows unknown effect bit(s) {bad}",
            "/allowedEffects",
            None,
            "use only the effects of dotboxd.core.effects.Effect",
            bits=bad,
        )
    for i, g in enumerate(policy.grants):
        if g.effects is not None and unknown_bits(int(g.effects)):
            ctx.report(
                "E-POLICY-EFFECT",
                f"grant '{g.id}' allows unknown effect bit(s) {unknown_bits(int(g.effects))}",
                f"/grants/{i}/effects",
                None,
                "",
                grant=g.id,
            )


def _bindings_requiring(ctx: Context, capability: str) -> list[BindingDescriptor]:
    return [ctx.catalog[bid] for bid in ctx.catalog if ctx.catalog[bid].capability == capability]


def _grants(ctx: Context) -> list[tuple[int, CapabilityGrant]]:
    policy = ctx.policy
    active: list[tuple[int, CapabilityGrant]] = []
    seen: dict[str, int] = {}
    for i, g in enumerate(policy.grants):
        pointer = f"/grants/{i}"
        problem = grant_shape_problem(g)
        if problem is not None:
            ctx.report("E-POLICY-GRANT", f"grant '{g.id}' {problem}", pointer, None, "", grant=str(g.id))
            continue
        problem = _parameter_problem(ctx, g)
        if problem is not None:
            ctx.report(
                "E-POLICY-GRANT-PARAM",
                f"grant '{g.id}': {problem}",
                f"{pointer}/parameters",
                None,
                "grant only the parameters the capability defines (`dotboxd check --format json` lists a plan's grants)",
                grant=g.id,
                parameters=sorted(g.parameters),
            )
            continue
        if not g.is_active(ctx.now_unix_ms) or policy.is_revoked(g.id):
            continue
        if g.id in seen:
            ctx.report(
                "E-POLICY-GRANT",
                f"capability '{g.id}' is granted twice",
                pointer,
                None,
                "merge the grants: two active grants of one capability are ambiguous",
                grant=g.id,
                first=f"/grants/{seen[g.id]}",
            )
            continue
        seen[g.id] = i
        if not _known_grant(ctx, g):
            what = (
                f"wildcard grant '{g.id}' matches no capability a"
                if g.is_wildcard
                else f"grant '{g.id}' names a capability no"
            )
            ctx.report(
                "E-POLICY-GRANT",
                f"{what} registered binding requires",
                pointer,
                None,
                "register the binding that needs the capability, or drop the grant "
                "(a module's capabilityRequests cannot make a capability grantable)",
                grant=g.id,
                requested=any(g.matches(r.id) for r in ctx.module.capability_requests),
            )
            continue
        active.append((i, g))
    return active


def _known_grant(ctx: Context, g: CapabilityGrant) -> bool:
    """Whether ``g`` grants something this host knows: a built-in capability (used or not, one policy
    serves many kernels) or a capability some registered binding requires; a wildcard must match one
    of the latter (DotBoxD's rule: a pattern is only as good as the bindings it can reach)."""
    if g.id in BUILTIN_CAPABILITIES:
        return True
    return any(b.capability is not None and g.matches(b.capability) for b in ctx.catalog.values())


def _parameter_problem(ctx: Context, g: CapabilityGrant) -> str | None:
    if g.is_wildcard:
        return "a wildcard grant takes no parameters" if g.parameters else None
    if is_builtin_capability(g.id):
        return builtin_grant_problem(g.id, g.parameters)
    validators = [b for b in _bindings_requiring(ctx, g.id) if b.grant_validator is not None]
    if not validators:
        return f"unexpected parameter(s) {', '.join(sorted(g.parameters))}" if g.parameters else None
    for b in validators:
        assert b.grant_validator is not None
        try:
            problem = b.grant_validator(dict(g.parameters))
        except Exception as exc:  # a host validator must not crash validation
            problem = f"the grant validator of binding {b.id} failed ({type(exc).__name__})"
        if problem is not None:
            return f"{problem} (validator of binding {b.id})"
    return None


def _capability_gap(ctx: Context, cap: str) -> tuple[str, str] | None:
    """(code, reason) when ``cap`` is not usable under the policy now, else None."""
    policy = ctx.policy
    pattern = policy.revocations.revoked(cap)
    if pattern is not None:
        return "E-POLICY-REVOKED", f"was revoked (revocation '{pattern}')"
    if policy.grant_for(cap, ctx.now_unix_ms) is not None:
        return None
    if any(g.matches(cap) for g in policy.grants):
        return "E-POLICY-CAP", "is granted only by an expired grant"
    return "E-POLICY-CAP", "is not granted by the policy"


def _requested(ctx: Context) -> set[str]:
    """Report ungranted requests; return them so step 4 does not report the same root cause again."""
    reported: set[str] = set()
    for req in ctx.module.capability_requests:
        gap = _capability_gap(ctx, req.id)
        if gap is not None:
            reported.add(req.id)
            code, reason = gap
            ctx.report(
                code,
                f"requested capability '{req.id}' {reason}",
                req.pointer,
                req.span,
                "a request is never a grant: the host policy must grant it, or drop the request",
                capability=req.id,
                requested=True,
            )
    return reported


def _required(ctx: Context, already: set[str]) -> None:
    for cap, path in ctx.required_capabilities.items():
        gap = None if cap in already else _capability_gap(ctx, cap)
        if gap is not None:
            code, reason = gap
            shown = " -> ".join(path)
            pointer, span = ctx.capability_origins.get(cap, ("", None))
            ctx.report(
                code,
                f"capability '{cap}' {reason}; it is needed by {shown}",
                pointer,
                span,
                f"grant '{cap}' in the host policy, or remove the call",
                capability=cap,
                path=list(path),
            )


def effective_allowed_effects(ctx: Context, active: list[tuple[int, CapabilityGrant]]) -> Effect:
    """The effects the policy allows for this catalogue (see step 5 in the module docstring)."""
    policy = ctx.policy
    allowed = Effect(int(policy.allowed_effects))
    if policy.effects_explicit:
        return allowed
    for _, g in active:
        if g.effects is not None:
            allowed |= g.effects
            continue
        for bid in ctx.catalog:
            b = ctx.catalog[bid]
            if b.capability is not None and g.matches(b.capability):
                allowed |= b.effects
    return allowed


def _effects(ctx: Context, allowed: Effect) -> None:
    missing = ctx.required_effects & ~allowed
    if not missing:
        return
    first = next(int(bit) for bit in Effect if bit and missing & bit)
    path = ctx.effect_origins.get(first, ())
    ctx.report(
        "E-POLICY-EFFECT",
        f"the module needs {effects_text(missing)}, which the policy does not allow"
        + (f" (first needed by {' -> '.join(path)})" if path else ""),
        "",
        None,
        "grant the capability that carries the effect, or allow the effect explicitly",
        required=effect_names(ctx.required_effects),
        allowed=effect_names(allowed),
        missing=effect_names(missing),
        path=list(path),
    )


def _determinism(ctx: Context, allowed: Effect, active: list[tuple[int, CapabilityGrant]]) -> None:
    policy = ctx.policy
    if not policy.deterministic:
        return
    required = ctx.required_effects

    def deny(message: str, hint: str, **evidence: object) -> None:
        ctx.report("E-POLICY-DETERMINISM", message, "/deterministic", None, hint, **evidence)

    if required & Effect.TIME and policy.logical_now_unix_ms is None:
        deny(
            "the module reads the clock but the deterministic policy has no logical time",
            "pass logical_now to deterministic()",
            path=list(ctx.effect_origins.get(int(Effect.TIME), ())),
        )
    if required & Effect.RANDOM and policy.random_seed is None:
        deny(
            "the module draws random numbers but the deterministic policy has no seed",
            "pass random_seed to deterministic()",
            path=list(ctx.effect_origins.get(int(Effect.RANDOM), ())),
        )
    io = (required | allowed) & NONDETERMINISTIC_IO
    if io:
        deny(
            f"a deterministic policy may neither require nor allow {effects_text(io)}",
            "drop the IO and host-state grants, or run non-deterministically",
            effects=effect_names(io),
            required=effect_names(required & NONDETERMINISTIC_IO),
        )
    if required & Effect.CONCURRENCY or any(g.id == ASYNC_CAPABILITY for _, g in active):
        deny(
            "a deterministic policy cannot allow async bindings",
            "remove allow_runtime_async() or deterministic()",
        )


def _unused(ctx: Context, active: list[tuple[int, CapabilityGrant]]) -> None:
    """Step 7: every grant here names a known capability (step 2); an unused one is an error only in
    strict mode, else a warning."""
    needed = set(ctx.required_capabilities) | {r.id for r in ctx.module.capability_requests}
    for i, g in active:
        if any(g.matches(cap) for cap in needed):
            continue
        if g.is_wildcard:
            reason = f"wildcard grant '{g.id}' matches no capability the module needs"
        else:
            reason = f"grant '{g.id}' is not used by this module"
        evidence = {"grant": g.id, "needed": sorted(needed)}
        if ctx.policy.reject_unused_grants:
            ctx.report(
                "E-POLICY-GRANT",
                reason,
                f"/grants/{i}",
                None,
                "strict mode (rejectUnusedGrants): grant only what this kernel needs",
                **evidence,
            )
        else:
            ctx.warnings.append(
                Diagnostic("W-POLICY-UNUSED-GRANT", reason, f"/grants/{i}", None, evidence, "")
            )
