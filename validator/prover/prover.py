"""``prove_plan(plan) -> ProofReport``: run the static cost semantics and Z3 on every function.

For each function of the plan's module (in module order): build its input atoms (entrypoints use
the policy's ``inputBounds``; a private function is analysed for any arguments of its types),
analyse it (``analyzer.py``), then decide every budget (``budgets.py``). Entrypoints inline the
private functions they call, so their verdicts cover whole runs; the safety facts gathered while
analysing entrypoints are the ones that hold on every run.

The prover is bounded: per function an abstract-step budget and size caps on every symbolic
expression (``ProverLimit``), per query a Z3 ``rlimit``, per module a number of queries. Hitting a
bound makes the affected verdicts UNKNOWN, never wrong, and the same input always hits it at the
same point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dotboxd.core.values import Value
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Limits

from . import smt
from .analyzer import Analyzer, FunctionAnalysis
from .budgets import WitnessCheck, bounds_ok, decide, input_quotas_ok, limits_for, search, shrink
from .domain import Domain, Quotas
from .inputs import InputModel
from .obligations import ObligationLog
from .report import BudgetVerdict, FunctionProof, LoopFact, ProofReport, Verdict, Witness
from .state import ALLOCATION, FUEL, HOST_CALLS, LOOPS, STRING_BYTES, State
from .sym import ZERO, Cond, ProverLimit, Sym
from .text import Namer


def call_depths(plan: ExecutionPlan) -> dict[str, int]:
    """Frames a call of each function can reach (1 for a function that calls no module function)."""
    memo: dict[str, int] = {}

    def depth(fid: str, seen: frozenset[str]) -> int:
        if fid in memo:
            return memo[fid]
        info = plan.functions[fid]
        inner = [
            depth(c, seen | {fid}) for c in sorted(info.callees) if c in plan.functions and c not in seen
        ]
        memo[fid] = 1 + max(inner, default=0)
        return memo[fid]

    for fid in plan.functions:
        depth(fid, frozenset())
    return memo


def prove_plan(
    plan: ExecutionPlan,
    *,
    rlimit: int = smt.DEFAULT_RLIMIT,
    entrypoints_only: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ProofReport:
    """Prove what can be proved about ``plan`` under its own policy. ``entrypoints_only`` (strict
    mode) skips the separate any-arguments proofs of private functions: an entrypoint inlines the
    private functions it calls, so its verdicts cover whole runs without them. ``progress(done,
    count)`` is called after each function proved (the CLI draws it on a terminal for a large
    module)."""
    quotas = Quotas.from_limits(plan.policy.limits)
    total = plan.policy.prove_rlimit if plan.policy.prove_rlimit is not None else smt.MODULE_RLIMIT
    log = ObligationLog(rlimit, total=total)
    depths = call_depths(plan)
    by_id: dict[str, FunctionProof] = {}
    safe: set[int] = set()
    unsafe: set[int] = set()
    evaluators: dict[str, Any] = {}
    # entrypoints first: their verdicts are what strict mode decides on, so a module of many
    # private functions cannot spend the shared budget before its entrypoints are asked about
    order = [
        f
        for f in plan.module.functions
        if f.id in plan.functions and (plan.functions[f.id].is_entrypoint or not entrypoints_only)
    ]
    order.sort(key=lambda f: not plan.functions[f.id].is_entrypoint)
    count = len(order)
    for done, fn in enumerate(order, 1):
        info = plan.functions[fn.id]
        if progress is not None:
            progress(done, count)
        proof, analysis, evaluator = _prove_function(plan, fn.id, quotas, log, depths[fn.id])
        by_id[fn.id] = proof
        if evaluator is not None:
            evaluators[fn.id] = evaluator
        if info.is_entrypoint and analysis is not None and analysis.complete:
            safe |= analysis.safe_nodes
            unsafe |= analysis.unsafe_nodes
        elif info.is_entrypoint:
            unsafe.add(-1)  # an entrypoint was not fully analysed: no node-level fact is global
    safe_nodes = frozenset() if -1 in unsafe else frozenset(safe - unsafe)
    proofs = [by_id[f.id] for f in plan.module.functions if f.id in by_id]
    return ProofReport(
        module=plan.module.id,
        module_hash=plan.module_hash,
        policy_hash=plan.policy_hash,
        z3_version=smt.z3_version(),
        functions=tuple(proofs),
        obligations=tuple(log.obligations),
        safe_nodes=safe_nodes,
        _bounds=evaluators,
        solver_work=log.total - log.left,
        solver_memory_mb=log.peak_memory_mb,
    )


def _prove_function(
    plan: ExecutionPlan, fid: str, quotas: Quotas, log: ObligationLog, depth: int
) -> tuple[FunctionProof, FunctionAnalysis | None, Any]:
    info = plan.functions[fid]
    entry = info.is_entrypoint
    policy = plan.policy
    limits = policy.limits
    sym = Sym()
    dom = Domain(sym, quotas)
    names = [p.name for p in info.function.parameters]
    bounds = policy.input_bounds.get(fid) if entry else None
    model = InputModel(sym, dom, names, info.parameter_types, bounds)
    namer = Namer(sym, _atom_names(model))
    an = Analyzer(plan, sym, dom, log)
    an.namer = namer
    log.begin()
    depth_budget = BudgetVerdict(
        "callDepth",
        limits.max_call_depth,
        Verdict.PROVED if depth <= limits.max_call_depth else Verdict.UNKNOWN,
        str(depth),
        depth,
        "call graph",
        reason="" if depth <= limits.max_call_depth else "a call chain is longer than maxCallDepth",
        hint="" if depth <= limits.max_call_depth else "raise maxCallDepth or flatten the call chain",
    )

    def valid(values: Sequence[Value]) -> bool:
        return bounds_ok(values, names, bounds) and input_quotas_ok(values, limits)

    witnesses = WitnessCheck(model, valid) if entry else None
    if entry and witnesses is not None:
        an.refute_arith = _arith_refuter(sym, model, witnesses, limits, depth)
    try:
        analysis = an.analyze(fid, list(model.values), input_charges=entry, input_sbytes=model.sbytes)
        note = "; ".join(f.method for f in analysis.loops if f.verdict is not Verdict.PROVED)
        budgets = decide(
            sym, namer, log, analysis, model, limits_for(analysis, limits, plan.bindings), witnesses, note
        )
    except (ProverLimit, RecursionError) as stop:
        reason = str(stop) if isinstance(stop, ProverLimit) else "the function nests too deeply to analyse"
        budgets = [
            BudgetVerdict(r, getattr(limits, attr), Verdict.UNKNOWN, "not analysed", None, reason=reason)
            for r, attr in (
                (FUEL, "max_fuel"),
                (LOOPS, "max_loop_iterations"),
                (HOST_CALLS, "max_host_calls"),
                (ALLOCATION, "max_allocated_bytes"),
            )
        ]
        proof = FunctionProof(
            fid, entry, (*budgets, depth_budget), tuple(an.loop_facts), (), depth, note=reason
        )
        return proof, None, None
    proof = FunctionProof(
        fid,
        entry,
        (*budgets, depth_budget),
        tuple(analysis.loops),
        tuple(analysis.safety[k] for k in sorted(analysis.safety)),
        depth,
        note="; ".join(x for x in (analysis.note, log.spent) if x),
    )

    return proof, analysis, BoundEvaluator(sym, model, analysis)


class BoundEvaluator:
    """Evaluates a function's symbolic bounds on concrete arguments (tests, tightness reports)."""

    def __init__(self, sym: Sym, model: InputModel, analysis: FunctionAnalysis) -> None:
        self.sym = sym
        self.model = model
        self.analysis = analysis

    def admits(self, args: Sequence[object]) -> bool:
        """Do the arguments satisfy the preconditions (every atom within its range)?"""
        env = self.model.env(args)
        return all(self.sym.factors[a].lo <= v <= self.sym.factors[a].hi for a, v in env.items())

    def evaluate(self, resource: str, args: Sequence[object]) -> int | None:
        upper = self.analysis.upper.get(resource, ZERO)
        if upper is None:
            return None
        return self.sym.evaluate(upper, self.model.env(args))


