"""Every run case of the conformance corpus: the prover's claims hold on the case's own input.

For each case that reaches a plan: the bound of every budget is at least what the reference
interpreter used, no PROVED budget is exhausted, no operation proved safe fails, and every REFUTED
counterexample (budget or operation) really fails when run. The corpus pins ``fuelUsed`` for most
cases, so this is also the check that the static cost semantics and the meter agree.
"""

from __future__ import annotations

import pytest

from .corpus import corpus

pytestmark = pytest.mark.slow  # the prover and both runs over the whole corpus: minutes on a loaded machine


def test_the_prover_is_sound_on_the_whole_corpus() -> None:
    results = list(corpus())
    assert len(results) >= 100  # the corpus really was there
    problems = [f"{r.name}: {v}" for r in results for v in r.violations]
    assert problems == []
    # the bound is exact on most straight-line cases: at least a third of the runs hit it exactly
    ratios = [r.ratio for r in results if r.ratio is not None]
    assert ratios and sum(1 for x in ratios if x == 1.0) * 3 >= len(ratios)
