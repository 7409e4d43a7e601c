"""Fast-lane runs with a charged input (a host dict event) against the ordinary path and the reference.

The lane charges such a run's input shape, its text literals and its map reads without a meter while
they fit (``runtime/optimized/pending.py``) and hands what it counted to the meter when one is needed.
Every limit those charges meet is driven to its boundary here - the input refused, the first or the
second literal refused, fuel exhausted at every operation - and the deadline cadence is checked with a
scripted clock: the results must be the ordinary path's (value, error, usage, audit, JSON) and the
reference interpreter's (value, error, usage).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.execution import EntryCall
from dotboxd.runtime.optimized import fastlane

from .test_fast_lane import _compile, _hosts, _same, _spy

EVENT = (
    'module "e" version "1.0.0";\nentrypoint fn check(ev Map<String, I32>) -> Bool '
    '{ return map.get(ev, "hp") > 0 && map.get(ev, "level") >= 10; }\n'
)
READS = 70  # map reads in one run: past a deadline check (every 64th fuel charge)
MANY = (
    'module "r" version "1.0.0";\nentrypoint fn check(ev Map<String, I32>) -> I32 {\n    t = 0;\n'
    + '    t = t + map.get(ev, "a");\n' * READS
    + "    return t;\n}\n"
)


class _Str(str):
    __slots__ = ()


class _Dict(dict):  # type: ignore[type-arg]
    pass


EVENTS: list[Any] = [
    {"hp": 3, "level": 12},
    {"hp": 0, "level": 12},
    {"hp": 1, "level": 9, "extra": 5},
    {"hp": 1, "level": 10, "longer": 5},
    {"level": 1},  # a missing key: the exact stub
    {},
    {"hp": "x"},  # refused input
    {"hp": 2**31, "level": 1},
    {"h\u00e9": 1, "hp": 1, "level": 10},  # a non-ASCII key: the general reader
    {"hp": 1, "level": 10, **{f"k{i}": i for i in range(40)}},  # past 64 nodes: its shape costs fuel
    # what the lane's one-pass reader (``core.event_maps``) leaves to the general routine
    _Dict({"hp": 3, "level": 12}),  # a dict subclass: read as a mapping, not refused
    {_Str("hp"): 3, "level": 12},  # a str subclass key: refused
    {"hp": True, "level": 12},  # a bool is not an I32: refused
    {"hp": 1, "level": 10, 7: 1},  # a key that is not a text: refused
    {"level": 10, "hp": 1},  # a key set seen in another order
]
# the input (keys "hp" and "level") is 14 text bytes; the literals "hp" and "level" 4 and 10 more
TEXT_BYTES = [13, 14, 17, 18, 27, 28]
LIMITS: list[dict[str, int]] = [
    {"max_map_entries": 1},
    {"max_map_entries": 2},
    {"max_string_length": 5},  # the longest literal; the event with a longer key is refused
    {"max_string_length": 6},
    {"max_total_collection_elements": 1},
    {"max_collection_depth": 0},
    *({"max_total_string_bytes": n} for n in TEXT_BYTES),
    *({"max_allocated_bytes": n} for n in TEXT_BYTES),
    *({"max_fuel": n} for n in range(0, 22)),
]


def _reference_agrees(host: SandboxHost, plan: Any, entry: str, args: list[Any], lane: Any) -> None:
    reference = host.execute(plan, entry, args, backend="reference")
    assert (lane.ok, lane.value, lane.usage) == (reference.ok, reference.value, reference.usage)
    assert (lane.error and lane.error.code) == (reference.error and reference.error.code)


@pytest.mark.parametrize("limits", LIMITS, ids=[f"{k}={v}" for d in LIMITS for k, v in d.items()])
def test_dict_event_at_each_limit_answers_as_the_ordinary_path(limits: dict[str, int]) -> None:
    laned, ordinary = _hosts(None)
    plan = laned.prepare(EVENT, Policy.builder().with_limits(**limits).build())
    laned.execute(plan, "check", [{"hp": 1}], backend="optimized")  # the dispatch record
    _compile(laned, plan)  # that run compiles only if its input was not refused
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    for event in EVENTS:
        lane = laned.execute(plan, "check", [event], backend="optimized")
        _same(lane, ordinary.execute(plan, "check", [event], backend="optimized"))
        _reference_agrees(laned, plan, "check", [event], lane)
    assert spy.taken == len(EVENTS)


def test_dict_event_without_a_meter_is_counted_as_with_one() -> None:
    """Not vacuous: the common event ends without a run context, and its usage is not fuel alone."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(EVENT)
    for _ in range(2):
        laned.execute(plan, "check", [{"hp": 1}], backend="optimized")
    result = laned.execute(plan, "check", [{"hp": 3, "level": 12}], backend="optimized")
    pending = object.__getattribute__(result, "_pending")
    assert len(pending) == 8, "counted without a meter (fastlane.Counted)"
    assert result.usage.string_bytes == 28 and result.usage.collection_elements == 2
    assert result.usage.allocated_bytes == 28
    _same(result, ordinary.execute(plan, "check", [{"hp": 3, "level": 12}], backend="optimized"))


