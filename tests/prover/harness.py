"""Shared machinery for the prover's soundness tests: prepare a program, prove it, run it, compare.

The reference interpreter is the ground truth of actual cost. ``check_program`` runs every input
of a program and returns the list of soundness violations it finds (empty when the prover's claims
all hold):

* actual fuel, loop iterations, host calls and allocation never exceed the symbolic bound
  evaluated on the input (for every bound, PROVED or not: a bound is an upper bound everywhere);
* a PROVED budget is never exhausted by a run;
* an operation proved safe never fails (an instrumented backend records which node faulted);
* a REFUTED budget's counterexample, when run, is stopped by a quota.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dotboxd.core import ast
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.core.types import to_type_ref
from dotboxd.core.values import SandboxFault, Value, decode_typed
from dotboxd.grammar import literals
from dotboxd.grammar.wire import import_module, to_wire
from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.fixtures import fixture_invokers
from dotboxd.runtime.reference import interpreter as ref
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


class _TracingMachine(ref._Machine):
    """The reference machine, recording the node whose operation raised a value fault."""

    def __init__(self, run: RunContext, sink: list[int]) -> None:
        super().__init__(run)
        self._sink = sink
        for kind in (ast.Binary, ast.Unary, ast.Call):
            inner = self._eval[kind]
            self._eval[kind] = self._traced(inner)

    def _traced(self, inner: Any) -> Any:
        def run(node: Any, env: Any) -> Any:
            try:
                return inner(node, env)
            except SandboxFault:
                if not self._sink:
                    self._sink.append(id(node))
                raise

        return run


class TracingBackend:
    """A reference backend that remembers which node faulted (``faulted``: node ids)."""

    name = "reference"

    def __init__(self) -> None:
        self.faulted: list[int] = []

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        self.faulted.clear()
        return _TracingMachine(run, self.faulted).invoke(function_id, args)


@dataclass
class Prepared:
    plan: ExecutionPlan
    host: SandboxHost
    tracer: TracingBackend
    entry: str
    report: ProofReport


@dataclass
class Observed:
    """What one run showed, for the tightness and share statistics."""

    fuel: int
    bound: int | None
    ok: bool


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
    tracer = TracingBackend()
    host = SandboxHost(catalog, backends={"traced": tracer})
    policy = Policy.from_json(dict(policy_json))
    policy = replace(policy, require_static_bound=False)
    try:
        plan = host.prepare(import_module(json.dumps(to_wire(module))), policy)
    except Exception:
        return None
    return Prepared(plan, host, tracer, entry, prove_plan(plan))


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
    return p.host.execute(p.plan, p.entry, list(args_json), encoding="json", backend="traced")


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
        if code in FAULT_CODES and p.tracer.faulted and p.tracer.faulted[0] in p.report.safe_nodes:
            out.violations.append(f"a node proved safe failed with {code} for {args_json}")
        out.runs.append(Observed(usage.fuel_used, p.report.bound_at(p.entry, "fuel", values), result.ok))
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
