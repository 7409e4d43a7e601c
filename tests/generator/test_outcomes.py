"""Generated programs are useful on the reference backend: most run to a value within the default
limits, and the failures spread over several error categories (never an internal fault)."""

from __future__ import annotations

from collections import Counter

from dotboxd.conformance.generator import build_program, run_reference
from dotboxd.conformance.generator.cases import program_source

RUNS = 80


def test_outcomes_are_mostly_ok_and_varied() -> None:
    categories: Counter[str] = Counter()
    for draw in range(RUNS):
        outcome = run_reference(build_program(program_source(99, draw)))
        assert outcome.stage == "run", outcome.expect
        categories[str(outcome.expect.get("error", "ok"))] += 1
    assert categories["ok"] >= 0.4 * RUNS, dict(categories)
    assert len(categories) >= 4, dict(categories)
    assert not {"HostFailure", "Timeout", "Cancelled"} & set(categories), dict(categories)
