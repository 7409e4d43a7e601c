"""Bulk-chunk reservations read the clock once per ``CHUNK_WORK`` units of work, not once per entry.

A loop entered again and again for a few iterations each time (the inner ``while`` of a Collatz walk)
used to read the clock at every reservation; the reservation now adds its chunk to the run's work
counter (``stubs.reserve``) and reads the clock only when no room is left, so the deadline is still
checked at least once per ``CHUNK_WORK`` units of work done - and a run past its deadline still stops.
"""

from __future__ import annotations

from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.execution import execute_plan
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from tests.benchmarks.workloads import COLLATZ, collatz_py


def _plan(wall_ms: int) -> object:
    policy = Policy.builder().with_fuel(10**9).with_max_loop_iterations(10**8).with_max_wall_time_ms(wall_ms)
    return SandboxHost().prepare(COLLATZ, policy.build())


def test_a_reentered_loop_reads_the_clock_per_chunk_of_work_not_per_entry() -> None:
    reads = [0]

    def clock() -> float:
        reads[0] += 1
        return 0.0

    backend = OptimizedBackend(cache=ArtifactCache())
    outcome = execute_plan(_plan(60_000), "main", [3000], backend, clock=clock)  # type: ignore[arg-type]
    assert outcome.ok and outcome.value == collatz_py(3000)
    entries = 2999  # the inner while loop is entered once per outer iteration: one reservation each
    assert 2 <= reads[0] < entries // 10


def test_a_reentered_loop_still_stops_at_its_deadline() -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 0.001  # one millisecond per read: the deadline falls after about 20 reads
        return now[0]

    backend = OptimizedBackend(cache=ArtifactCache())
    outcome = execute_plan(_plan(20), "main", [20_000], backend, clock=clock)  # type: ignore[arg-type]
    assert outcome.error is not None and outcome.error.code == "R-TIMEOUT"
    assert outcome.usage.loop_iterations < collatz_py(20_000)
