"""The optimized backend's fast lane (``runtime/optimized/fastlane.py``) against the ordinary path.

A lane run builds its run context only when a stub first needs it, and a run that never needs it
gets its usage record, audit trail and result built from the fuel alone. Everything a host sees must
be what the ordinary path (``EntryCall.run_record``) gives: checked here on every run case of the
conformance corpus that the lane can take, on plain runs and on runs whose context is built part way,
and on the boundaries the lane must keep (the deadline before the first statement, inputs, bounds).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
from dotboxd.core.costs import CALL_DEPTH_STEP
from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.context import run_id_text
from dotboxd.runtime.execution import EntryCall
from dotboxd.runtime.meter import Meter, MeterLimits
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized.fastlane import FastLane, LazyRunState, PendingRunState
from dotboxd.runtime.optimized.stubs import RunState
from tests.corpus_cases import corpus_cases

from ..optimized.differential import differences, observe
from .spies import count_preparations

RUN_CASES = [c for c in corpus_cases() if c.expect.stage == "run"]
_CACHE = ArtifactCache(capacity=64)

PRED = 'module "p" version "1.0.0";\nentrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }\n'
LOOP = """module "l" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n { acc = acc + i % 7; }
    return acc;
}"""


class _Spy:
    """Counts the runs a lane really took (it returns None when it leaves a run to the ordinary path)."""

    def __init__(self, lane: Any) -> None:
        self.lane = lane
        self.taken = 0

    def __call__(self, args: Sequence[object], run_id: str | None = None) -> Any:
        record = self.lane(args, run_id)
        self.taken += record is not None
        return record

    def run(self, args: Sequence[object], run_id: str | None, finish: Any, defer: Any = None) -> Any:
        result = self.lane.run(args, run_id, finish, defer)
        self.taken += result is not None
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.lane, name)


def _hosts(catalog: Any) -> tuple[SandboxHost, SandboxHost]:
    """Two hosts on one optimized backend (one compiled artifact): with lanes, and without."""
    backend = OptimizedBackend(cache=_CACHE)
    laned = SandboxHost(bindings=catalog, backends={"optimized": backend})
    ordinary = SandboxHost(bindings=catalog, backends={"optimized": backend}, fast_lanes=False)
    return laned, ordinary


def _compile(host: SandboxHost, plan: Any) -> None:
    backend = host._backends["optimized"]
    assert isinstance(backend, OptimizedBackend)
    backend._remember(plan, backend.cache.get_or_compile(plan, backend.options))


def _spy(host: SandboxHost, plan: Any, entry: str, encoding: str = "json") -> _Spy | None:
    dispatch = host._dispatch.get((id(plan), entry, "optimized", encoding))
    if dispatch is None or dispatch.fast is None:
        return None
    spy = _Spy(dispatch.fast)
    dispatch.fast = spy
    return spy


def _lane_cases() -> list[Case]:
    """The run cases whose entrypoint the lane can take (no bindings, no capability, ...)."""
    chosen = []
    for case in RUN_CASES:
        module = import_stage(case.raw, case.origin)
        if not isinstance(module, Module):
            continue
        with case_root(case.raw) as root:
            plan = validate_case(module, case.raw, root).plan
            if FastLane.eligible(EntryCall(plan, case.entrypoint, "json")):
                chosen.append(case)
    return chosen


def test_most_run_cases_can_take_the_lane() -> None:
    """Not vacuous: the comparison below covers a large share of the corpus on the lane. (Chosen here,
    not at collection: validating every case at import cost each pytest-xdist worker seconds.)"""
    lane_cases = _lane_cases()
    assert len(lane_cases) >= 200 and len(lane_cases) >= len(RUN_CASES) // 3


def _same(lane: ExecutionResult, ordinary: ExecutionResult) -> None:
    seen, expected = observe(lane), observe(ordinary)
    diff = differences(expected, seen)
    assert not diff, "\n".join(diff)
    assert lane.executed_by == ordinary.executed_by and lane.backend == ordinary.backend
    assert lane.return_type == ordinary.return_type and lane.stage == ordinary.stage
    summary, other = lane.audit_events[-1], ordinary.audit_events[-1]
    assert summary.kind == other.kind == "RunSummary" and summary.run_id == lane.run_id
    assert summary.fields["executionMode"] == other.fields["executionMode"]
    timed_out = ordinary.error is not None and ordinary.error.category == "Timeout"
    strip = ("runId", "fuelUsed", "usage") if timed_out else ("runId",)  # work done in time varies
    assert {k: v for k, v in lane.to_json().items() if k not in strip} == {
        k: v for k, v in ordinary.to_json().items() if k not in strip
    }


@pytest.mark.parametrize("case", RUN_CASES, ids=[c.name for c in RUN_CASES])
def test_fast_lane_results_equal_the_ordinary_path(case: Case) -> None:
    """Every run case: one the lane can take runs on it and answers exactly as the host without
    lanes; one it cannot take is never offered to it."""
    module = import_stage(case.raw, case.origin)
    assert isinstance(module, Module)  # a run-stage case imports
    args = list(case.raw.get("args", []))
    with case_root(case.raw) as root:
        validated = validate_case(module, case.raw, root)
        plan = validated.plan
        eligible = FastLane.eligible(EntryCall(plan, case.entrypoint, "json"))
        laned, ordinary = _hosts(validated.catalog)
        laned.execute(plan, case.entrypoint, args, backend="optimized", encoding="json")
        _compile(laned, plan)  # the first run compiles, unless its inputs were refused before it ran
        spy = _spy(laned, plan, case.entrypoint)
        assert (spy is not None) == eligible, "the lane is offered exactly the runs it can take"
        if spy is None:
            return  # the ordinary path runs it: its results are the conformance tests' business
        plain = ordinary.execute(plan, case.entrypoint, args, backend="optimized", encoding="json")
        # the first lane run binds the artifact (``FastLane._run``); later ones take the artifact's
        # own ``run`` where the entry needs no per-run setup: both must answer as the ordinary path
        for taken in (1, 2):
            lane = laned.execute(plan, case.entrypoint, args, backend="optimized", encoding="json")
            assert spy.taken == taken, "the lane did not take the run"
            _same(lane, plain)


def _warm(source: str, policy: Policy | None = None) -> tuple[SandboxHost, SandboxHost, Any, _Spy]:
    laned, ordinary = _hosts(None)
    plan = laned.prepare(source, policy)
    entry = "check" if "check" in plan.entrypoints else "main"
    args = [1, 12] if entry == "check" else [5]
    for _ in range(2):  # the first run compiles, the second binds (the artifact's own ``run``, if any)
        laned.execute(plan, entry, args, backend="optimized")
    spy = _spy(laned, plan, entry, "python")
    assert spy is not None
    return laned, ordinary, plan, spy


class _Row(list):  # type: ignore[type-arg]
    pass


class _Int(int):
    pass


@pytest.mark.parametrize(
    "args",
    [
        [7, 12], [0, 12], [7, 9], [2**31, 1], [True, 1], ["7", 1], [7], [7, 12, 1], "ab", None,
        # past the inline test's one-digit bounds (2**30 - 1), inside I32: read_inputs takes them
        [2**30, 12], [2**30 - 1, 10], [-(2**30), 12], [2**31 - 1, 2**31 - 1], [-(2**31), 12], [5, -(2**31) - 1],
        # rows the inline two-integer test leaves to read_inputs: a list subclass, int subclasses
        _Row([7, 12]), [_Int(7), 12], (7, _Int(12)),
    ],
)  # fmt: skip
def test_fast_lane_inputs_fail_and_pass_as_on_the_ordinary_path(args: Any) -> None:
    laned, ordinary, plan, spy = _warm(PRED)
    lane = laned.execute(plan, "check", args, backend="optimized")
    _same(lane, ordinary.execute(plan, "check", args, backend="optimized"))
    assert spy.taken == 1


ONE_I64 = 'module "o" version "1.0.0";\nentrypoint fn main(n I64) -> Bool { return n > 3L; }\n'
MIXED = (
    'module "m" version "1.0.0";\nentrypoint fn main(n I64, k I32) -> Bool { return n > numeric.toI64(k); }\n'
)


@pytest.mark.parametrize(
    ("source", "args"),
    [
        (ONE_I64, row)
        for row in ([7], (7,), [2**63 - 1], [2**63], [-(2**63)], [True], [7.0], [], [1, 2], "7", None)
    ]
    + [(MIXED, row) for row in ([2**40, 3], (1, 2), [2**40, 2**31], [3, 2**40], [1, False], [1])],
)
def test_fast_lane_integer_rows_tested_inline_fail_and_pass_as_on_the_ordinary_path(
    source: str, args: Any
) -> None:
    """One or two integer parameters (I32 and I64 ranges): the rows the lane tests inline and the
    ones it leaves to ``read_inputs`` answer as on the ordinary path."""
    laned, ordinary = _hosts(None)
    plan = laned.prepare(source)
    for _ in range(2):  # the first run compiles, the second binds the artifact's own ``run``
        laned.execute(plan, "main", [5] if source is ONE_I64 else [5, 1], backend="optimized")
    spy = _spy(laned, plan, "main", "python")
    assert spy is not None
    assert spy.lane.run.__qualname__ == "FastLane._runner.<locals>.run", "the inline tests are used"
    _same(
        laned.execute(plan, "main", args, backend="optimized"),
        ordinary.execute(plan, "main", args, backend="optimized"),
    )
    assert spy.taken == 1


@pytest.mark.parametrize("n", [0, 3, 5000, 10**6])
def test_fast_lane_runs_that_build_their_context_part_way(n: int) -> None:
    """A loop reaches the meter through stubs (bulk reservations, fuel exhaustion at 10**6): the
    lazily built context must give the very usage, error and audit of one built at the start."""
    policy = (
        Policy.builder()
        .with_fuel(200_000)
        .with_max_loop_iterations(10**7)
        .with_max_wall_time_ms(60_000)
        .build()
    )
    laned, ordinary, plan, spy = _warm(LOOP, policy)
    for _ in range(2):  # the second run reuses the lane's state (or a fresh one after a build)
        lane = laned.execute(plan, "main", [n], backend="optimized")
        _same(lane, ordinary.execute(plan, "main", [n], backend="optimized"))
    assert spy.taken == 2


def test_fast_lane_keeps_input_bounds_and_charges() -> None:
    source = 'module "b" version "1.0.0";\nentrypoint fn main(xs List<I32>, n I32) -> I32 { return list.count(xs) + n; }\n'
    policy = Policy.builder().with_input_bounds("main", n=(0, 10)).with_limits(max_list_length=3).build()
    laned, ordinary = _hosts(None)
    plan = laned.prepare(source, policy)
    laned.execute(plan, "main", [[1], 1], backend="optimized")
    spy = _spy(laned, plan, "main", "python")
    assert spy is not None
    for args in ([[1, 2], 3], [[1, 2], 11], [[1, 2, 3, 4], 1], [(1, 2), 0], [[1, True], 0]):
        _same(
            laned.execute(plan, "main", args, backend="optimized"),
            ordinary.execute(plan, "main", args, backend="optimized"),
        )
    assert spy.taken == 5


def test_fast_lane_is_not_offered_where_it_could_change_what_a_host_sees() -> None:
    """No lane without a wall-time budget (Timeout before the first statement), with observers (they
    get the summary live), for the reference backend, or for an unknown entrypoint."""
    zero = Policy.builder().with_max_wall_time_ms(0).build()
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=_CACHE)})
    plan = host.prepare(PRED, zero)
    for _ in range(2):
        result = host.execute(plan, "check", [1, 12], backend="optimized")
        assert result.error is not None and result.error.code == "R-TIMEOUT"
    assert host._dispatch[(id(plan), "check", "optimized", "python")].fast is None
    watched = SandboxHost(
        observers=[lambda event: None], backends={"optimized": OptimizedBackend(cache=_CACHE)}
    )
    plan = watched.prepare(PRED)
    watched.execute(plan, "check", [1, 12], backend="optimized")
    assert watched._dispatch[(id(plan), "check", "optimized", "python")].fast is None
    host.execute(host.prepare(PRED), "check", [1, 12])
    assert all(d.fast is None for key, d in host._dispatch.items() if key[2] == "reference")
    assert not FastLane.eligible(EntryCall(plan, "nope"))


def test_fast_lane_cancel_token_takes_the_ordinary_path() -> None:
    from dotboxd.host import CancelToken

    laned, _, plan, spy = _warm(PRED)
    token = CancelToken()
    token.cancel()
    result = laned.execute(plan, "check", [7, 12], backend="optimized", cancel=token)
    assert result.error is not None and result.error.code == "R-CANCELLED" and spy.taken == 0


def test_meter_built_part_way_counts_its_deadline_from_the_run_start() -> None:
    """The lane builds a run's meter when first needed; its wall-time budget still starts with the run."""
    limits = MeterLimits(max_wall_time_ms=50)
    started = time.monotonic() - 0.04
    meter = Meter(limits, started=started)
    assert meter.remaining_seconds() <= 0.0101
    late = Meter(limits, started=time.monotonic() - 0.06)
    with pytest.raises(Exception, match="wall-time"):
        late.check_deadline()


