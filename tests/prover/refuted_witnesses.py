"""Check every REFUTED budget of the conformance corpus by running its counterexample, twice.

    .venv/bin/python -m tests.prover.refuted_witnesses [CASE ...]

A REFUTED budget claims that its witness input needs more of one resource than the limit allows
(spec/proofs.md section 3: "the run is stopped by a quota, the first limit it exhausts; R's demand
alone is >= reached"). ``harness.check_program`` checks the first half: the witness run ends in
some quota. This tool also checks the second half, which the harness cannot see when another limit
stops the run first: the case is validated again with every other resource limit lifted (fuel, loop
iterations, host calls, allocated bytes, collection elements, list length, string bytes: 10^13) and
the witness must then be stopped by the refuted resource's own quota. Why a tool and not a test: it
proves and runs the whole corpus (minutes on a loaded machine); issue 18's REFUTED-share question
was answered with it. Prints one line per REFUTED budget that fails either check and a summary;
exits 1 if any failed.
"""

from __future__ import annotations

import sys
from typing import Any

from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.host import SandboxHost
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.prover import Verdict, prove_plan

from .corpus import QUOTA_CODES, run_cases, validated_case

LIFTED = 10**13
LIMIT_KEYS = {
    "fuel": "maxFuel",
    "loopIterations": "maxLoopIterations",
    "hostCalls": "maxHostCalls",
    "allocatedBytes": "maxAllocatedBytes",
}
ALSO_LIFTED = ("maxTotalCollectionElements", "maxListLength", "maxTotalStringBytes")


def _raw(case: Case, lift_except: str | None) -> dict[str, Any]:
    raw: dict[str, Any] = dict(case.raw)
    policy = dict(raw["policy"]) if isinstance(raw.get("policy"), dict) else {}
    policy["requireStaticBound"] = False
    if lift_except is not None:
        limits = dict(policy.get("limits") or {})
        for resource, key in LIMIT_KEYS.items():
            if resource != lift_except:
                limits[key] = LIFTED
        for key in ALSO_LIFTED:
            limits[key] = LIFTED
        limits["maxWallTimeMs"] = 120_000
        policy["limits"] = limits
    raw["policy"] = policy
    return raw


def _run(case: Case, lift_except: str | None, function: str, args: list[Any]) -> str:
    """The error code (or "success") of ``function(args)`` under the case's (lifted) policy."""
    raw = _raw(case, lift_except)
    with case_root(raw) as root:
        validated = validate_case(import_stage(raw, case.origin), raw, root)
        result = SandboxHost(bindings=validated.catalog).execute(
            validated.plan, function, args, encoding="json"
        )
    return result.error.code if result.error is not None else "success"


def _plan(case: Case) -> ExecutionPlan | None:
    with validated_case(_raw(case, None), case.origin) as validated:
        return None if validated is None else validated.plan


def main(argv: list[str] | None = None) -> int:
    only = set(sys.argv[1:] if argv is None else argv)
    checked = failed = not_runnable = 0
    for case in run_cases():
        if only and case.name not in only:
            continue
        plan = _plan(case)
        if plan is None:
            continue
        for proof in prove_plan(plan).functions:
            for budget in proof.budgets:
                if budget.verdict is not Verdict.REFUTED:
                    continue
                if proof.function not in plan.entrypoints or budget.witness is None:
                    not_runnable += 1
                    continue
                if budget.resource not in LIMIT_KEYS:
                    not_runnable += 1  # a binding's own call budget: no single limit to lift around it
                    continue
                checked += 1
                args = list(budget.witness.args)
                first = _run(case, None, proof.function, args)
                alone = _run(case, budget.resource, proof.function, args)
                if not first.startswith("R-QUOTA-") or alone != QUOTA_CODES[budget.resource]:
                    failed += 1
                    print(
                        f"{case.name} {proof.function} {budget.resource}: witness "
                        f"{budget.witness.text()} ends in {first}, and with the other limits "
                        f"lifted in {alone}",
                        flush=True,
                    )
    print(
        f"{checked} REFUTED budgets run: {checked - failed} confirmed (stopped by a quota, and by "
        f"their own quota once the other limits are lifted), {failed} not; {not_runnable} not "
        f"runnable here (a private function's, or a binding budget)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
