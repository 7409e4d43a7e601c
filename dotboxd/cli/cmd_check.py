"""``dotboxd check MODULE [--policy P] [--bindings M] [--format json]``: validate without running.

Imports MODULE (``.json`` wire or ``.dbk`` text), validates it against the policy (default: pure
computation only) and the host bindings, and prints the verdict with what a reviewer needs: the
derived required effects and capabilities (each with the call path that needs it), the bindings the
plan may call, warnings, and the module, policy, binding-manifest and plan hashes.

Bindings: DotBoxD's standard effectful bindings (``file.readText``, ``time.nowUnixMillis``,
``log.info``...) are known unless ``--no-standard-bindings`` is given; ``--bindings M`` adds the
bindings of a JSON manifest (DotBoxD's manifest form, or a bare conformance ``bindings`` array).

Exit codes: 0 accepted, 1 rejected (module, policy or manifest), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse

from dotboxd.cli.host_inputs import add_host_options, load_policy_and_catalog, validated_plan
from dotboxd.cli.output import Input, Reporter, module_command, write_text
from dotboxd.core.effects import effects_text
from dotboxd.validator.plan import ExecutionPlan


@module_command(
    "check",
    help="validate a module against a policy and bindings; print effects, capabilities, hashes",
    options=add_host_options,
)
def run(args: argparse.Namespace, reporter: Reporter, loaded: Input) -> int:
    """Validate FILE against a policy and host bindings without running it."""
    inputs = load_policy_and_catalog(reporter, args, loaded)
    if isinstance(inputs, int):
        return inputs
    policy, catalog = inputs
    plan = validated_plan(reporter, loaded, policy, catalog, args.now_ms)
    if isinstance(plan, int):
        return plan
    if not reporter.machine:
        for warning in plan.warnings:
            write_text(
                reporter.err,
                warning.render(None, args.policy or "<policy>").replace("error[", "warning[") + "\n",
            )
    return reporter.accepted(
        {"file": loaded.filename, **plan.summary()}, human_summary(plan, loaded.filename)
    )


register = run.register


def human_summary(plan: ExecutionPlan, filename: str) -> str:
    """The readable verdict (golden-tested)."""
    lines = [f"{filename}: accepted (module {plan.module.id} {plan.module.version})"]
    lines.append(f"  entrypoints: {', '.join(plan.entrypoints)}")
    lines.append(f"  required effects: {effects_text(plan.required_effects)}")
    if plan.required_capabilities:
        lines.append("  required capabilities:")
        width = max(len(c) for c in plan.required_capabilities)
        for cap in plan.required_capabilities:
            path = " -> ".join(plan.capability_paths.get(cap, ()))
            lines.append(f"    {cap.ljust(width)}  via {path}")
    else:
        lines.append("  required capabilities: none")
    lines.append(f"  bindings: {', '.join(sorted(plan.bindings)) or 'none'}")
    lines.append(f"  language surface: {plan.language_surface}")
    for fid, info in sorted(plan.functions.items()):
        role = (
            "entrypoint" if info.is_entrypoint else ("private" if info.reachable else "private, unreachable")
        )
        lines.append(f"  fn {fid} ({role}): {effects_text(info.effects)}")
    lines.append(f"  module hash:           {plan.module_hash}")
    lines.append(f"  policy hash:           {plan.policy_hash}")
    lines.append(f"  binding manifest hash: {plan.binding_manifest_hash}")
    lines.append(f"  plan hash:             {plan.plan_hash}")
    return "\n".join(lines)
