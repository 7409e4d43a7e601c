"""The fast lane's row body (``event_lane.run_row``): an event entry with other parameters besides.

Such an entry (``check(ev Map<String, I32>, lim I32)``, the event first or last, or among several
scalars) takes its row once, tests its other inputs as their readers would, reads its event with the
one-pass reader and keeps its charges per key set; any row those tests do not take goes to the lane's
general body, whose ``read_inputs`` refuses in parameter order. Each row below - hostile events,
hostile other inputs, rows of the wrong length or class - is run on the lane and on the host without
lanes at every limit the event's charges meet (fuel around each charge included), and compared
whole (value, error, usage, audit, JSON) with the ordinary path, and with the reference
interpreter; then mixed on threads, against a moving clock, and checked for what the state pools
hold afterwards.
"""

from __future__ import annotations

import inspect
import random
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.execution import EntryCall
from dotboxd.runtime.optimized import fastlane

from .test_fast_lane import _compile, _hosts, _same, _spy
from .test_fast_lane_charged import EVENTS as CHARGED_EVENTS
from .test_fast_lane_charged import LIMITS, _Clock, _reference_agrees
from .test_fast_lane_charged import MANY as CHARGED_MANY

FIRST = (
    'module "f" version "1.0.0";\nentrypoint fn check(ev Map<String, I32>, lim I32) -> Bool '
    '{ return map.get(ev, "hp") > lim && map.get(ev, "level") >= 10; }\n'
)
LAST = (
    'module "l" version "1.0.0";\nentrypoint fn check(lim I32, ev Map<String, I32>) -> Bool '
    '{ return map.get(ev, "hp") > lim && map.get(ev, "level") >= 10; }\n'
)
MIDDLE = (
    'module "m" version "1.0.0";\nentrypoint fn check(on Bool, ev Map<String, I64>, big I64, w F64) '
    '-> I64 { if (on) { return big + map.get(ev, "hp"); } return big; }\n'
)
MANY = CHARGED_MANY.replace(
    "check(ev Map<String, I32>) -> I32 {\n    t = 0;",
    "check(k I32, ev Map<String, I32>) -> I32 {\n    t = k;",
)
"""The charged lane's 70 map reads (past a deadline check at the 64th fuel charge) with an ``I32``
before the event."""
assert MANY != CHARGED_MANY


class _Dict(dict):  # type: ignore[type-arg]
    pass


class _Int(int):
    pass


class _Row(list):  # type: ignore[type-arg]
    """A list subclass: the host's own code reads it (``host_row``)."""


EVENTS: list[Any] = [*CHARGED_EVENTS, [("hp", 1)]]
"""The charged-lane events (kept key sets, refused values, non-ASCII keys, dict and str
subclasses, a key set in another order, one past 64 nodes) and one that is not a map at all."""
LIMITS_OF_ROW: list[Any] = [0, 5, -(2**31), 2**31 - 1, 2**31, True, 1.0, _Int(2), "3", None]
"""The other input: in range at both ends, out of range, a bool, a float, an int subclass, a
text, nothing - all but the first four refused (the refusal named by the general body)."""


def _rows(event_first: bool) -> list[Any]:
    rows: list[Any] = []
    for i, event in enumerate(EVENTS):
        lim = LIMITS_OF_ROW[i % len(LIMITS_OF_ROW)]
        rows.append([event, 0] if event_first else [0, event])
        rows.append((event, lim) if event_first else (lim, event))
    for lim in LIMITS_OF_ROW:
        rows.append([{"hp": 3, "level": 12}, lim] if event_first else [lim, {"hp": 3, "level": 12}])
    both_bad = [{"hp": "x"}, "y"]  # the first refused input is named: the event first, then last
    rows += [both_bad if event_first else both_bad[::-1], [], [{"hp": 1}], [{"hp": 1}, 0, 0]]
    rows.append(_Row([{"hp": 3, "level": 12}, 0] if event_first else [0, {"hp": 3, "level": 12}]))
    return rows


def _bound(
    source: str, limits: dict[str, int], first_row: list[Any]
) -> tuple[SandboxHost, SandboxHost, Any, Any]:
    laned, ordinary = _hosts(None)
    room = {"max_wall_time_ms": 60_000}
    plan = laned.prepare(source, Policy.builder().with_limits(**{**room, **limits}).build())
    laned.execute(plan, "check", first_row, backend="optimized")  # the dispatch record
    _compile(laned, plan)  # that run compiles only if its input was not refused
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    return laned, ordinary, plan, spy


