"""The conformance corpus as prover input: every run-stage case, proved and run once.

Used by ``test_corpus.py`` (the soundness checks over the whole corpus) and ``measure.py`` (the
tightness, verdict shares and timing the issue asks to report). Each case is imported, validated
with its own policy (``requireStaticBound`` switched off, so that the evidence is gathered whatever
the verdict), proved, and run with its own arguments on the reference interpreter.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from dotboxd.conformance.loader import load_cases
from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import Validated, validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import SandboxHost
from dotboxd.validator.prover import ProofReport, prove_plan

from .harness import FAULT_CODES, QUOTA_CODES, RESOURCES, Prepared, check_program, decode_args


@dataclass
class CaseResult:
    name: str
    report: ProofReport
    seconds: float
    functions: int
    violations: list[str] = field(default_factory=list)
    ratio: float | None = None  # fuel bound / actual fuel on the case's own input (successful runs)


def run_cases() -> list[Case]:
    return [c for c in load_cases() if c.expect.stage == "run"]


@contextmanager
def validated_case(raw: dict[str, Any], origin: Any) -> Iterator[Validated | None]:
    """The case imported and validated inside its workspace (kept open while the caller proves
    and runs it); None when it does not get to a plan (it is not a prover input)."""
    try:
        module = import_stage(raw, origin)
    except DotBoxDError:
        yield None
        return
    if not isinstance(module, Module):  # a refusal (``Actual``), not a module
        yield None
        return
    with case_root(raw) as root:
        try:
            validated = validate_case(module, raw, root)
        except DotBoxDError:
            validated = None
        yield validated


def evaluate(case: Case) -> CaseResult | None:
    """Prove and run one case; None when it does not get to a plan (it is not a prover input)."""
    raw: dict[str, Any] = dict(case.raw)
    if isinstance(raw.get("policy"), dict):
        raw["policy"] = {**raw["policy"], "requireStaticBound": False}
    with validated_case(raw, case.origin) as validated:
        if validated is None:
            return None
        plan = validated.plan
        start = time.perf_counter()
        report = prove_plan(plan)
        seconds = time.perf_counter() - start
        host = SandboxHost(bindings=validated.catalog)
        entry = case.entrypoint
        prepared = Prepared(plan, host, entry, report)
        args = list(raw.get("args", []))
        out = CaseResult(case.name, report, seconds, len(report.functions))
        if entry not in plan.entrypoints:
            return out
        findings = check_program(prepared, [args])
        out.violations = findings.violations
        values = decode_args(plan, entry, args)
        if findings.runs and values is not None:
            observed = findings.runs[0]
            if observed.ok and observed.bound is not None and observed.fuel > 0:
                out.ratio = observed.bound / observed.fuel
        return out


def corpus() -> Iterator[CaseResult]:
    for case in run_cases():
        result = evaluate(case)
        if result is not None:
            yield result


__all__ = [
    "FAULT_CODES",
    "QUOTA_CODES",
    "RESOURCES",
    "CaseResult",
    "corpus",
    "evaluate",
    "replace",
    "run_cases",
    "validated_case",
]
