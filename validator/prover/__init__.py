"""The Z3 prover: static cost bounds, termination and arithmetic safety for validated plans.

    from dotboxd.validator.prover import prove_plan, require_static_bound
    report = prove_plan(plan)          # ProofReport: verdicts per function and per limit
    report.all_proved()                # every budget of every entrypoint PROVED
    require_static_bound(plan)         # strict mode: DotBoxDError unless all_proved()

``spec/proofs.md`` describes the semantics, the obligations and why each verdict is sound.
"""

from .hook import require_static_bound
from .obligations import Obligation
from .prover import call_depths, prove_plan
from .report import BudgetVerdict, FunctionProof, LoopFact, ProofReport, SafetyFact, Verdict, Witness

__all__ = [
    "BudgetVerdict",
    "FunctionProof",
    "LoopFact",
    "Obligation",
    "ProofReport",
    "SafetyFact",
    "Verdict",
    "Witness",
    "call_depths",
    "prove_plan",
    "require_static_bound",
]