@pytest.mark.parametrize("event_first", [True, False], ids=["event first", "event last"])
@pytest.mark.parametrize("limits", LIMITS, ids=[f"{k}={v}" for d in LIMITS for k, v in d.items()])
def test_event_rows_at_each_limit_answer_as_the_ordinary_path_and_the_reference(
    limits: dict[str, int], event_first: bool
) -> None:
    source, row = (FIRST, [{"hp": 1}, 0]) if event_first else (LAST, [0, {"hp": 1}])
    laned, ordinary, plan, spy = _bound(source, limits, row)
    rows = _rows(event_first)
    for args in rows:
        lane = laned.execute(plan, "check", args, backend="optimized")
        _same(lane, ordinary.execute(plan, "check", args, backend="optimized"))
        _reference_agrees(laned, plan, "check", list(args), lane)
    assert spy.taken == len(rows)
    assert spy.lane.run.__name__ == "run_row"  # not vacuous: the row body ran them


def test_the_row_body_runs_the_rows_it_takes_and_hands_on_the_rest() -> None:
    """Not vacuous: a row whose other input passes its test and whose event the reader takes (with
    its charges kept) never reaches the general body; every other row does - and both answer as
    the ordinary path."""
    laned, ordinary, plan, spy = _bound(FIRST, {}, [{"hp": 1}, 0])
    laned.execute(plan, "check", [{"hp": 1}, 0], backend="optimized")  # binds ``run_row``
    run = spy.lane.run
    assert run.__name__ == "run_row"
    cell = run.__closure__[run.__code__.co_freevars.index("general_run")]
    general_run = cell.cell_contents
    handed: list[Any] = []

    def counted(state: Any, args: Any, *rest: Any) -> Any:
        handed.append(args)
        return general_run(state, args, *rest)

    cell.cell_contents = counted
    taken: list[Any] = [[{"hp": 3, "level": 12}, 0], ({"level": 9, "hp": 1}, -4), [{}, 2**31 - 1]]
    left: list[Any] = [
        [{"hp": "x"}, 0],
        [{"hp": 3}, "x"],
        [{"hp": 3}, True],
        [{"h\u00e9": 1}, 0],
        [_Dict({"hp": 3}), 0],
        [{"hp": 3}],
        _Row([{"hp": 3}, 0]),
    ]
    try:
        for args in [*taken, *left]:
            lane = laned.execute(plan, "check", args, backend="optimized")
            _same(lane, ordinary.execute(plan, "check", args, backend="optimized"))
    finally:
        cell.cell_contents = general_run
    assert handed == left


def test_an_entry_among_other_scalars_answers_as_the_ordinary_path() -> None:
    """The event between a ``Bool``, an ``I64`` and an ``F64``: each tested as its reader tests it."""
    laned, ordinary, plan, spy = _bound(MIDDLE, {}, [True, {"hp": 1}, 2, 0.5])
    rows: list[Any] = [
        [True, {"hp": 4}, 2**40, 0.5],
        (False, {"hp": 4}, -(2**63), -1.5),
        [True, {"hp": 4}, 2**63, 0.5],  # out of range
        [1, {"hp": 4}, 2, 0.5],  # an int is not a Bool
        [True, {"hp": 4}, 2, 1],  # an int is not an F64 here either: the general reader decides
        [True, {"hp": 4}, 2, float("nan")],
        [True, {"hp": 4}, 2, float("inf")],
        [True, {"level": 4}, 2, 0.0],  # a missing key
        [True, {"hp": "x"}, 2, 0.0],
        [True, {"hp": 1}, True, 0.0],
    ]
    for args in rows:
        lane = laned.execute(plan, "check", args, backend="optimized")
        _same(lane, ordinary.execute(plan, "check", args, backend="optimized"))
        _reference_agrees(laned, plan, "check", list(args), lane)
    assert spy.taken == len(rows)
    assert spy.lane.run.__name__ == "run_row"


