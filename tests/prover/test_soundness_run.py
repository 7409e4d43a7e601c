"""The CI profile of the bounded soundness run (``tests.prover.soundness_run``): a few programs
of each generator, proved, run and checked. ``make prover-soundness`` is the long profile."""

from __future__ import annotations

from .soundness_run import Tally, run_generated, run_loops


def test_small_soundness_profile_finds_no_violation() -> None:
    """Threat: an unsound bound or a false counterexample (T-PRV-01, T-PRV-04)."""
    tally = Tally()
    run_generated(6, "ci", tally)
    run_loops(6, tally)
    assert tally.programs >= 10
    assert tally.runs > 0
    assert tally.violations == []