def _atom_names(model: InputModel) -> dict[int, str]:
    out: dict[int, str] = {}
    for a in model.atoms:
        if a.facet == "value" or a.facet == "bool":
            out[a.atom] = a.name
        elif a.facet == "length":
            out[a.atom] = f"len({a.name})"
        elif a.facet == "elements":
            out[a.atom] = f"elements({a.name})"
        else:
            out[a.atom] = f"|{a.name}|"
    return out


def _arith_refuter(sym: Sym, model: InputModel, witnesses: WitnessCheck, limits: Limits, depth: int) -> Any:
    """A failing arithmetic operation on the must path is REFUTED only if the run surely gets
    there: every budget of the prefix fits its limit at the witness and the input is valid."""

    def prefix_fits(st: State, env: dict[int, int]) -> bool:
        values: dict[str, int] = {}
        for resource, upper in st.U.items():
            if upper is None:
                return False
            values[resource] = sym.evaluate(upper, env)
        text = values.get(STRING_BYTES, 0)
        return (
            values.get(FUEL, 0) <= limits.max_fuel
            and values.get(LOOPS, 0) <= limits.max_loop_iterations
            and values.get(HOST_CALLS, 0) <= limits.max_host_calls
            and text <= limits.max_total_string_bytes
            and values.get(ALLOCATION, 0) + text <= limits.max_allocated_bytes
        )

    def confirm(st: State, raw: dict[int, int], fault: Cond) -> Witness | None:
        if depth > limits.max_call_depth:
            return None

        def fails_here(env: Mapping[int, int]) -> bool:
            full = dict(env)
            try:
                return (
                    sym.holds(fault, full)
                    and all(sym.holds(c, full) for c in st.pc)
                    and prefix_fits(st, full)
                )
            except KeyError:  # the condition mentions an atom that is not an input: no verdict
                return False

        small = search(sym, model, fails_here)
        if small is None:  # the solver's point, moved toward 0 while it still fails
            small = shrink(sym, model, model.complete(raw), fails_here)
        built = witnesses.build(small)
        if built is None:
            return None
        witness, env = built
        return witness if fails_here(env) else None

    return confirm


__all__ = ["LoopFact", "call_depths", "prove_plan"]