def test_reads_past_a_deadline_check_build_the_meter_with_the_cadence_so_far() -> None:
    laned, ordinary = _hosts(None)
    plan = laned.prepare(MANY)
    for _ in range(2):
        laned.execute(plan, "check", [{"a": 1}], backend="optimized")
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    for event in ({"a": 1}, {"a": 2, "b": 3}, {"b": 1}):
        lane = laned.execute(plan, "check", [event], backend="optimized")
        _same(lane, ordinary.execute(plan, "check", [event], backend="optimized"))
        _reference_agrees(laned, plan, "check", [event], lane)
    assert spy.taken == 3


class _Clock:
    """A monotonic clock that moves one second per read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("wall_ms", [500, 1500, 2500])
def test_deadline_checks_fall_on_the_same_clock_reads(monkeypatch: pytest.MonkeyPatch, wall_ms: int) -> None:
    """With a clock that moves a second per read: the run's start, the check after its input is
    charged and the check at the 64th fuel charge read it in the same order on the lane (which
    builds its meter at that charge, from the counts it kept) as on the ordinary path - so each
    budget times out at the same charge with the same usage."""
    monkeypatch.setattr(fastlane, "_monotonic", _Clock())
    policy = Policy.builder().with_max_wall_time_ms(wall_ms).build()
    laned, _ = _hosts(None)
    plan = laned.prepare(MANY, policy)
    backend = laned._backends["optimized"]
    laned.execute(plan, "check", [{"a": 1}], backend="optimized")  # compiles (its own clock reads)
    monkeypatch.setattr(fastlane, "_monotonic", _Clock())  # the lane binds, reading this one
    lane = laned.execute(plan, "check", [{"a": 1}], backend="optimized")
    assert object.__getattribute__(lane, "_pending") is not None  # the lane ran it
    record = EntryCall(plan, "check", "python").run_record([{"a": 1}], backend, clock=_Clock())
    value, error, usage = record[1], record[2], record[3]
    assert (lane.value, lane.usage) == (value, usage)
    assert (lane.error and lane.error.code) == (error and error.code)
    assert (error is not None) == (wall_ms < 3000 - 500)  # 500 and 1500 ms time out, 2500 does not


ECHO = (
    'module "x" version "1.0.0";\nentrypoint fn echo(ev Map<String, I32>) -> Map<String, I32> '
    '{ grown = map.set(ev, "hp", 99); return ev; }\n'
)
GROWN = (
    'module "g" version "1.0.0";\nentrypoint fn grow(ev Map<String, I32>) -> Map<String, I32> '
    '{ return map.remove(map.set(ev, "new", 1), "hp"); }\n'
)


@pytest.mark.parametrize("backend", ["optimized", "reference"])
def test_a_host_event_is_a_snapshot_and_never_changes(backend: str) -> None:
    """The event's map is built from a copy of the host's dict (``TokenEntries``): the host changing
    its dict afterwards, or the kernel deriving new versions from it (``map.set``, ``map.remove``:
    a HAMT built then), never changes the map a run got or handed back."""
    laned, _ = _hosts(None)
    plan = laned.prepare(ECHO)
    event = {"hp": 3, "level": 12}
    for _ in range(3):  # compiled, bound, then on the lane
        result = laned.execute(plan, "echo", [event], backend=backend)
    returned = result.value
    assert returned.sorted_entries() == [("hp", 3), ("level", 12)]
    event["hp"] = -1
    event["extra"] = 7
    assert returned.sorted_entries() == [("hp", 3), ("level", 12)] and len(returned) == 2
    grown_plan = laned.prepare(GROWN)
    for _ in range(3):
        grown = laned.execute(grown_plan, "grow", [{"hp": 1, "level": 2}], backend=backend)
    assert grown.ok and grown.value.sorted_entries() == [("level", 2), ("new", 1)]
    again = laned.execute(grown_plan, "grow", [{"hp": 1, "level": 2}], backend="reference")
    assert (grown.value, grown.usage) == (again.value, again.usage)


@pytest.mark.parametrize("limits", [{}, {"max_fuel": 3}, {"max_total_string_bytes": 17}])
def test_a_dict_event_entry_runs_on_its_own_closure_in_both_result_forms(limits: dict[str, int]) -> None:
    """Not vacuous: once bound, an event entry's lane runs on its one-frame closure (``run_event``),
    so the comparisons above exercise it; and its plain record form (no deferred result: the
    lane called directly) is the deferred form's, run for run, including runs that fail or build
    their meter."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(EVENT, Policy.builder().with_limits(**limits).build())
    laned.execute(plan, "check", [{"hp": 1}], backend="optimized")  # the dispatch record
    _compile(laned, plan)
    lane = laned._dispatch[(id(plan), "check", "optimized", "python")].fast
    assert lane is not None
    lane.run([{"hp": 1, "level": 10}], None, lambda *fields: fields)  # binds the artifact
    assert lane.run.__name__ == "run_event"
    for event in EVENTS:
        deferred = laned.execute(plan, "check", [event], backend="optimized")
        _same(deferred, ordinary.execute(plan, "check", [event], backend="optimized"))
        record = lane([event])
        assert record is not None
        _, value, error, usage, events, commands, calls, _, executed_by = record
        assert (value, error and error.code, usage) == (
            deferred.value if deferred.ok else None,
            deferred.error and deferred.error.code,
            deferred.usage,
        )
        assert (executed_by, commands, dict(calls)) == ("optimized", (), {})
        assert [e.kind for e in events] == [e.kind for e in deferred.audit_events]