def test_fast_lane_from_many_threads_at_once() -> None:
    """Runs on several threads share the lane's spare states without sharing one between two runs."""
    laned, _, plan, spy = _warm(PRED)
    out: list[tuple[str, object]] = []
    lock = threading.Lock()

    def worker(offset: int) -> None:
        mine = []
        for hp in range(offset, offset + 300):
            result = laned.execute(plan, "check", [hp, 12], backend="optimized")
            mine.append((result.run_id, result.value is (hp > 0)))
        with lock:
            out.extend(mine)

    threads = [threading.Thread(target=worker, args=(k * 1000 - 10,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(out) == 1200 and all(ok for _, ok in out)
    assert len({run_id for run_id, _ in out}) == 1200 and spy.taken == 1200


def test_fast_lanes_false_runs_every_call_on_the_ordinary_path() -> None:
    """The public switch: no dispatch record of such a host holds a lane, and its results are the
    laned host's."""
    laned, ordinary, plan, spy = _warm(PRED)
    assert laned.fast_lanes and not ordinary.fast_lanes
    _same(
        laned.execute(plan, "check", [3, 12], backend="optimized"),
        ordinary.execute(plan, "check", [3, 12], backend="optimized"),
    )
    assert spy.taken == 1
    assert ordinary._dispatch[(id(plan), "check", "optimized", "python")].fast is None


def test_lazy_run_state_builds_its_context_once_then_is_a_plain_run_state() -> None:
    """The lane's run state builds its context on the first read of ``run`` or ``meter``, stores it
    in ``RunState``'s own slots and from then on is a plain ``PendingRunState`` (every later read a slot
    read, the context never built twice); an unarmed state builds nothing. Neither class has a
    ``__getattr__``, which would keep the interpreter from specializing the reads of the lane's
    and the stubs' hot paths (the property this design keeps from the in-place one it replaced:
    the run's state object, its tables and its context are the same before and after)."""
    _, _, _, spy = _warm(PRED)
    lane = spy.lane
    assert isinstance(lane, FastLane)
    bound = lane._current()
    assert bound is not None
    assert not any("__getattr__" in vars(cls) for cls in (LazyRunState, PendingRunState, RunState))
    assert PendingRunState.__mro__[1] is RunState and not any(
        isinstance(v, property) for v in vars(PendingRunState).values()
    )
    state = LazyRunState(bound)
    with pytest.raises(AttributeError):
        state.meter  # noqa: B018  # unarmed: nothing to build from
    with pytest.raises(AttributeError):
        state.run  # noqa: B018
    assert type(state) is LazyRunState and state.lazy == ()
    sites = state.sites
    state.lazy = (lane, 7, time.monotonic())
    meter = state.meter
    assert type(state) is PendingRunState and state.lazy is None and state.sites is sites
    run = state.run
    assert run.meter is meter and state.meter is meter and run.run_id == run_id_text(7)
    assert state.run is run  # built once
    assert meter.call_depth == CALL_DEPTH_STEP and meter.fuel_used == 0
    with pytest.raises(AttributeError):
        state.nothing  # noqa: B018
    other = LazyRunState(bound)
    other.lazy = (lane, 8, time.monotonic())
    assert other.run.run_id == run_id_text(8) and type(other) is PendingRunState  # ``run`` first, too


def test_lane_rebinds_when_the_backend_replaces_its_entry_for_the_plan() -> None:
    """The artifact's own run checks the backend's ``_recent`` entry by identity: when the backend
    replaces it (the plan remembered again, here with the very same artifact) the lane rebinds, and
    its next runs take the new entry's own run again instead of falling back for good."""
    laned, ordinary, plan, spy = _warm(PRED)
    lane = spy.lane
    backend = laned._backends["optimized"]
    first = lane.run
    assert first is not lane._run and lane._source is backend._recent[id(plan)]
    backend._remember(plan, backend._recent[id(plan)][1])  # a new entry (tuple), the same artifact
    for args in ([7, 12], [2**30 + 1, 12], [0, 12]):
        _same(
            laned.execute(plan, "check", args, backend="optimized"),
            ordinary.execute(plan, "check", args, backend="optimized"),
        )
    assert spy.taken == 3
    assert lane._source is backend._recent[id(plan)] and lane.run is not first and lane.run is not lane._run


def test_release_forgets_the_hot_dispatch_record() -> None:
    """The record kept apart for the last entrypoint (``_hot``) goes with ``release``: a host that
    drops a plan keeps no reference to it (an event hub installing and removing kernels would
    otherwise keep the last one, with its module, alive)."""
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=_CACHE)})
    plan = host.prepare(PRED)
    for _ in range(3):
        assert host.execute(plan, "check", [3, 12], backend="optimized").value is True
    assert host._hot is not None and host._hot[0] is plan
    before = sys.getrefcount(plan)
    assert host.release(plan) == 1 and host.dispatch_records == 0
    assert host._hot is None and sys.getrefcount(plan) < before


def test_hot_dispatch_keeps_the_lru_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls served from the hot record keep the LRU order exact: the most used plan stays, the one
    used least recently goes first."""
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=_CACHE)}, dispatch_cache_size=2)
    a, b, c = (host.prepare(PRED.replace('"p"', f'"{name}"')) for name in "abc")
    misses = count_preparations(host, monkeypatch)
    for plan in (a, b, a, a, a, c, a, a, b, c):
        assert host.execute(plan, "check", [3, 12], backend="optimized").value is True
    # after (a, b, a, a, a): LRU order b, a. c evicts b -> a, c. a a -> c, a. b evicts c -> a, b.
    # c evicts a -> b, c.
    assert misses == [id(a), id(b), id(c), id(b), id(c)]
    assert host.execute(a, "check", [3, 12], backend="optimized").ok and misses[-1] == id(a)
