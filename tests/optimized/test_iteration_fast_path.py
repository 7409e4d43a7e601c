"""``_s_liter``'s fast path charges an iteration exactly as ``Meter.loop_iteration`` does (issue 16).

The stub counts the iteration itself when nothing can fail and no deadline check falls on it, and
calls the meter's own method otherwise. These tests hold it to that method directly - on meters at
every edge (the loop budget, the fuel, both deadline cadences, cancellation, a spent wall-time
budget) the stub and ``Meter.loop_iteration`` on a twin meter must leave every counter the same,
read the clock as often and fail with the same code - and on a Collatz walk (a per-iteration loop
around a bulk ``while``: the stub once per number) at every fuel and loop budget around where the
run stops, against the reference interpreter.
"""

from __future__ import annotations

import dataclasses
import itertools
from types import SimpleNamespace
from typing import Any

import pytest

from dotboxd.core import costs
from dotboxd.host import SandboxHost
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import Meter, MeterLimits
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.stubs import STUBS, RunState, sync
from tests.benchmarks.workloads import COLLATZ

from .differential import differences, observe
from .kernels import policy

FUEL_CADENCE = costs.DEADLINE_EVERY_FUEL_CHARGES
LOOP_CADENCE = costs.DEADLINE_EVERY_LOOP_CHARGES
ITERATION_FUEL = costs.LOOP_ITERATION_FUEL


class _Clock:
    """A clock that counts its reads; ``late`` puts every read past the deadline."""

    def __init__(self, late: bool) -> None:
        self.reads = 0
        self.now = 1e9 if late else 0.0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


def _meter(
    max_loops: int, used_loops: int, loop_ticks: int, fuel_ticks: int, cancelled: bool, late: bool
) -> Any:
    clock = _Clock(late)
    cancel = SimpleNamespace(cancelled=False)
    meter = Meter(
        MeterLimits(max_fuel=100, max_loop_iterations=max_loops, max_wall_time_ms=1000), cancel, clock
    )  # type: ignore[arg-type]
    cancel.cancelled = cancelled  # after construction: the meter's own first checks are not the test
    meter.loop_iterations = used_loops
    meter._loop_ticks = loop_ticks
    meter._fuel_ticks = fuel_ticks
    meter.fuel_used = 37
    return meter, clock


def _state(meter: Meter, owned: bool) -> RunState:
    state = RunState(SimpleNamespace(meter=meter), (), (), (), ())  # type: ignore[arg-type]
    if owned:
        state.owned = [[1, 2], 0]  # an owned list with two adds to settle before the meter is read
    return state


def _by_meter(meter: Meter, fuel: int, owned: bool) -> tuple[str, int]:
    try:
        sync(_state(meter, owned), fuel, 0)
        meter.loop_iteration()
    except SandboxError as error:
        return ("error", error.code)
    return ("ok", meter.max_fuel - meter.fuel_used)


def _by_stub(meter: Meter, f: int, lref: int, owned: bool) -> tuple[str, int]:
    try:
        left = STUBS["_s_liter"](_state(meter, owned), f, lref)
    except SandboxError as error:
        return ("error", error.code)
    meter.fuel_used = meter.max_fuel - left  # what the next syncing stub (or the run's end) writes
    return ("ok", left)


EDGES = list(
    itertools.product(
        (4, 5, 9),  # loop budget: 4 (or 6) used, so the iteration is refused, fits exactly, or fits
        (LOOP_CADENCE - 2, LOOP_CADENCE - 1),  # the loop-charge cadence: the next one checks
        (0, FUEL_CADENCE - 2, FUEL_CADENCE - 1),  # the fuel-charge cadence: the next one reads the clock
        (ITERATION_FUEL - 1, ITERATION_FUEL, 63),  # fuel left
        (False, True),  # cancelled
        (False, True),  # wall-time budget spent
    )
)


