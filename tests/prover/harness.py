"""Shared machinery for the prover's soundness tests: prepare a program, prove it, run it, compare.

The reference interpreter is the ground truth of actual cost. ``check_program`` runs every input
of a program and returns the list of soundness violations it finds (empty when the prover's claims
all hold):

* actual fuel, loop iterations, host calls and allocation never exceed the symbolic bound
  evaluated on the input (for every bound, PROVED or not: a bound is an upper bound everywhere);
* a PROVED budget is never exhausted by a run;
* a run never fails with an arithmetic or index error that only operations proved safe could raise;
* a REFUTED budget's counterexample, when run, is stopped by a quota.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dotboxd.core import ast
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.core.types import I32, I64, to_type_ref
from dotboxd.core.values import SandboxFault, Value, decode_typed
from dotboxd.grammar import literals
from dotboxd.grammar.wire import import_module, to_wire
from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.fixtures import fixture_invokers
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy
from dotboxd.validator.prover import ProofReport, Verdict, prove_plan

RESOURCES = {
    "fuel": "fuel_used",
    "loopIterations": "loop_iterations",
    "hostCalls": "host_calls",
    "allocatedBytes": "allocated_bytes",
}
QUOTA_CODES = {
    "fuel": "R-QUOTA-FUEL",
    "loopIterations": "R-QUOTA-LOOP",
    "hostCalls": "R-QUOTA-HOST-CALLS",
    "allocatedBytes": "R-QUOTA-ALLOCATION",
}
FAULT_CODES = frozenset({"R-ARITH-OVERFLOW", "R-ARITH-DIVIDE-BY-ZERO", "R-ARITH-CLAMP-RANGE", "R-LIST-INDEX"})


_FAULT_OPS = {
    "R-ARITH-OVERFLOW": frozenset({"add", "sub", "mul", "div", "rem", "-", "math.abs"}),
    "R-ARITH-DIVIDE-BY-ZERO": frozenset({"div", "rem"}),
    "R-ARITH-CLAMP-RANGE": frozenset({"math.clamp"}),
    "R-LIST-INDEX": frozenset({"list.get", "list.slice"}),
}


def fault_capable_nodes(plan: ExecutionPlan, code: str) -> set[int]:
    """``id()`` of every node of the plan's module that can raise ``code`` (integer operators,
    ``math.abs``, ``math.clamp``, ``list.get``, ``list.slice``). Used instead of asking the interpreter which node
    failed, so the check does not depend on the interpreter's internals."""
    ops = _FAULT_OPS.get(code, frozenset())
    out: set[int] = set()
    stack: list[Any] = [s for fn in plan.module.functions for s in fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Binary | ast.Unary):
            name = node.op.value
            if name in ops and plan.expr_types.get(id(node)) in (I32, I64):
                out.add(id(node))
        elif isinstance(node, ast.Call) and node.name in ops:
            out.add(id(node))
        for child in _children(node):
            stack.append(child)
    return out


def _children(node: Any) -> list[Any]:
    if isinstance(node, ast.Binary):
        return [node.left, node.right]
    if isinstance(node, ast.Unary):
        return [node.operand]
    if isinstance(node, ast.Call):
        return list(node.args)
    if isinstance(node, ast.Set | ast.Return | ast.ExprStmt):
        return [node.value]
    if isinstance(node, ast.If):
        return [node.condition, *node.then, *node.else_]
    if isinstance(node, ast.While):
        return [node.condition, *node.body]
    if isinstance(node, ast.ForRange):
        return [node.start, node.end, *node.body]
    return []


@dataclass
class Prepared:
    plan: ExecutionPlan
    host: SandboxHost
    entry: str
    report: ProofReport


@dataclass
class Observed:
    """What one run showed, for the tightness and share statistics."""

    fuel: int
    bound: int | None
    ok: bool
    ratios: dict[str, float] = field(default_factory=dict)  # resource -> bound / actual (actual > 0)


