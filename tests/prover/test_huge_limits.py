"""Huge policy limits must not make the prover's own memory follow them.

A policy may set ``maxMapEntries`` (and the other size limits) near 2^62. The smallest input that
exhausts a budget can then be a map of 10^6 or 10^17 entries; the prover used to build that input
as a concrete counterexample (24 GB for one run, killed by the OOM killer). Counterexamples are now
shrunk to the size the solver's model needs and never built past the prover's own caps: beyond
them the verdict stays UNKNOWN and says which input it would have needed.
"""

from __future__ import annotations

import tracemalloc

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan, smt
from dotboxd.validator.prover.inputs import MAX_WITNESS_ELEMENTS

HUGE = 2**62

COUNT_LOOP = """module "m" version "1.0.0";
entrypoint fn main(m Map<I32, I32>) -> I32 {
  c = 0;
  for i in 0 .. map.count(m) { c = c + 1; }
  return c;
}
"""


def _policy(loop_iterations: int) -> Policy:
    return (
        Policy.builder()
        .with_limits(
            max_wall_time_ms=60_000,
            max_map_entries=HUGE,
            max_list_length=HUGE,
            max_string_length=HUGE,
            max_total_collection_elements=HUGE,
            max_total_string_bytes=HUGE,
            max_allocated_bytes=HUGE,
            max_fuel=HUGE,
            max_loop_iterations=loop_iterations,
        )
        .build()
    )


def test_huge_size_limits_keep_the_provers_memory_bounded_and_say_why_unknown() -> None:
    """Threat: prover denial of service by memory, a counterexample as large as the policy allows
    (T-PRV-07)."""
    plan = SandboxHost().prepare(COUNT_LOOP, _policy(10**9))
    tracemalloc.start()
    try:
        report = prove_plan(plan)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"the prover used {peak:,} bytes"
    loops = report.function("main").budget("loopIterations")
    assert loops is not None and loops.verdict is Verdict.UNKNOWN
    # the input it needs is the smallest the model allows, and it is named, not built
    assert "a map of 1,000,000,001 entries" in loops.reason
    assert "larger than the prover builds" in loops.reason


def test_a_counterexample_within_the_caps_is_shrunk_to_the_size_it_needs() -> None:
    """With the same huge size limits but a small loop quota, the counterexample is the map one
    entry past the quota (not the model's arbitrary size), and it really exhausts the quota."""
    limit = 1_000
    assert limit < MAX_WITNESS_ELEMENTS
    host = SandboxHost()
    plan = host.prepare(COUNT_LOOP, _policy(limit))
    budget = prove_plan(plan).function("main").budget("loopIterations")
    assert budget is not None and budget.verdict is Verdict.REFUTED
    assert budget.witness is not None
    (entries,) = budget.witness.args
    assert len(entries) == limit + 1
    result = host.execute(plan, "main", list(budget.witness.args), encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-LOOP"


def test_the_solvers_memory_is_capped_and_reported() -> None:
    """The report says how much memory Z3 held (``resources_json``, the ``solver`` object of
    ``dotboxd prove --format json``) and under which cap; the cap is set on every query."""
    report = prove_plan(SandboxHost().prepare(COUNT_LOOP, _policy(10**9)))
    solver = report.resources_json()
    assert solver["memoryCapMiB"] == smt.SOLVER_MEMORY_MB
    assert 0 < solver["peakMemoryMiB"] < smt.SOLVER_MEMORY_MB
    assert solver["workUnits"] == report.solver_work > 0
    # the report proper stays the same in every process: the process-wide memory is not in it
    assert report.to_json()["solver"] == {
        "workUnits": report.solver_work,
        "memoryCapMiB": smt.SOLVER_MEMORY_MB,
    }


HARD_QUERY = """(declare-const x Int)
(declare-const y Int)
(assert (= (+ (* x x x) (* y y y)) (+ (* 7 x y) 12345)))
(assert (> x 1000))
(check-sat)
"""


def test_a_query_past_the_memory_cap_is_unknown_never_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the cap below what Z3 already holds, a query that has to search stops with "max. memory
    exceeded": the answer is ``unknown`` (which every prover verdict reads as UNKNOWN), never a
    guess; the same query under the real cap gets an answer or runs out of work units instead."""
    monkeypatch.setattr(smt, "SOLVER_MEMORY_MB", 1)
    capped = smt.solve(HARD_QUERY, smt.DEFAULT_RLIMIT)
    assert capped.status == "unknown"
    assert "memory" in capped.reason
    monkeypatch.undo()
    uncapped = smt.solve(HARD_QUERY, smt.DEFAULT_RLIMIT)
    assert "memory" not in uncapped.reason
    assert 0 < uncapped.memory_mb < smt.SOLVER_MEMORY_MB
