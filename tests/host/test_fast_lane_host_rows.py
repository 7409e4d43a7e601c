"""Fast-lane rows that are read by the host's own code: the wall budget counts the time they take.

A row (the ``args`` of one run) that is not an exact list or tuple is read through its own
``__len__`` and ``__getitem__`` (``execution._inputs_tuple``): host code, which may take any time.
The ordinary path starts a run's clock before it reads the inputs and checks the deadline once they
are read, so a row whose reading outlasts ``maxWallTimeMs`` is Timeout before the first statement.
The fast lane started the clock of a run without charged inputs only *after* reading its row (right
for a list or tuple of scalars, read in constant time), so such a run succeeded on the lane -
through ``execute`` and ``execute_many`` alike - where the reference and the ordinary path timed out.
Each lane path (``run``, ``many`` and ``one``) is held to the reference here, and a lane that was
really taken is counted (not vacuous).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from dotboxd.host import ExecutionResult, Policy, SandboxHost

from .test_fast_lane import _compile, _hosts, _spy

PAIR = 'module "p" version "1.0.0";\nentrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }\n'
ONE = 'module "o" version "1.0.0";\nentrypoint fn check(hp I32) -> I32 { return hp * 2 + 1; }\n'
WALL_MS = 50
"""The wall budget of the timed plans: ample for a run of these predicates, even on a loaded machine."""
SLOW = 0.06
"""Seconds a slow row takes per item read: past the whole budget at its first item."""


class _SlowRow(Sequence[Any]):
    """A host sequence whose items take ``delay`` seconds each to read (a lazily loaded record)."""

    def __init__(self, items: list[Any], delay: float) -> None:
        self.items = items
        self.delay = delay

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        time.sleep(self.delay)
        return self.items[index]


def _outcome(result: ExecutionResult) -> tuple[Any, ...]:
    error = result.error
    return (result.ok, result.value, error and error.code, result.usage, result.executed_by)


def _laned_plan(source: str, policy: Policy, args: list[Any]) -> tuple[SandboxHost, Any, Any]:
    """A host with lanes, the plan compiled and its lane bound (spied on), and the ordinary host."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(source, policy)
    laned.execute(plan, "check", args, backend="optimized")  # the dispatch record
    _compile(laned, plan)
    laned.execute(plan, "check", args, backend="optimized")  # binds the lane
    return laned, plan, ordinary


@pytest.mark.parametrize(("source", "args"), [(PAIR, [3, 12]), (ONE, [4])], ids=["two-ints", "one-int"])
def test_a_row_read_past_the_deadline_times_out_on_the_lane_as_on_the_reference(
    source: str, args: list[Any]
) -> None:
    laned, plan, ordinary = _laned_plan(source, Policy.builder().with_max_wall_time_ms(WALL_MS).build(), args)
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    slow = _SlowRow(args, SLOW)
    reference = laned.execute(plan, "check", slow, backend="reference")
    assert reference.error is not None and reference.error.code == "R-TIMEOUT"
    lane = laned.execute(plan, "check", slow, backend="optimized")
    other = ordinary.execute(plan, "check", slow, backend="optimized")
    assert spy.taken == 1
    assert _outcome(lane) == _outcome(other)
    assert (lane.ok, lane.error and lane.error.code, lane.usage) == (False, "R-TIMEOUT", reference.usage)
    assert laned.execute(plan, "check", args, backend="optimized").ok  # the lane goes on as before
    assert spy.taken == 2


def test_a_row_read_past_the_deadline_times_out_in_execute_many() -> None:
    """The lane's row loop (``many``): the slow row alone times out, the rows around it run."""
    laned, plan, _ = _laned_plan(PAIR, Policy.builder().with_max_wall_time_ms(WALL_MS).build(), [3, 12])
    rows: list[Any] = [[3, 12], _SlowRow([3, 12], SLOW), (5, 10), _SlowRow([0, 12], 0.0)]
    for backend in ("reference", "optimized"):
        batch = laned.execute_many(plan, "check", rows, backend=backend)
        codes = [r.error and r.error.code for r in batch]
        assert codes == [None, "R-TIMEOUT", None, None], backend
        assert batch.values() == [True, None, True, False]
        assert batch[1].usage.fuel_used == 0


def test_a_row_read_past_the_deadline_times_out_on_an_entry_with_bounds() -> None:
    """The lane's general row (``one``: an entry with input bounds): the bounds are checked before
    the deadline, as on the ordinary path."""
    policy = Policy.builder().with_max_wall_time_ms(WALL_MS).with_input_bounds("check", hp=(0, 100)).build()
    laned, plan, ordinary = _laned_plan(ONE, policy, [4])
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    for items, code in (([4], "R-TIMEOUT"), ([400], "R-INPUT-BOUND")):
        slow = _SlowRow(items, SLOW)
        reference = laned.execute(plan, "check", slow, backend="reference")
        lane = laned.execute(plan, "check", slow, backend="optimized")
        assert _outcome(lane) == _outcome(ordinary.execute(plan, "check", slow, backend="optimized"))
        assert (lane.error and lane.error.code, lane.usage) == (code, reference.usage)
        assert reference.error is not None and reference.error.code == code
    assert spy.taken == 2


def test_a_host_row_read_in_time_runs_on_the_lane_as_before() -> None:
    """Within the budget a host sequence is an ordinary row: the same answer and usage as a list."""
    laned, plan, _ = _laned_plan(PAIR, Policy.builder().with_max_wall_time_ms(60_000).build(), [3, 12])
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    for items in ([3, 12], [-1, 12], [3, "x"]):
        lane = laned.execute(plan, "check", _SlowRow(items, 0.0), backend="optimized")
        reference = laned.execute(plan, "check", items, backend="reference")
        assert (lane.ok, lane.value, lane.usage) == (reference.ok, reference.value, reference.usage)
        assert (lane.error and lane.error.code) == (reference.error and reference.error.code)
    assert spy.taken == 3
