"""Strict mode: a policy with ``requireStaticBound`` installs a kernel only if every budget is PROVED.

``require_static_bound(plan)`` is the validator hook: it proves the plan and raises DotBoxDError
with one diagnostic per entrypoint limit that is not PROVED (E-PROOF-REFUTED with the
counterexample input and the overshoot, or E-PROOF-UNPROVEN with the reason), pointing at the
entrypoint. UNKNOWN is never accepted in strict mode.
"""

from __future__ import annotations

from dotboxd.core.diagnostics import Diagnostic, DotBoxDError
from dotboxd.validator.plan import ExecutionPlan

from .prover import prove_plan
from .report import BudgetVerdict, ProofReport, Verdict


def require_static_bound(plan: ExecutionPlan) -> ProofReport:
    """Prove ``plan``; raise DotBoxDError unless every entrypoint budget is PROVED."""
    report = prove_plan(plan, entrypoints_only=True)
    diagnostics: list[Diagnostic] = []
    for proof in report.entrypoints():
        fn = plan.module.function(proof.function)
        pointer = fn.pointer if fn is not None else ""
        span = fn.span if fn is not None else None
        for budget in proof.budgets:
            if budget.verdict is not Verdict.PROVED:
                diagnostics.append(_diagnostic(proof.function, budget, pointer, span))
    if diagnostics:
        raise DotBoxDError(diagnostics)
    return report


def _diagnostic(function: str, b: BudgetVerdict, pointer: str, span: object) -> Diagnostic:
    evidence: dict[str, object] = {
        "function": function,
        "resource": b.resource,
        "limit": b.limit,
        "bound": b.bound,
        "boundMax": b.bound_max,
        "verdict": b.verdict.value,
    }
    if b.verdict is Verdict.REFUTED:
        assert b.witness is not None
        evidence["witness"] = list(b.witness.args) if len(str(b.witness.args)) <= 200 else b.witness.text()
        evidence["reached"] = b.reached
        evidence["factor"] = round(b.factor or 0.0, 1)
        message = (
            f"requireStaticBound: {b.resource} of '{function}' is REFUTED: proved that the input "
            f"{b.witness.text()} needs at least {b.reached:,} where the limit is {b.limit:,}, so a run "
            "on it is stopped by the quota"
        )
        code = "E-PROOF-REFUTED"
    else:
        message = f"requireStaticBound: {b.resource} of '{function}' is not proved ({b.reason})"
        code = "E-PROOF-UNPROVEN"
    from dotboxd.core.diagnostics import Span

    return Diagnostic(code, message, pointer, span if isinstance(span, Span) else None, evidence, b.hint)