@pytest.mark.parametrize("owned", [False, True])
@pytest.mark.parametrize(("max_loops", "loop_ticks", "fuel_ticks", "fuel", "cancelled", "late"), EDGES)
def test_the_stub_charges_an_iteration_as_the_meter_does(
    max_loops: int, loop_ticks: int, fuel_ticks: int, fuel: int, cancelled: bool, late: bool, owned: bool
) -> None:
    for lref in (0, 2):  # a per-iteration loop inside a bulk chunk's exact path owes it ``lref``
        expected_meter, expected_clock = _meter(max_loops, 4 + lref, loop_ticks, fuel_ticks, cancelled, late)
        expected = _by_meter(expected_meter, fuel, owned)
        if expected[0] == "error":  # a failing iteration gives those unstarted iterations back
            expected_meter.loop_iterations -= lref
        meter, clock = _meter(max_loops, 4 + lref, loop_ticks, fuel_ticks, cancelled, late)
        got = _by_stub(meter, fuel, lref, owned)
        assert got == expected, (lref, got, expected)
        assert clock.reads == expected_clock.reads
        assert meter.state() == expected_meter.state()


@pytest.mark.parametrize(("max_loops", "loop_ticks", "fuel_ticks", "fuel", "cancelled", "late"), EDGES)
def test_the_meter_is_asked_exactly_when_the_iteration_may_fail_or_check(
    max_loops: int, loop_ticks: int, fuel_ticks: int, fuel: int, cancelled: bool, late: bool
) -> None:
    """The fast path is really taken where nothing can happen (the comparison above then tests it)
    and left for the meter's method everywhere else."""
    meter, _ = _meter(max_loops, 4, loop_ticks, fuel_ticks, cancelled, late)
    asked: list[int] = []
    meter_method = Meter.loop_iteration

    def loop_iteration(self: Meter) -> None:
        asked.append(1)
        meter_method(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Meter, "loop_iteration", loop_iteration)
        _by_stub(meter, fuel, 0, False)
    quiet = (
        max_loops >= 5
        and loop_ticks < LOOP_CADENCE - 1
        and fuel_ticks < FUEL_CADENCE - 1
        and fuel >= ITERATION_FUEL
        and not cancelled
    )
    assert asked == ([] if quiet else [1])


def _agree(plan: Any, artifact: Any, n: int) -> None:
    class Pinned:
        name = "optimized"

        def run(self, run: Any, function_id: str, args: Any) -> Any:
            return artifact.run(run, function_id, args)

    host = SandboxHost(backends={"optimized": Pinned()})
    reference = observe(host.execute(plan, "main", [n]))
    optimized = observe(host.execute(plan, "main", [n], backend="optimized"))
    diff = differences(reference, optimized)
    assert not diff, f"{plan.policy}:\n  " + "\n  ".join(diff)


def _collatz(**limits: int) -> Any:
    return SandboxHost().prepare(COLLATZ, policy(**limits))


@pytest.mark.parametrize(
    ("limit", "usage", "n", "stride", "near"),
    [("max_fuel", "fuel_used", 40, 97, 60), ("max_loop_iterations", "loop_iterations", 30, 23, 40)],
)
def test_collatz_at_every_budget_around_its_end(
    limit: str, usage: str, n: int, stride: int, near: int
) -> None:
    """Budgets spread over the run, then every one around its end: the outer loop's iteration charge,
    the inner chunk's reservation or its exact path, whichever the reference stops at."""
    base = _collatz()
    needed = getattr(SandboxHost().execute(base, "main", [n]).usage, usage)
    artifact = compile_plan(base)
    for budget in [*range(0, needed, stride), *range(needed - near, needed + 2)]:
        _agree(dataclasses.replace(base, policy=policy(**{limit: budget})), artifact, n)


def test_collatz_crosses_both_deadline_cadences_on_the_fast_path() -> None:
    """More numbers than the fuel-charge cadence and enough walks for thousands of loop charges: the
    meter's tick counters, which the fast path advances, end where the reference's charges put them."""
    n = 3 * FUEL_CADENCE + 5
    base = _collatz(max_loop_iterations=10**6, max_fuel=10**8)
    _agree(base, compile_plan(base), n)
