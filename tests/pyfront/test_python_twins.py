"""Python twins of the conformance corpus: every text-form case that reaches validation has a
Python kernel generated from it (``emit_python``), which lowers to the identical tree and then
meets the case's expectations on both backends, exactly like the text it came from.

A case has no twin only when Python cannot spell its module (a dotted function id, a keyword as a
call name, ``-(5)`` that Python folds into ``-5``); ``Inexpressible`` names the reason and the test
keeps that set small and explained.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dotboxd.conformance.compare import compare
from dotboxd.conformance.loader import load_cases
from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import evaluate
from dotboxd.grammar.pyfront import lower_python
from dotboxd.grammar.pyfront.emit import Inexpressible, emit_python
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import to_wire

TEXT_CASES = [
    c for c in load_cases() if c.source_key == "kernelText" and c.expect.stage in ("run", "validate")
]
KNOWN_GAPS = ("is not a plain Python identifier", "negation of a number literal")


def _twin(case: Case) -> str | None:
    try:
        return emit_python(parse_text(case.raw["kernelText"]))
    except Inexpressible as gap:
        assert any(reason in str(gap) for reason in KNOWN_GAPS), gap
        return None


TWINS = [(case, source) for case in TEXT_CASES if (source := _twin(case)) is not None]


def test_almost_every_text_case_has_a_python_twin() -> None:
    assert len(TEXT_CASES) >= 900
    assert len(TWINS) >= 0.97 * len(TEXT_CASES), len(TEXT_CASES) - len(TWINS)


@pytest.mark.parametrize(("case", "source"), TWINS, ids=[c.name for c, _ in TWINS])
def test_python_twin_lowers_to_the_text_case_tree(case: Case, source: str) -> None:
    assert lower_python(source, f"{case.name}.py") == parse_text(case.raw["kernelText"])


RUN_TWINS = [(c, s) for c, s in TWINS if c.expect.stage == "run"]


@pytest.mark.parametrize(("case", "source"), RUN_TWINS, ids=[c.name for c, _ in RUN_TWINS])
def test_python_twin_meets_the_run_case_on_both_backends(case: Case, source: str) -> None:
    raw: dict[str, Any] = {k: v for k, v in case.raw.items() if k != "kernelText"}
    raw["module"] = to_wire(lower_python(source, f"{case.name}.py"))
    expect = dataclasses.replace(case.expect, line=None, column=None)  # positions are the text's
    for backend in case.backends or ("reference", "optimized"):
        actual = evaluate(raw, backend, where=case.origin)
        assert compare(expect, actual) == [], (backend, actual)
