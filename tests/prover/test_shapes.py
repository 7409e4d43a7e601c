"""The committed loop-shape set: broken promises fail always, the pass rate is a ratchet.

A shape that need not terminate must never be PROVED, and a REFUTED overflow must come with an
input that really faults on both backends; both forms of a kernel (text and wire) must get the
same report. Which shapes meet their expected verdict is recorded in
``conformance/prover-shapes/PASSING`` (and the README's table): the computed set must equal it, so
a regression fails and an improvement has to be recorded.
"""

from __future__ import annotations

import pytest

from .shapes import SHAPES, Outcome, evaluate, load_shapes


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return [evaluate(shape) for shape in load_shapes()]


def test_shape_set_covers_every_class_the_issue_names(outcomes: list[Outcome]) -> None:
    classes = {o.shape.klass for o in outcomes}
    assert {
        "lexicographic", "multiphase", "conjunctive", "disjunctive", "while-true", "multiplicative",
        "triangular", "overflow", "non-terminating", "collatz",
    } <= classes  # fmt: skip


def test_nonterminating_and_collatz_shapes_are_never_proved_to_terminate(outcomes: list[Outcome]) -> None:
    """Threat: a loop without a real ranking function is treated as bounded (T-PRV-05)."""
    never = [o for o in outcomes if o.shape.expect == "termination not PROVED"]
    assert len(never) >= 5
    for o in never:
        assert o.met, (o.shape.name, o.detail)


def test_shape_witnesses_fault_and_both_forms_agree(outcomes: list[Outcome]) -> None:
    """Threat: a false overflow counterexample, or a verdict that depends on the import form."""
    assert [(o.shape.name, v) for o in outcomes for v in o.violations] == []


def test_shapes_meeting_their_expected_verdict_are_the_recorded_ones(outcomes: list[Outcome]) -> None:
    recorded = set((SHAPES / "PASSING").read_text(encoding="utf-8").split())
    assert {o.shape.name for o in outcomes if o.met} == recorded
