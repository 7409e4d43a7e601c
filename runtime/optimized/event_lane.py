"""The fast lane's run of an entry whose one charged input is a host event (``Map<String, scalar>``).

Why (issue 16): a host calls a predicate over a dict event once per event, and the lane's run around
the kernel cost more than the kernel - a general run body that tested, per event, for every case it
might meet (an input read by ``read_inputs``, a UTF-16 scope, charges counted by the meter), reset
five counters of its run state after the run, and carried flags for each. The common event is read
by the reader of its key set (``core.event_maps``) with its input charges kept per key set, and its
run never builds a context. So the run here is two bodies:

- the common one (``run_event``): the event read by its reader, the kept charges written to the
  state, the deadline check after them, the compiled function, and the compact record
  (``fastlane.Counted``), in one frame; a failure or a run that built its context ends in
  ``ended``;
- the general one: an event the reader does not take, or whose charges it does not keep, is run by
  the lane's general row run (``one``, from the start read here), as before.

An entry with other parameters besides its event - scalars (``Bool``, ``I32``, ``I64``, ``F64``)
only, its event still its one charged input - gets the same two bodies (``run_row``): its row is
copied once into a list (a host thread cannot change what was tested), the other inputs tested as
their readers first test them (``execution.host_scalar_test``: the very values ``read_inputs``
would give), the event read by its reader; anything those tests do not take goes to the general
body, whose ``read_inputs`` refuses it in parameter order, as the ordinary path does.

The run states of the common body come from a pool of its own (``ready``) and stay armed there: a
state is armed (its ``room`` set) when it is made, and each run writes all four pending counters
(``left``, ``ticks``, ``elements``, ``strings``) from the kept charges before anything reads them,
so nothing is reset after a run but ``work`` and ``lazy``. A state handed to ``one`` is disarmed
first (zero counters, as ``one`` expects; it disarms it again) and armed again after. No other path
of the lane takes a state from this pool (``_run`` uses the bound artifact's ``spares``). A state
that built its run context belongs to that run and never returns to the pool.

Everything a host sees is what the former body gave - the same clock reads in the same order (the
run's start before its input is read, the first deadline check after the input is charged), the same
records, the same ``executed_by`` - which ``tests/host/test_fast_lane_charged.py`` and
``tests/host/test_event_lane_fuzz.py`` compare with the ordinary path, outcome by outcome.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from dotboxd.core.values import Value
from dotboxd.runtime.context import run_number_source
from dotboxd.runtime.errors import ErrorInfo
from dotboxd.runtime.execution import failure_info

if TYPE_CHECKING:
    from dotboxd.runtime.execution import RunRecord

    from .fastlane import (
        Closed,
        Compact,
        Counted,
        EventRead,
        FastLane,
        LaneRecord,
        LaneRun,
        LazyRunState,
        RunKey,
    )
    from .stubs import RunState


class EventSteps(NamedTuple):
    """What the event run takes from the lane's ``_runner`` for one bound artifact."""

    lane: FastLane
    recent_get: Callable[[int], Any]
    """The backend's ``_recent.get``: the entry of a plan id now."""
    source: tuple[Any, Any, int]
    """The backend's ``_recent`` entry the artifact was bound from (stale once replaced)."""
    general: LaneRun
    """``FastLane._run``: a run once the artifact is stale (it rebinds)."""
    new_state: Callable[[], LazyRunState]
    """A new run state of the bound artifact (disarmed)."""
    function: Callable[..., tuple[Value, int]]
    """The entrypoint's compiled function."""
    read_event: EventRead
    """The one-pass reader of the event (or its projecting twin)."""
    one: Callable[..., LaneRecord]
    """The lane's general run of a row (``_runner``'s ``one``), given the run's start."""
    close: Callable[[RunState, Value, ErrorInfo | None, int, bool], RunRecord]
    closed: Callable[[RunState, Value, ErrorInfo | None, int, bool], Closed]
    room: int
    """The text bytes a run may hold without a meter (``pending.text_room``)."""
    wall_seconds: float
    monotonic: Callable[[], float]
    row: EventRow | None = None
    """The entry's other parameters, when it has any (``run_row``); None: the event is its one."""


class EventRow(NamedTuple):
    """Where the event stands in an entry's row, and what the other inputs are tested with."""

    at: int
    """The event's position in the row."""
    arity: int
    others_ok: Callable[[Sequence[object]], bool]
    """Whether every input of a row of ``arity`` items but the event passes its direct test."""