def test_a_changed_row_is_read_again_on_each_run() -> None:
    """The lane keeps the charges of a key set, never the row: a host changing its list and dict
    between runs gets each run's answer for them as they then are."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(FIRST)
    row: list[Any] = [{"hp": 3, "level": 12}, 0]
    for _ in range(3):
        laned.execute(plan, "check", row, backend="optimized")
    for change in (
        lambda r: r[0].update(hp=-1),
        lambda r: r.__setitem__(1, -5),
        lambda r: r[0].update(extra=4),
        lambda r: r.__setitem__(1, "x"),
        lambda r: r.__setitem__(1, 2),
        lambda r: r[0].pop("level"),
        lambda r: r.append(1),
    ):
        change(row)
        lane = laned.execute(plan, "check", row, backend="optimized")
        _same(lane, ordinary.execute(plan, "check", row, backend="optimized"))


def _pools(lane: Any) -> tuple[Any, Any]:
    """The bound artifact's spare states (``one``/``_run``) and the row body's own pool."""
    bound = lane._current()
    assert bound is not None
    ready = inspect.getclosurevars(lane.run).nonlocals["push"].__self__
    return bound[7], ready


def test_rows_of_both_bodies_on_many_threads_at_once() -> None:
    """Four threads on one lane, rows of both bodies and failing runs mixed: every result is its
    own row's, and the pools hold what their users expect afterwards."""
    laned, ordinary, plan, spy = _bound(LAST, {}, [0, {"hp": 1}])
    rows = _rows(False)
    expected = [
        (lambda r: (r.ok, r.value, r.usage, r.error and r.error.code))(
            ordinary.execute(plan, "check", row, backend="optimized")
        )
        for row in rows
    ]
    wrong: list[int] = []
    lock = threading.Lock()

    def worker(shift: int) -> None:
        r = random.Random(shift)
        for _ in range(150):
            i = r.randrange(len(rows))
            result = laned.execute(plan, "check", rows[i], backend="optimized")
            if (result.ok, result.value, result.usage, result.error and result.error.code) != expected[i]:
                with lock:
                    wrong.append(i)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(worker, range(4)))
    assert wrong == []
    assert spy.taken == 600
    spares, ready = _pools(spy.lane)
    assert all(s.room == -1 and s.left == s.full and not (s.ticks or s.elements or s.strings) for s in spares)
    assert ready and all(s.room >= 0 and s.lazy == () and s.work == 0 for s in ready)


def _row_bound_on(monkeypatch: pytest.MonkeyPatch, clock: Any, wall_ms: int) -> tuple[Any, Any, Any]:
    """A laned host running ``MANY`` under ``wall_ms``, its lane bound to ``clock``."""
    laned, _ = _hosts(None)
    plan = laned.prepare(MANY, Policy.builder().with_max_wall_time_ms(wall_ms).build())
    laned.execute(plan, "check", [1, {"a": 1}], backend="optimized")  # compiles (its own clock reads)
    monkeypatch.setattr(fastlane, "_monotonic", clock)  # the lane binds next, reading this one
    laned.execute(plan, "check", [1, {"a": 1}], backend="optimized")
    assert laned._dispatch[(id(plan), "check", "optimized", "python")].fast.run.__name__ == "run_row"
    return laned, plan, laned._backends["optimized"]


ROWS: list[Sequence[object]] = [
    [1, {"a": 1}],  # kept: the row body
    [1, {"a": 1, "h\u00e9": 2}],  # a non-ASCII key: the general body
    [1, {"a": 1, **{f"k{i}": i for i in range(80)}}],  # taken, its key set not kept
    [2**40, {"a": 1}],  # refused by the general body, after the run's start
]


@pytest.mark.parametrize("row", ROWS, ids=["kept", "non-ASCII key", "big", "refused limit"])
@pytest.mark.parametrize("wall_ms", [500, 1500, 2500, 3500])
def test_row_runs_read_the_clock_as_the_ordinary_path(
    monkeypatch: pytest.MonkeyPatch, wall_ms: int, row: Sequence[object]
) -> None:
    """With a clock that moves a second per read: the run's start (before the row is read), the
    check after its input and the check at the 64th fuel charge fall on the ordinary path's reads
    on either body - each budget times out at the same charge with the same usage."""
    clock = _Clock()
    laned, plan, backend = _row_bound_on(monkeypatch, clock, wall_ms)
    clock.now = 0.0
    lane = laned.execute(plan, "check", row, backend="optimized")
    assert clock.now >= 1.0  # the lane ran it, on this clock
    record = EntryCall(plan, "check", "python").run_record(row, backend, clock=_Clock())
    assert (lane.value, lane.usage) == (record[1], record[3])
    assert (lane.error and lane.error.code) == (record[2] and record[2].code)