@dataclass
class Findings:
    violations: list[str] = field(default_factory=list)
    runs: list[Observed] = field(default_factory=list)


def prepare(
    module: Any, policy_json: Mapping[str, Any], bindings_json: Sequence[Mapping[str, Any]], entry: str
) -> Prepared | None:
    """Validate like the conformance runner; None when the module is rejected."""
    descriptors = load_binding_manifest(list(bindings_json))
    catalog = BindingRegistry(descriptors).build()
    returns = {d.id: d.return_type for d in descriptors}
    catalog = catalog.with_invokers(fixture_invokers(list(bindings_json), returns))
    host = SandboxHost(catalog)
    policy = Policy.from_json(dict(policy_json))
    policy = replace(policy, require_static_bound=False)
    try:
        plan = host.prepare(import_module(json.dumps(to_wire(module))), policy)
    except Exception:
        return None
    return Prepared(plan, host, entry, prove_plan(plan))


def decode_args(plan: ExecutionPlan, entry: str, args_json: Sequence[Any]) -> list[Value] | None:
    types = plan.functions[entry].parameter_types
    if len(args_json) != len(types):
        return None
    try:
        return [decode_typed(a, to_type_ref(t), literals) for a, t in zip(args_json, types, strict=True)]
    except SandboxFault:
        return None


def in_preconditions(p: Prepared, values: Sequence[Value]) -> bool:
    """The input satisfies the atoms' ranges (types, inputBounds, size limits)."""
    return p.report.admits(p.entry, values)


def run(p: Prepared, args_json: Sequence[Any]) -> ExecutionResult:
    return p.host.execute(p.plan, p.entry, list(args_json), encoding="json")


def check_program(p: Prepared, inputs: Sequence[Sequence[Any]]) -> Findings:
    out = Findings()
    proof = p.report.function(p.entry)
    for args_json in inputs:
        values = decode_args(p.plan, p.entry, args_json)
        if values is None or not in_preconditions(p, values):
            continue
        result = run(p, args_json)
        usage = result.usage
        code = result.error.code if result.error is not None else None
        for resource, attr in RESOURCES.items():
            actual = getattr(usage, attr)
            bound = p.report.bound_at(p.entry, resource, values)
            if bound is not None and actual > bound:
                out.violations.append(f"{resource}: actual {actual} > bound {bound} for {args_json}")
            verdict = proof.budget(resource)
            if verdict is not None and verdict.verdict is Verdict.PROVED and code == QUOTA_CODES[resource]:
                out.violations.append(f"{resource}: PROVED but the run hit {code} for {args_json}")
        if code in FAULT_CODES and fault_capable_nodes(p.plan, code) <= p.report.safe_nodes:
            out.violations.append(
                f"every node that can raise {code} was proved safe, yet {args_json} raised it"
            )
        ratios: dict[str, float] = {}
        for resource, attr in RESOURCES.items():
            actual, bound = getattr(usage, attr), p.report.bound_at(p.entry, resource, values)
            if actual > 0 and bound is not None:
                ratios[resource] = bound / actual
        out.runs.append(
            Observed(usage.fuel_used, p.report.bound_at(p.entry, "fuel", values), result.ok, ratios)
        )
    for b in proof.budgets:
        if b.verdict is Verdict.REFUTED:
            assert b.witness is not None
            result = run(p, list(b.witness.args))
            if result.error is None or result.error.category != "QuotaExceeded":
                got = "success" if result.error is None else result.error.code
                out.violations.append(
                    f"{b.resource}: REFUTED by {b.witness.text()} but the run ended in {got}"
                )
    for s in proof.safety:
        if s.verdict is Verdict.REFUTED:
            assert s.witness is not None
            result = run(p, list(s.witness.args))
            if result.error is None or result.error.code not in FAULT_CODES:
                got = "success" if result.error is None else result.error.code
                out.violations.append(f"{s.pointer}: {s.op} REFUTED but the witness run ended in {got}")
    return out