def event_row(at: int, tests: Sequence[tuple[int, Callable[[object], bool]]], arity: int) -> EventRow:
    """The ``EventRow`` of an entry whose event stands at ``at`` among ``arity`` parameters, the
    others tested by ``tests`` (position, direct test); one other parameter - the common case, an
    event and a limit - is tested without a loop."""
    if len(tests) == 1:
        ((index, test),) = tests
        return EventRow(at, arity, lambda row: test(row[index]))
    return EventRow(at, arity, lambda row: all(test(row[index]) for index, test in tests))


Defer = Callable[[Value, "ErrorInfo | None", Any], Any] | None
"""The host's deferred result builder, if the caller gave one (``FastLane.run``)."""


def event_runner(steps: EventSteps) -> LaneRun:
    """``FastLane.run`` for the bound artifact of an entry whose one charged parameter is a host
    event read by a one-pass reader, and that checks no bounds (see the module docstring):
    ``run_event`` when the event is its only parameter, ``run_row`` when ``steps.row`` names others.

    ``run_row`` writes out ``run_event``'s steps again rather than sharing a helper with it: a
    shared step is one more frame per event on the one-parameter path (issue 16's measured
    path). The two must stay in step: ``tests/host/test_event_row_lane.py`` compares every
    outcome of the row body with the ordinary path, as the event body's tests do."""
    lane, recent_get, source, general, new_state, function, read_event, one, close, closed = steps[:10]
    room, wall_seconds, monotonic, row = steps[10:]
    plan, max_fuel, depth_left, audit_clock = lane.plan_id, lane.max_fuel, lane.depth_left, lane.audit_clock
    take = run_number_source()
    ready: deque[LazyRunState] = deque()  # this body's armed states (see the module docstring)
    pop, push = ready.pop, ready.append

    def armed() -> LazyRunState:
        state = new_state()
        state.room = room
        return state

    def run_event(
        args: Sequence[object], run_id: str | None, finish: Callable[..., Any], defer: Defer = None
    ) -> Any:
        """``FastLane.run`` while the artifact is the plan's: the common event written out in one
        frame (see the module docstring); every other outcome goes on in ``general_run``/``ended``."""
        if recent_get(plan) is not source:
            return general(args, run_id, finish, defer)  # compiled anew, or dropped: rebind
        try:
            state = pop()  # atomic: two threads never share a state
        except IndexError:
            state = armed()
        run_key: RunKey = take() if run_id is None else run_id
        started = monotonic()  # the run starts before its input is read, as on the ordinary path
        state.lazy = (lane, run_key, started)
        cls = type(args)
        found = read_event(args[0]) if (cls is list or cls is tuple) and len(args) == 1 else None
        if found is None:  # not an event the reader takes: the lane's general run reads it
            return general_run(state, args, run_key, started, finish, defer)
        held, charges = found  # ASCII keys (a map of ``TokenEntries``, or its snapshot where
        # projected: rule 25): no UTF-16 scope; ``charge_inputs`` of this key set, kept by the reader
        if charges is None:  # not counted without a meter: the general run charges it
            return general_run(state, args, run_key, started, finish, defer)
        fuel, state.ticks, state.elements, state.strings = charges
        state.left = fuel
        try:
            if monotonic() >= started + wall_seconds:
                state.meter.check_deadline()  # past the deadline: the meter raises R-TIMEOUT
        except Exception as exc:
            return ended(state, run_key, None, failure_info(exc), fuel, False, finish, defer)
        try:
            value, fuel = function(state, fuel, depth_left, 0, held)
        except Exception as exc:
            return ended(state, run_key, None, failure_info(exc), fuel, True, finish, defer)
        if state.lazy is None:  # that run built its context
            return ended(state, run_key, value, None, fuel, True, finish, defer)
        elements, strings = state.elements, state.strings
        state.work = 0
        state.lazy = ()
        push(state)  # armed; the next run writes its counters
        compact: Compact | Counted = (
            (run_key, value, None, max_fuel - fuel, audit_clock(), True, elements, strings)
            if elements or strings  # the allocation is the text bytes (``pending``)
            else (run_key, value, None, max_fuel - fuel, audit_clock(), True)
        )
        return lane.record(compact, finish) if defer is None else defer(value, None, compact)

    def general_run(
        state: LazyRunState,
        args: Sequence[object],
        run_key: RunKey,
        started: float,
        finish: Callable[..., Any],
        defer: Defer,
    ) -> Any:
        """The run of an event the reader did not take, or whose charges it does not keep: the
        lane's general run (``one``), from the start read above, on the state disarmed as ``one``
        expects (it disarms it again at the end)."""
        state.room = -1  # ``LazyRunState.disarm``: no charges pending, counters zero
        state.left = max_fuel
        state.ticks = state.elements = state.strings = 0
        done = one(args, run_key, state, defer is not None, started)
        if state.lazy is not None:  # never built: armed again, reused
            state.room = room
            state.lazy = ()
            push(state)
        return handed(done, finish, defer)

    def ended(
        state: LazyRunState,
        run_key: RunKey,
        value: Value,
        error: ErrorInfo | None,
        fuel: int,
        ran: bool,
        finish: Callable[..., Any],
        defer: Defer,
    ) -> Any:
        """The end of a run above that failed or built its context: closed through its context
        (a failure after charges made without a meter builds it first, so that the meter reports
        them), else - a failure before anything was charged - its compact record."""
        if error is not None and state.lazy is not None and state.pending_charged():
            state.build()  # it failed after charges without a meter: the meter reports them
        done: LaneRecord
        if state.lazy is None:  # the state is the run's own now
            done = (closed if defer is not None else close)(state, value, error, fuel, ran)
        else:  # nothing was charged: it failed before, or without, any stub
            done = (run_key, None, error, 0, audit_clock(), ran)
            state.work = 0
            state.lazy = ()
            push(state)
        return handed(done, finish, defer)

    def handed(done: LaneRecord, finish: Callable[..., Any], defer: Defer) -> Any:
        """The caller's result of a record (as ``FastLane._run`` hands it)."""
        if defer is not None:
            return defer(done[1], done[2], done)
        return finish(*done) if len(done) == 9 else lane.record(done, finish)  # type: ignore[arg-type]

    run_event.__name__ = "run_event"
    if row is None:
        return run_event
    at, arity, others_ok = row

    def run_row(
        args: Sequence[object], run_id: str | None, finish: Callable[..., Any], defer: Defer = None
    ) -> Any:
        """``run_event`` for an entry with other parameters besides its event (see the module
        docstring): the row taken once, its other inputs tested, its event read; the same steps
        after that, the compiled function handed the whole row."""
        if recent_get(plan) is not source:
            return general(args, run_id, finish, defer)  # compiled anew, or dropped: rebind
        try:
            state = pop()  # atomic: two threads never share a state
        except IndexError:
            state = armed()
        run_key: RunKey = take() if run_id is None else run_id
        started = monotonic()  # the run starts before its inputs are read, as on the ordinary path
        state.lazy = (lane, run_key, started)
        cls = type(args)
        values = list(args) if cls is list or cls is tuple else None  # read once: what is tested is run
        found = (
            read_event(values[at])
            if values is not None and len(values) == arity and others_ok(values)
            else None
        )
        if found is None:  # not a row the tests and the reader take: the general run reads it
            return general_run(state, args, run_key, started, finish, defer)
        held, charges = found
        if charges is None:  # not counted without a meter: the general run charges it
            return general_run(state, args, run_key, started, finish, defer)
        values[at] = held  # type: ignore[index]  # a list of ``arity`` items by now
        fuel, state.ticks, state.elements, state.strings = charges
        state.left = fuel
        try:
            if monotonic() >= started + wall_seconds:
                state.meter.check_deadline()  # past the deadline: the meter raises R-TIMEOUT
        except Exception as exc:
            return ended(state, run_key, None, failure_info(exc), fuel, False, finish, defer)
        try:
            value, fuel = function(state, fuel, depth_left, 0, *values)  # type: ignore[misc]
        except Exception as exc:
            return ended(state, run_key, None, failure_info(exc), fuel, True, finish, defer)
        if state.lazy is None:  # that run built its context
            return ended(state, run_key, value, None, fuel, True, finish, defer)
        elements, strings = state.elements, state.strings
        state.work = 0
        state.lazy = ()
        push(state)  # armed; the next run writes its counters
        compact: Compact | Counted = (
            (run_key, value, None, max_fuel - fuel, audit_clock(), True, elements, strings)
            if elements or strings
            else (run_key, value, None, max_fuel - fuel, audit_clock(), True)
        )
        return lane.record(compact, finish) if defer is None else defer(value, None, compact)

    run_row.__name__ = "run_row"
    return run_row


__all__ = ["EventRow", "EventSteps", "event_row", "event_runner"]
