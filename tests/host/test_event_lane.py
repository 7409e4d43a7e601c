"""The dict-event lane's two bodies (``runtime/optimized/event_lane.py``) on one lane, in any order.

The common body runs on states kept armed in a pool of its own and resets only ``work`` and ``lazy``
after a run; the general body hands a state to the lane's row run (``one``) disarmed and arms it
again. Here events that take each body - a kept key set, a key set seen in another order, a
non-ASCII key, a refused value, a dict subclass, a str subclass key, an event too big to keep, a
missing key (the run builds its context), a failure at the deadline check - run in shuffled order,
many times over, so every state meets every body before and after another one: each result must be
the ordinary path's. The pools are checked to hold only what their users expect, and the general
body's clock reads are the ordinary path's.
"""

from __future__ import annotations

import inspect
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from dotboxd.host import Policy
from dotboxd.runtime.execution import EntryCall
from dotboxd.runtime.optimized import fastlane

from .test_fast_lane import _compile, _hosts, _same, _spy
from .test_fast_lane_charged import EVENT, MANY, _Clock


class _Str(str):
    __slots__ = ()


class _Dict(dict):  # type: ignore[type-arg]
    pass


MIXED: list[Any] = [
    {"hp": 3, "level": 12},  # kept key set: the common body
    {"level": 9, "hp": 1},  # the same keys in another order: another kept key set
    {"hp": -2, "level": 30, "extra": 1},
    {"h\u00e9": 1, "hp": 1, "level": 10},  # a non-ASCII key: the general body, a UTF-16 scope
    {"hp": "x", "level": 1},  # a refused value: the general body refuses it
    _Dict({"hp": 3, "level": 12}),  # a dict subclass: the general body reads it as a mapping
    {_Str("hp"): 3, "level": 12},  # a str subclass key: refused
    {"hp": 5, "level": 11, **{f"k{i}": i for i in range(3000)}},  # too big to keep: summed
    {"level": 1},  # a missing key: the exact stub raises after charges: the run builds its context
    {},
]


def _lane_state_pools(lane: Any) -> tuple[Any, Any]:
    """The bound artifact's spare states (``one``/``_run``) and the event body's own pool."""
    assert lane.run.__name__ == "run_event"
    bound = lane._current()
    assert bound is not None
    ready = inspect.getclosurevars(lane.run).nonlocals["push"].__self__
    return bound[7], ready


@pytest.mark.parametrize(
    "limits", [{}, {"max_fuel": 9}, {"max_total_string_bytes": 20}, {"max_map_entries": 2}]
)
def test_events_of_every_body_in_any_order_answer_as_the_ordinary_path(limits: dict[str, int]) -> None:
    laned, ordinary = _hosts(None)
    room = {"max_wall_time_ms": 60_000}  # the 3,000-key event is slow to read the general way
    plan = laned.prepare(EVENT, Policy.builder().with_limits(**room, **limits).build())
    for _ in range(2):
        laned.execute(plan, "check", [{"hp": 1}], backend="optimized")
    _compile(laned, plan)
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    order = random.Random(16).choices(range(len(MIXED)), k=120)
    for i in order:
        lane = laned.execute(plan, "check", [MIXED[i]], backend="optimized")
        _same(lane, ordinary.execute(plan, "check", [MIXED[i]], backend="optimized"))
    assert spy.taken == len(order)
    spares, ready = _lane_state_pools(spy.lane)
    # ``one`` expects disarmed states with zero counters: the event body never leaves one there
    assert all(s.room == -1 and s.left == s.full and not (s.ticks or s.elements or s.strings) for s in spares)
    # the event body's own states stay armed and waiting (none kept a run context)
    assert all(s.room >= 0 and s.lazy == () and s.work == 0 for s in ready)
    assert ready or limits, "not vacuous: without limits the common body's states come back"


