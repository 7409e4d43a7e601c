"""Pass 11, plan: freeze everything the passes established into an immutable ExecutionPlan.

Invariants established:

* the plan holds the module, policy and catalogue it was validated against, and only the bindings
  reachable from an entrypoint (a backend refuses any other binding call);
* per-function facts, expression types, call targets, and/or operand order and dead statements are
  read-only views;
* the module, policy and binding-manifest hashes are recorded and the plan hash covers them, the
  analysis versions and the derived facts (E-PLAN-INTEGRITY guards it later).
"""

from __future__ import annotations

from dotboxd.core.read_only import ReadOnlyDict

from .context import Context
from .plan import ExecutionPlan, FunctionInfo, compute_plan_hash, module_hash


def run(ctx: Context) -> ExecutionPlan:
    functions: dict[str, FunctionInfo] = {}
    used: dict[str, object] = {}
    for fid, facts in ctx.facts.items():
        reachable = fid in ctx.reachable
        if reachable:
            for bid in facts.live_bindings:
                used[bid] = ctx.catalog[bid]
        assert facts.return_type is not None
        functions[fid] = FunctionInfo(
            id=fid,
            function=facts.function,
            is_entrypoint=fid in ctx.entrypoints,
            parameter_types=facts.parameter_types,
            return_type=facts.return_type,
            local_types=ReadOnlyDict(facts.local_types),
            direct_effects=facts.direct_effects,
            effects=facts.effects,
            callees=frozenset(facts.live_callees),
            bindings_called=frozenset(facts.live_bindings),
            reachable=reachable,
            loop_types=ReadOnlyDict({k: ReadOnlyDict(v) for k, v in facts.loop_types.items()}),
        )
    plan = ExecutionPlan(
        module=ctx.module,
        policy=ctx.policy,
        catalog=ctx.catalog,
        bindings=ReadOnlyDict({bid: ctx.catalog[bid] for bid in sorted(used)}),
        functions=ReadOnlyDict(functions),
        entrypoints=tuple(ctx.entrypoints),
        required_effects=ctx.required_effects,
        required_capabilities=tuple(sorted(ctx.required_capabilities)),
        requested_capabilities=tuple(sorted(r.id for r in ctx.module.capability_requests)),
        capability_paths=ReadOnlyDict(sorted(ctx.required_capabilities.items())),
        expr_types=ReadOnlyDict(ctx.expr_types),
        call_targets=ReadOnlyDict(ctx.call_targets),
        right_first=frozenset(ctx.right_first),
        dead_statements=frozenset(ctx.dead),
        module_hash=module_hash(ctx.module),
        policy_hash=ctx.policy.policy_hash,
        binding_manifest_hash=ctx.catalog.manifest_hash,
        warnings=tuple(ctx.warnings),
    )
    object.__setattr__(plan, "plan_hash", compute_plan_hash(plan))
    return plan