PAIR = (
    'module "p" version "1.0.0";\nentrypoint fn check(ev Map<String, I32>, min I32) -> Bool '
    '{ return map.get(ev, "hp") > min; }\n'
)


@pytest.mark.parametrize("limits", [{}, *({"max_fuel": n} for n in range(0, 8)), {"max_map_entries": 1}])
def test_an_event_with_another_parameter_is_read_as_before(limits: dict[str, int]) -> None:
    """An entry whose event is not its only parameter runs on its row closure (``run_row``: the
    other input tested, the event read by the one-pass reader; anything else through
    ``read_inputs``): the same answers as the ordinary path and the reference, at every budget
    around its failures."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(PAIR, Policy.builder().with_limits(**limits).build())
    laned.execute(plan, "check", [{"hp": 1}, 0], backend="optimized")
    _compile(laned, plan)
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    for args in ([{"hp": 3, "level": 1}, 2], [{"hp": 3}, 3], [{"hp": "x"}, 1], [{"hp": 1}, 2**31], [{}, 0]):
        lane = laned.execute(plan, "check", args, backend="optimized")
        _same(lane, ordinary.execute(plan, "check", args, backend="optimized"))
        _reference_agrees(laned, plan, "check", args, lane)
    assert spy.taken == 5


def test_an_event_entry_reads_its_event_itself_unless_json_encoded() -> None:
    """Not vacuous: the entries above read their event with the one-pass reader
    (``FastLane.event_read``) - the one with a second parameter too (``event_lane.run_row``) -
    and a JSON-encoded entry does not."""
    laned, _ = _hosts(None)
    for source, encoding, expected in (
        (EVENT, "python", True),
        (PAIR, "python", True),
        (EVENT, "json", False),
        (PAIR, "json", False),
    ):
        plan = laned.prepare(source)
        lane = fastlane.FastLane(EntryCall(plan, "check", encoding), {}, "optimized")  # type: ignore[arg-type]
        assert (lane.event_read is not None) == expected


def test_dict_events_from_many_threads_at_once() -> None:
    """Events of several key sets read on several threads at once (one reader and its key-set
    cache, the lane's spare states): every run answers for its own event, with its own usage."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(EVENT)
    for _ in range(2):
        laned.execute(plan, "check", [{"hp": 1}], backend="optimized")
    events = [{"hp": hp, "level": 12, f"x{hp % 7}": 1} for hp in range(-20, 20)]
    expected = {
        i: (result.value, result.usage)
        for i, result in enumerate(
            ordinary.execute(plan, "check", [ev], backend="optimized") for ev in events
        )
    }
    wrong: list[int] = []
    lock = threading.Lock()

    def worker(shift: int) -> None:
        for k in range(200):
            i = (k + shift) % len(events)
            result = laned.execute(plan, "check", [events[i]], backend="optimized")
            if (result.value, result.usage) != expected[i]:
                with lock:
                    wrong.append(i)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(worker, range(4)))
    assert wrong == []