def test_a_changed_dict_is_read_again_on_each_run() -> None:
    """The lane keeps the charges of a key set, never the event: a host changing its dict between
    runs (values, a key added or removed) gets each run's answer for the dict as it then is."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(EVENT)
    event: dict[Any, Any] = {"hp": 3, "level": 12}
    for _ in range(3):
        laned.execute(plan, "check", [event], backend="optimized")
    for change in (
        lambda e: e.update(hp=-1),
        lambda e: e.update(extra=4),
        lambda e: e.pop("extra"),
        lambda e: e.update(hp="x"),
        lambda e: e.update(hp=7),
        lambda e: e.pop("level"),
        lambda e: e.update(level=10),
    ):
        change(event)
        lane = laned.execute(plan, "check", [event], backend="optimized")
        _same(lane, ordinary.execute(plan, "check", [event], backend="optimized"))


def test_both_bodies_on_many_threads_at_once() -> None:
    """Four threads on one lane, events of both bodies and of failing runs mixed: every result is
    its own event's (the armed pool and the spare states are never shared by two runs)."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(EVENT, Policy.builder().with_max_wall_time_ms(60_000).build())
    for _ in range(3):
        laned.execute(plan, "check", [{"hp": 1}], backend="optimized")
    expected = [
        (lambda r: (r.ok, r.value, r.usage))(ordinary.execute(plan, "check", [e], backend="optimized"))
        for e in MIXED
    ]
    wrong: list[int] = []
    lock = threading.Lock()

    def worker(shift: int) -> None:
        r = random.Random(shift)
        for _ in range(150):
            i = r.randrange(len(MIXED))
            result = laned.execute(plan, "check", [MIXED[i]], backend="optimized")
            if (result.ok, result.value, result.usage) != expected[i]:
                with lock:
                    wrong.append(i)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(worker, range(4)))
    assert wrong == []


class _Jump:
    """A monotonic clock whose second read (since ``reset``) is ten seconds past its first."""

    def __init__(self) -> None:
        self.reads = 0

    def reset(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return 0.0 if self.reads == 1 else 10.0


GENERAL: list[Any] = [{"a": 1, "h\u00e9": 2}, {"a": 1, **{f"k{i}": i for i in range(80)}}]
"""An event the one-pass reader leaves to the general body (a non-ASCII key), and one it takes
without keeping its key set (too big: its charges summed per call)."""
IDS = ["non-ASCII key", "big", "kept"]


def _bound_on(monkeypatch: pytest.MonkeyPatch, clock: Any, wall_ms: int) -> tuple[Any, Any, Any]:
    """A laned host running ``MANY`` under ``wall_ms``, its lane bound to ``clock`` on its
    ``run_event`` closure (the binding run itself takes the lane's ``_run``)."""
    laned, _ = _hosts(None)
    plan = laned.prepare(MANY, Policy.builder().with_max_wall_time_ms(wall_ms).build())
    laned.execute(plan, "check", [{"a": 1}], backend="optimized")  # compiles (its own clock reads)
    monkeypatch.setattr(fastlane, "_monotonic", clock)  # the lane binds next, reading this one
    laned.execute(plan, "check", [{"a": 1}], backend="optimized")
    assert laned._dispatch[(id(plan), "check", "optimized", "python")].fast.run.__name__ == "run_event"
    return laned, plan, laned._backends["optimized"]


@pytest.mark.parametrize("event", [*GENERAL, {"a": 1}], ids=IDS)
@pytest.mark.parametrize("wall_ms", [5_000, 20_000])
def test_both_bodies_start_the_run_before_the_event_is_read(
    monkeypatch: pytest.MonkeyPatch, wall_ms: int, event: Any
) -> None:
    """The run's start is the event body's first clock read, before the event is read, on either
    body: with a clock whose second read is ten seconds on, the check after the input falls past a
    five-second budget (R-TIMEOUT, as on the ordinary path) and within a twenty-second one. A
    general body that started its run again (after the one-pass reader's attempt) would not time
    out."""
    clock = _Jump()
    laned, plan, backend = _bound_on(monkeypatch, clock, wall_ms)
    clock.reset()
    lane = laned.execute(plan, "check", [event], backend="optimized")
    assert clock.reads >= 2  # the lane ran it, on this clock
    record = EntryCall(plan, "check", "python").run_record([event], backend, clock=_Jump())
    assert (lane.value, lane.usage) == (record[1], record[3])
    assert (lane.error and lane.error.code) == (record[2] and record[2].code)
    assert (lane.error is not None and lane.error.code == "R-TIMEOUT") == (wall_ms < 10_000)


@pytest.mark.parametrize("event", [*GENERAL, {"a": 1}], ids=IDS)
@pytest.mark.parametrize("wall_ms", [500, 1500, 2500, 3500])
def test_both_bodies_read_the_clock_as_the_ordinary_path(
    monkeypatch: pytest.MonkeyPatch, wall_ms: int, event: Any
) -> None:
    """With a clock that moves a second per read: the run's start, the check after its input and
    the check at the 64th fuel charge fall on the ordinary path's reads on either body - each
    budget times out at the same charge with the same usage."""
    clock = _Clock()
    laned, plan, backend = _bound_on(monkeypatch, clock, wall_ms)
    clock.now = 0.0
    lane = laned.execute(plan, "check", [event], backend="optimized")
    assert clock.now >= 2.0  # the lane ran it, on this clock
    record = EntryCall(plan, "check", "python").run_record([event], backend, clock=_Clock())
    assert (lane.value, lane.usage) == (record[1], record[3])
    assert (lane.error and lane.error.code) == (record[2] and record[2].code)
