"""The REFUTED-witness tool must confirm a true witness and report a false one.

`tests.prover.refuted_witnesses` answered issue 18's REFUTED-share question by running every
counterexample of the corpus; a tool that confirms everything would have answered it wrongly. These
tests run it on one real corpus case, then hand it the same case with a forged proof report (a
witness that finishes within its limit, a witness attributed to the wrong resource) and check that it
names each forged budget and exits 1.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.prover import ProofReport, Verdict
from dotboxd.validator.prover.report import BudgetVerdict, Witness

from . import refuted_witnesses

REFUSED = "parity-builtin-math-abs-refused-at-max-host-calls-0"  # maxHostCalls 0: every input is refused
ALLOWED = "parity-builtin-math-abs-is-a-host-call"  # maxHostCalls 1: one call fits


def _forge(edit: Callable[[BudgetVerdict], BudgetVerdict]) -> Callable[[ExecutionPlan], ProofReport]:
    """A ``prove_plan`` that proves for real, then rewrites every hostCalls budget with ``edit``."""
    real = refuted_witnesses.prove_plan

    def prove(plan: ExecutionPlan) -> ProofReport:
        report = real(plan)
        functions = tuple(
            dataclasses.replace(
                proof,
                budgets=tuple(
                    edit(budget) if budget.resource == "hostCalls" else budget for budget in proof.budgets
                ),
            )
            for proof in report.functions
        )
        return dataclasses.replace(report, functions=functions)

    return prove


def _main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str, edit: Any
) -> tuple[int, str]:
    if edit is not None:
        monkeypatch.setattr(refuted_witnesses, "prove_plan", _forge(edit))
    code = refuted_witnesses.main([case])
    return code, capsys.readouterr().out


def test_a_true_witness_is_confirmed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _main(monkeypatch, capsys, REFUSED, None)
    assert code == 0, out
    assert "1 REFUTED budgets run: 1 confirmed" in out


def test_a_witness_that_finishes_within_its_limit_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refute_with_a_fitting_input(budget: BudgetVerdict) -> BudgetVerdict:
        return dataclasses.replace(
            budget, verdict=Verdict.REFUTED, witness=Witness(args=(-5,), described=(("a", "-5"),)), reached=2
        )

    code, out = _main(monkeypatch, capsys, ALLOWED, refute_with_a_fitting_input)
    assert code == 1, out
    assert f"{ALLOWED} main hostCalls: witness a=-5 ends in success" in out
    assert "1 REFUTED budgets run: 0 confirmed" in out


def test_a_witness_credited_to_the_wrong_resource_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real witness is stopped by the host-call quota; claimed as a fuel witness, it still ends in a
    quota under the case's policy, so only the run with every other limit lifted can tell."""

    def credit_to_fuel(budget: BudgetVerdict) -> BudgetVerdict:
        assert budget.verdict is Verdict.REFUTED and budget.witness is not None
        return dataclasses.replace(budget, resource="fuel")

    code, out = _main(monkeypatch, capsys, REFUSED, credit_to_fuel)
    assert code == 1, out
    assert "ends in R-QUOTA-HOST-CALLS, and with the other limits lifted in success" in out