PREDICATE = 'module "q" version "1.0.0";\nentrypoint fn check(a I32, b I32) -> I32 { return a + b; }\n'


@pytest.mark.parametrize(("source", "args"), [(EVENT, [{"hp": 1, "level": 10}]), (PREDICATE, [1, 2])])
def test_a_run_id_the_lane_cannot_keep_as_given_is_refused_as_the_ordinary_path_refuses_it(
    source: str, args: list[Any]
) -> None:
    """A lane keeps a fresh run id as its number and spells it when read: a caller's id that is not
    a non-empty text must not reach it. It spelled an int as a generated id (5 became 0...05, 0 the
    all-zero id), kept "" where the ordinary path gave a fresh id, and failed with an
    AttributeError out of ``execute`` for any other object. Such ids are now refused before either
    path (``E-HOST-RUN-ID``, ``dotboxd.host.run_ids``): the lane and the ordinary path answer
    alike and the lane never runs one; a text id still takes the lane (not vacuous: the spy counts
    it)."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(source)
    for _ in range(3):
        laned.execute(plan, "check", args, backend="optimized")  # compiled, bound, on the lane
    spy = _spy(laned, plan, "check", "python")
    assert spy is not None
    for run_id in ("", 0, False, 5, True, 1.5, b"id", ("t",)):
        refusals = []
        for host in (laned, ordinary):
            with pytest.raises(DotBoxDError) as refused:
                host.execute(plan, "check", args, backend="optimized", run_id=run_id)  # type: ignore[arg-type]
            refusals.append(refused.value.diagnostic)
        assert refusals[0] == refusals[1] and refusals[0].code == "E-HOST-RUN-ID", run_id
    assert spy.taken == 0
    assert laned.execute(plan, "check", args, backend="optimized", run_id="r-1").run_id == "r-1"
    assert spy.taken == 1
