"""Every conformance case that reaches the run stage, on both backends, compared field by field.

The conformance runner already checks each backend against the case's *pinned* expectations; this
test checks more: that the optimized backend agrees with the reference on everything observable,
including what a case does not pin (every usage counter, the safe message, the audit events).
"""

from __future__ import annotations

import pytest

from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.compare import compare
from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.core.ast import Module
from tests.corpus_cases import corpus_cases

from .differential import differences, run_case_both

CASES = list(corpus_cases())
RUN_CASES = [c for c in CASES if c.expect.stage == "run"]


def test_the_corpus_has_run_cases() -> None:
    assert len(RUN_CASES) >= 300


@pytest.mark.parametrize("case", RUN_CASES, ids=[c.name for c in RUN_CASES])
def test_run_case_agrees_on_both_backends(case: Case) -> None:
    module = import_stage(case.raw, case.origin)
    assert isinstance(module, Module)
    reference, optimized = run_case_both(module, case.raw, case.entrypoint, case.raw.get("args", []))
    diff = differences(reference, optimized)
    assert not diff, "\n".join(diff)


@pytest.mark.parametrize("case", RUN_CASES, ids=[c.name for c in RUN_CASES])
def test_run_case_meets_its_expectations_on_the_optimized_backend(case: Case) -> None:
    actual = InProcessBackend("optimized").evaluate(case)
    assert compare(case.expect, actual) == [], actual
