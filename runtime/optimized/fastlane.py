"""The fast lane: one run of a compiled entrypoint that builds its run context only if it needs one.

Why: a small kernel called once per host event (a predicate over two integers) runs in well under a
microsecond, while the per-run objects around it - the ``RunContext`` with its ``Meter``, the
``RunState`` of the stubs - cost several times that. Generated code keeps the fuel in a local and
touches nothing else of the run except through a stub (``stubs.py``), so a run that never calls a
stub never needs the meter: its whole consumption is the fuel the function hands back.

``LazyRunState`` is a ``RunState`` whose ``run`` and ``meter`` slots are left empty until a stub
first reads one of them: the class's ``run`` and ``meter`` properties then build a ``RunContext``
equal to the one the ordinary path would have built at the start of the run (same run id, same
deadline counted from the run's start, call depth one, nothing charged yet - generated code writes
nothing to the meter before a stub syncs it), fill the two slots and make the state a plain
``RunState``, so every later read is a plain slot read at full speed. From then on the run is the
ordinary run, closed by ``EntryCall.finish``.

A run that never materialized consumed fuel only: its usage is the shared fuel-only record
(``meter.fuel_only_usage``), its audit trail just the lazily built ``RunSummary``, its commands
none, exactly what ``EntryCall.finish`` reports for such a run.

Only entrypoints for which this changes nothing observable get a lane (``FastLane.eligible``): a
known entrypoint of a plan that reaches no capability (nothing to revoke or expire), from which no
binding is reachable (no commands, no async results, no binding audit: decided per entrypoint from
the validator's call graph, ``validator.purity.reached_bindings``, so a pure predicate keeps its lane
when another entrypoint of its plan calls a binding), that fits the host's stack, whose
policy allows one call level and a non-zero wall time, on a host without live observers and runs
without a cancel token (the host decides the last two per call). Everything else takes
``EntryCall.run_record``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from dotboxd.core.ast import TypeRef
from dotboxd.core.costs import CALL_DEPTH_STEP
from dotboxd.core.event_maps import Snapshot
from dotboxd.core.types import to_type_ref
from dotboxd.core.utf16 import close_scope, open_scope
from dotboxd.core.values import Shape, TokenEntries, Value, shape_of
from dotboxd.runtime.audit import AuditTrail
from dotboxd.runtime.context import RunContext, next_run_number, run_id_text, run_number_source
from dotboxd.runtime.errors import ErrorInfo
from dotboxd.runtime.execution import (
    NO_CALLS,
    EntryCall,
    RunRecord,
    failure_info,
    host_event_projector,
    host_event_reader,
    host_scalar_test,
)
from dotboxd.runtime.meter import DEFAULT_WALL_TIME_MS, Meter, MeterLimits, ResourceUsage, fuel_only_usage
from dotboxd.runtime.stack import HOST_RESERVE_FRAMES
from dotboxd.validator.purity import reached_bindings

from .event_lane import EventRow, EventSteps, event_row, event_runner
from .pending import InputCharges, PendingPlan, input_charges, plan_for, text_room
from .small_fuel import SHORT_START, start_fuel
from .stubs import RunState

if TYPE_CHECKING:
    from .artifact import Artifact

_monotonic = time.monotonic


class PendingRunState(RunState):
    """A fast-lane ``RunState`` with the counters of what its run settled before it had a meter.

    Its pending counters (``pending``: charges settled before the meter exists, which ``build`` hands to
    the meter): fixed per lane, ``limits``, ``full`` (the run's fuel) and ``literals``
    (``pending.literal_charges``); per run, ``room`` - the text bytes the run may hold
    (``pending.text_room``) while it is armed, -1 while it is not (a state not armed by the lane's
    ``one``: the other lane paths report fuel only, and every check of a stub then fails); ``left``
    - the fuel left as the meter would have recorded it (its ``fuel_used`` is ``full - left``,
    written where the meter's own path writes it); ``ticks`` - fuel charges since the last deadline
    check; ``elements`` and ``strings`` - the meter's counters of those names (the allocation is
    ``strings``). The stubs that settle so (``fastops``) read and write these slots directly."""

    __slots__ = ("elements", "full", "left", "limits", "literals", "room", "strings", "ticks")

    def __init__(self, bound: _Bound) -> None:
        _, _, self.sites, self.totals, self.texts, self.bindings, self.nodes, _, _, _, plan = bound
        self.chunk = (0, 0, 0, 0)
        self.work = 0
        self.owned = None
        self.owned_map = None
        self.owned_text = None
        self.lazy = ()
        self.limits: MeterLimits
        self.limits, _, self.literals = plan
        self.full = self.limits.max_fuel
        self.disarm()

    def disarm(self) -> None:
        """No pending charges from now on, nothing counted. A run arms a disarmed state by setting
        its ``room``: the counters are zero then."""
        self.room = -1
        self.left = self.full
        self.ticks = self.elements = self.strings = 0

    def pending_charged(self) -> bool:
        """Whether anything was charged without the meter."""
        return bool(self.left != self.full or self.elements or self.strings)


class LazyRunState(PendingRunState):
    """A ``PendingRunState`` without its run context until a stub first reads ``run`` or ``meter``.

    No slots of its own: the class shadows ``RunState``'s ``run`` and ``meter`` slots with two
    properties that build the context (``build``), store it in those very slots and retype the
    state to a plain ``PendingRunState`` (the layouts are the same, and the retype is one step: the
    class adds no slot). From then on the run is an ordinary run whose every read is a slot read.
    ``lazy`` holds what ``build`` needs - (lane, run key, start time) - while the state is armed for
    a run, ``()`` while it waits for one, and None once the context was built: such a state belongs
    to its run and is never reused. A state that was never built is as new after its run apart from
    ``work``, which the lane resets, and the pending counters, which a run of ``one`` arms and
    disarms.

    Why properties and a retype rather than a ``__getattr__`` that fills the slots in place: a
    class with ``__getattr__`` keeps the interpreter from specializing any attribute read of its
    instances (the lane reads ``lazy`` after every run, generated code and stubs read the state's
    tables), and the retype happens only in a run that builds its context, which costs far more."""

    __slots__ = ()

    def build(self) -> RunContext:
        """Build the run context now, fill the ``run`` and ``meter`` slots and become a
        ``PendingRunState``; the meter starts from what was settled without it (``pending``), and
        nothing more is settled so (AttributeError when the state is not armed: there is nothing to
        build from)."""
        armed = self.lazy
        if not armed:
            raise AttributeError("run")
        lane, run_key, started = armed
        run: RunContext = lane.context(run_key, started)
        if self.room >= 0:
            strings = self.strings  # every pending charge allocates its text bytes, nothing else
            run.meter.take_pending(self.full - self.left, self.ticks, strings, self.elements, strings)
            self.disarm()
        self.__class__ = PendingRunState  # type: ignore[assignment]  # the slots are no longer shadowed
        plain: PendingRunState = self
        plain.run = run
        plain.meter = run.meter
        plain.lazy = None
        return run

    @property
    def run(self) -> RunContext:  # type: ignore[override]
        """The run context, built on this first read."""
        return self.build()

    @property
    def meter(self) -> Meter:  # type: ignore[override]
        """The run's meter, its context built on this first read."""
        return self.build().meter


_Bound = tuple[
    "Artifact",
    "OneRun",
    tuple[Any, ...],
    tuple[int, ...],
    tuple[Any, ...],
    tuple[str, ...],
    tuple[int, ...],
    deque[LazyRunState],
    bool,
    "ManyRuns | None",
    PendingPlan,
]
"""(artifact, the run of one row against it (``FastLane._runner``), sites, totals, texts, bindings,
site nodes, spare states (a deque: a list that a run empties and refills reallocates its storage
twice per run, ~500 instructions; unbounded, yet never more than the runs that were ever in flight
at once: a run takes one, or makes one when there is none, and gives back at most that one), whether
a run needs a UTF-16 scope, the row loop of ``run_many`` if the entry has one, what its runs settle
without a meter against: ``pending.plan_for``)."""

_TEXT_FREE_TYPES = frozenset({"Unit", "Bool", "I32", "I64", "F64", "List", "Map", "Record"})
_SCALAR_TYPES = frozenset({"Bool", "I32", "I64", "F64"})


def _text_free(ref: TypeRef) -> bool:
    """Whether no value of type ``ref`` holds a text (String, path, uri, guid or opaque id)."""
    return ref.name in _TEXT_FREE_TYPES and all(_text_free(arg) for arg in ref.arguments)


def _event_map(ref: TypeRef) -> bool:
    """Whether ``ref`` is ``Map<String, scalar>``: the input whose fast reader makes ``TokenEntries``."""
    args = ref.arguments
    return (
        ref.name == "Map"
        and len(args) == 2
        and args[0].name == "String"
        and args[1].name in _SCALAR_TYPES
        and not args[1].arguments
    )


def _event_row(refs: list[TypeRef], at: int) -> EventRow | None:
    """The ``EventRow`` of an entry with other parameters besides its event at ``at``: None unless
    each of them has a direct test (``execution.host_scalar_test``: ``Bool``, ``I32``, ``I64``,
    ``F64``)."""
    tests = [(index, host_scalar_test(ref)) for index, ref in enumerate(refs) if index != at]
    checked = [(index, test) for index, test in tests if test is not None]
    return event_row(at, checked, len(refs)) if len(checked) == len(tests) else None


EventRead = Callable[[object], "tuple[Value | Snapshot, InputCharges | None] | None"]
"""The lane's reader of its one host event (``execution.host_event_reader``): the map and its
charges (None: not counted without a meter), or None when the event is not one it reads; its
projecting twin (``execution.host_event_projector``) gives the event's checked snapshot for the map
when the charges are counted."""

RecentArtifacts = dict[int, tuple[Any, "Artifact", int]]
"""``OptimizedBackend._recent``: plan id -> (plan, artifact, size)."""

RunKey = int | str
"""A run's id as given by the caller (text) or as a number from ``next_run_number``."""

Compact = tuple[RunKey, Value, ErrorInfo | None, int, float, bool]
"""A run that consumed only fuel, held until its record is wanted (``FastLane.record``): its run
key, value (None when it failed), error, fuel used, ``RunSummary`` timestamp, and whether the
compiled function was entered (then the run was executed by ``optimized``)."""

Counted = tuple[RunKey, Value, None, int, float, bool, int, int]
"""A run that succeeded without its run context but was charged more than fuel (its inputs' shapes,
its text literals: ``pending``), held until its record is wanted: ``Compact``'s fields of a
successful run, then its collection elements and string bytes (the bytes it allocated are its
string bytes: every pending charge allocates its text bytes and nothing else). Flat: one tuple per
run, not two."""

Closed = tuple["RunContext", Value, "ErrorInfo | None", Any, str, float, tuple[Any, ...]]
"""A run that built its run context, ended and closed (its fuel settled, its commands handed over,
its ``RunSummary`` timestamp read) but whose ``RunRecord`` is read from its context only when wanted
(``EntryCall.closed_record``, through ``FastLane.record``): run, value, error, return type, executed
by, timestamp, commands. A deferred result keeps it, and with it the run's context, until read."""

LaneRecord = RunRecord | Compact | Counted | Closed
"""What one run of the lane leaves: a full ``RunRecord`` when it built its run context (or its
``Closed`` form, when asked), else the ``Counted`` or ``Compact`` form (9, 7, 8 or 6 fields:
``len`` tells them apart)."""


OneRun = Callable[[Sequence[object], RunKey, LazyRunState, bool], LaneRecord]
"""One row's run against one artifact (``FastLane._runner``); the flag asks for a ``Closed`` form
instead of a full record if the run builds its context."""

ManyRuns = Callable[[Iterator[Sequence[object]], bool, _Bound], list[LaneRecord]]
"""Every row's run against one artifact, stopping after a failed row if asked (``FastLane._runner``)."""

LaneRun = Callable[..., Any]
"""``FastLane.run``: (args, run id or None, finish, defer or None) -> the result, or None."""


class FastLane:
    """The fast lane of one ``EntryCall`` on one optimized backend (see the module docstring).

    Everything a run needs that depends only on the entrypoint is read from the ``EntryCall`` once,
    here; what depends on the compiled artifact is bound on the first run against it (``_bind``)."""

    __slots__ = (
        "_bound",
        "_recent",
        "_source",
        "audit_clock",
        "backend_name",
        "bounds",
        "charged",
        "depth_left",
        "entry",
        "event_input",
        "event_project",
        "event_read",
        "event_row",
        "max_fuel",
        "plan",
        "plan_id",
        "projects",
        "read_inputs",
        "return_type",
        "run",
        "summary_builder",
        "text_free_inputs",
        "usage_memo",
    )

    def __init__(self, entry: EntryCall, recent: RecentArtifacts, backend_name: str) -> None:
        self.entry = entry
        self.plan = entry.plan
        self.plan_id = id(entry.plan)
        self._recent = recent
        self.backend_name = backend_name
        facts = entry.facts
        limits = facts.limits
        self.max_fuel = limits.max_fuel
        self.depth_left = limits.max_call_depth - CALL_DEPTH_STEP  # what the entry call leaves
        self.read_inputs = entry.read_inputs
        self.bounds = entry.bounds
        self.charged = entry.charged
        self.return_type = entry.return_type
        self.summary_builder = entry.summary_builder
        self.audit_clock = facts.audit_clock
        self.usage_memo = facts.usage_memo
        # A run needs the UTF-16 scope (``core.utf16``: per-run indices of long non-ASCII texts) only
        # if it can see such a text. Reaching no binding, a run gets a text only as an input or a
        # literal: every built-in that makes a text from something else (``int32.toStringInvariant``)
        # makes ASCII, and texts made from ASCII texts are ASCII, whose lengths and offsets never use
        # an index. So an artifact without text literals, called with text-free inputs, skips it.
        info = entry.plan.functions[entry.entrypoint]
        refs = [to_type_ref(t) for t in info.parameter_types]
        self.text_free_inputs = all(_text_free(ref) for ref in refs)
        # A host event (``Map<String, scalar>``) read by its fast reader has ASCII keys only (its
        # entries are then ``TokenEntries``): the one such input of an entry whose other inputs are
        # text-free is told ASCII per run, and a run with ASCII literals then needs no scope either.
        events = [i for i, ref in enumerate(refs) if not _text_free(ref)]
        self.event_input = events[0] if len(events) == 1 and _event_map(refs[events[0]]) else -1
        # an entry whose one parameter is such an event reads it itself, in one pass, with the
        # input's charges kept per key set (``core.event_maps``), and so does one whose other
        # parameters are scalars with a direct test (``event_row``); the others take ``read_inputs``
        self.event_read: EventRead | None = None
        self.event_project: EventRead | None = None
        self.event_row: EventRow | None = None
        if self.event_input >= 0 and len(refs) > 1 and entry.encoding == "python":
            self.event_row = _event_row(refs, self.event_input)
            if self.event_row is not None:  # its row closure (``event_lane.run_row``)
                room = text_room(limits)
                self.event_read = host_event_reader(
                    refs[self.event_input], lambda shape: input_charges(limits, room, (shape,))
                )
        elif self.event_input == 0 and entry.encoding == "python":
            room = text_room(limits)
            self.event_read = host_event_reader(refs[0], lambda shape: input_charges(limits, room, (shape,)))
            # its projecting twin: the checked snapshot for an artifact whose verifier admitted the
            # entry (rule 25, ``verify_projection``); made once, its key sets kept across artifacts
            self.event_project = host_event_projector(
                refs[0], lambda shape: input_charges(limits, room, (shape,))
            )
        self.projects = False
        """Whether runs against the bound artifact are handed their event's snapshot (rule 25)."""
        self._bound: _Bound | None = None
        self._source: tuple[Any, Artifact, int] | None = None
        """The ``_recent`` entry ``_bound`` was made from: while the backend holds this very tuple,
        the plan is compiled there with that artifact (an entry is never changed, only replaced)."""
        self.run: LaneRun = self._run  # this artifact's own closure once one is bound (``_current``)

    @staticmethod
    def eligible(entry: EntryCall) -> bool:
        """Whether a run of ``entry`` can take the lane (see the module docstring)."""
        limits = entry.facts.limits
        return (
            entry.known
            and not entry.gated
            and (not entry.plan.bindings or reached_bindings(entry.plan, entry.entrypoint) == frozenset())
            and entry.stack_frames <= HOST_RESERVE_FRAMES
            and limits.max_call_depth >= CALL_DEPTH_STEP
            and limits.wall_time_ms > 0
        )

    def context(self, run_key: RunKey, started: float) -> RunContext:
        """The run context the ordinary path would have built at ``started``, as it stands when the
        entrypoint's function has been entered (call depth one)."""
        entry = self.entry
        run_id = run_key if type(run_key) is str else run_id_text(run_key)  # type: ignore[arg-type]
        run = RunContext(entry.plan, run_id, None, (), _monotonic, entry.facts, started)
        run.meter.call_depth = CALL_DEPTH_STEP
        return run

    def _current(self) -> _Bound | None:
        """The entrypoint of the plan's artifact in the backend now (None: not compiled there)."""
        recent = self._recent.get(self.plan_id)
        if recent is None or recent[0] is not self.plan:
            return None
        bound = self._bound
        if bound is not None and self._source is recent:
            return bound
        artifact = recent[1]
        scoped = bool(artifact.texts) or not self.text_free_inputs
        spares: deque[LazyRunState] = deque()
        cell: list[_Bound] = []
        one, many, run = self._runner(artifact, scoped, cell, recent, spares)
        bound = (
            artifact,
            one,
            artifact.sites,
            artifact.totals,
            artifact.texts,
            artifact.bindings,
            artifact.site_nodes,
            spares,
            scoped,
            many,
            plan_for(self.entry.facts.limits, artifact.texts),
        )
        cell.append(bound)
        self._bound = bound
        self._source = recent
        self.run = self._run if run is None else run
        return bound

    def _run(
        self,
        args: Sequence[object],
        run_id: str | None,
        finish: Finish[_Out],
        defer: Callable[[Value, ErrorInfo | None, Compact], _Out] | None = None,
    ) -> _Out | None:
        """``run`` for any artifact: run the entrypoint with ``args`` and hand the fields of its
        ``RunRecord``, in order, to ``finish`` (the caller's result constructor: no intermediate
        record is built) - or its value, error and ``RunRecord`` (``Compact`` form for a run that
        consumed fuel only) to ``defer`` when given (a constructor that builds the rest from them,
        through ``record`` for a compact one, when it is read: the per-event path of a host). None
        (nothing done) when the plan is not compiled in the backend right now - the ordinary path
        then compiles it. The run id of a run given none is taken as a number and spelled only if
        it is read. ``run`` is this method until an artifact is bound whose entry needs no per-run
        setup; it is then that artifact's own closure (``_runner``)."""
        recent = self._recent.get(self.plan_id)
        if recent is None or recent[0] is not self.plan:
            return None
        bound = self._bound
        if bound is None or self._source is not recent:
            bound = self._current()
            assert bound is not None
        spares = bound[7]
        try:
            state = spares.pop()  # atomic: two threads never share a state
        except IndexError:
            state = LazyRunState(bound)
        done = bound[1](args, next_run_number() if run_id is None else run_id, state, defer is not None)
        if state.lazy is not None:  # never built: reusable
            state.lazy = ()
            spares.append(state)
        if defer is not None:
            return defer(done[1], done[2], done)  # type: ignore[arg-type]
        if len(done) == 9:
            return finish(*done)
        return self.record(done, finish)  # type: ignore[arg-type]

    def __call__(self, args: Sequence[object], run_id: str | None = None) -> RunRecord | None:
        """``run`` giving the ``RunRecord`` itself."""
        record: RunRecord | None = self.run(args, run_id, _as_record)
        return record

    def run_many(self, rows: Iterator[Sequence[object]], stop_on_error: bool) -> list[LaneRecord] | None:
        """Run the entrypoint once per row of ``rows``, each its own run, until the rows end (or,
        with ``stop_on_error``, after the first failed row); None, without taking a row, when the
        plan is not compiled in the backend right now. One run state serves every row that does
        not build a run context (its per-run fields are reset by the row's run)."""
        bound = self._current()
        if bound is None:
            return None
        many = bound[9]
        if many is not None:
            return many(rows, stop_on_error, bound)
        done: list[LaneRecord] = []
        keep = done.append
        one = bound[1]
        state = LazyRunState(bound)
        if stop_on_error:
            for args in rows:
                record = one(args, next_run_number(), state, False)  # rows keep no run context
                keep(record)
                if state.lazy is None:
                    state = LazyRunState(bound)  # that run built its context: the next needs a new state
                if record[2] is not None:
                    break
            return done
        for args in rows:
            keep(one(args, next_run_number(), state, False))
            if state.lazy is None:
                state = LazyRunState(bound)
        return done

    def _runner(
        self,
        artifact: Artifact,
        scoped: bool,
        cell: list[_Bound],
        source: tuple[Any, Artifact, int],
        spares: deque[LazyRunState],
    ) -> tuple[OneRun, ManyRuns | None, LaneRun | None]:
        """The run of one row against ``artifact``: the steps of ``EntryCall.run_record`` after its
        plan-level checks (which the lane's eligibility settles once), with the run context built
        only on demand. A closure over everything that is fixed for the artifact and the
        entrypoint, so that a row reads no attribute of the lane: it is what a host pays per event.

        ``lazy`` is the state to run with. Inputs with a shape are charged (and the deadline then
        checked, as on the ordinary path) without a meter when the charges fit (``pending``), and so
        are the text literals and reads of the run (``fastops``); the result is the run's
        ``RunRecord`` when it built its context (its ``Closed`` form if ``later``: the caller
        defers the result), else its ``Counted`` form when such charges were made, else its
        ``Compact`` form.

        A run without charged inputs has scalar inputs only, read in constant time from a list or
        tuple: its clock starts once they are read (and checked), so the deadline check before the
        first statement is the start itself, which a non-zero budget (the lane's condition) always
        passes - one monotonic clock read per run (spec/semantics.md section 11). A row of any
        other class is read by the host's own code, in any time: its run starts before it is read
        and checks the deadline after, as on the ordinary path (``host_row``).

        When the entry needs no per-run setup beyond its inputs (no charged input, no bounds, no
        UTF-16 scope), two more closures: one that runs a whole stream of rows (``run_many``), and
        ``run`` itself for this artifact, ``one`` and the result written out in one frame (the
        per-event path of a host; ``cell`` receives the artifact's ``_Bound`` once the caller has
        made it; ``source`` is the backend's ``_recent`` entry it is bound to, ``spares`` the
        artifact's unused run states); None otherwise. An entry whose one charged parameter is a
        host event read by a one-pass reader - its only parameter, or one among scalars with a
        direct test (``event_row``) - gets ``run`` from ``event_lane`` instead (its common event in
        one frame, every other one through ``one``).

        The inline test of integer rows compares each input with its range clipped to CPython's
        one-digit integers (magnitude below 2**30, ``_INLINE_INT``): the interpreter compares those
        on its integer fast path, while a bound such as -2**31 makes each comparison a generic one
        (four of them per two-integer row, ~60 ns). A value outside the clipped range but inside the
        parameter's goes through ``read_inputs``, which accepts it as before."""
        function = artifact.functions[self.entry.entrypoint]
        limits = self.entry.facts.limits
        room = text_room(limits)
        # the run's one text input, when it is a host event, and its literals are all ASCII: a run
        # whose event was read by the fast reader needs no UTF-16 scope (see ``__init__``)
        ascii_literals = all(type(text) is str and text.isascii() for text, _ in artifact.texts)
        event = self.event_input if ascii_literals else -1
        # the one charged input, when it is a host event (a map: its shape is an attribute)
        first = self.charged[0] if len(self.charged) == 1 and self.charged[0] == self.event_input else -1
        by_shape: dict[int, tuple[Shape, InputCharges | None]] = {}
        wall_ms = limits.max_wall_time_ms
        wall_seconds = (DEFAULT_WALL_TIME_MS if wall_ms is None else wall_ms) / 1000.0  # as ``Meter``'s
        finish_run = self.entry.finish
        check_bounds = self.entry._check_bounds if self.bounds else None
        read_inputs, charged = self.read_inputs, self.charged
        max_fuel, depth_left = self.max_fuel, self.depth_left
        audit_clock, return_type, backend_name = self.audit_clock, self.return_type, self.backend_name
        lane = self
        monotonic = _monotonic
        # one or two integer parameters (a predicate over an event's numbers): the rows that
        # ``read_inputs`` would give back as they are are tested inline (``EntryCall.int_ranges``)
        ranges = self.entry.int_ranges
        ints = len(ranges) if ranges is not None and len(ranges) in (1, 2) else 0
        (lo0, hi0), (lo1, hi1) = (
            (_inline_range(ranges[0]), _inline_range(ranges[-1])) if ranges and ints else ((0, -1), (0, -1))
        )

        def one(
            args: Sequence[object],
            run_key: RunKey,
            lazy: LazyRunState,
            later: bool = False,
            begun: float | None = None,
        ) -> LaneRecord:
            state: RunState = lazy
            lazy.room = room  # armed (a disarmed state's counters are zero: ``LazyRunState.disarm``)
            cls = type(args)
            held_row = cls is not list and cls is not tuple  # read by the host's code (``host_row``)
            if begun is not None:  # the caller started the run (``event_lane``): ``lazy.lazy`` is set
                started = begun
            elif charged or held_row:  # the run starts before its inputs are read, as on the ordinary path
                started = monotonic()
                lazy.lazy = (lane, run_key, started)
            fuel = max_fuel
            value: Value = None
            error: ErrorInfo | None = None
            ran = False
            opened = False
            try:
                values = read_inputs(args)
                entries = values[event].entries if event >= 0 else None  # type: ignore[union-attr]  # a map
                if scoped and type(entries) is not TokenEntries:
                    open_scope()  # the run's UTF-16 indices, as on the ordinary path
                    opened = True
                if check_bounds is not None:
                    check_bounds(values)
                if charged:  # a host event's kept charges are written out in ``event_lane``
                    fuel = charge_inputs(lazy, values, started)
                elif held_row:  # the first deadline check, after the inputs (``host_row``)
                    if monotonic() >= started + wall_seconds:
                        lazy.meter.check_deadline()  # past the deadline: the meter raises R-TIMEOUT
                else:  # scalar inputs: the run starts now, its deadline check is this instant
                    lazy.lazy = (lane, run_key, monotonic())
                ran = True
                value, fuel = function(state, fuel, depth_left, 0, *values)
            except Exception as exc:
                error = failure_info(exc)
            finally:
                if opened:
                    close_scope()
            if error is not None and lazy.lazy is not None and lazy.pending_charged():
                lazy.build()  # it failed after charges without a meter: the meter reports them
            if lazy.lazy is None:  # the run built its context: close it
                return (
                    closed(state, value, error, fuel, ran) if later else close(state, value, error, fuel, ran)
                )
            return ended(lazy, run_key, value, error, fuel, ran)

        def ended(
            lazy: LazyRunState, run_key: RunKey, value: Value, error: ErrorInfo | None, fuel: int, ran: bool
        ) -> Compact | Counted:
            """The end of a run that never built its context: ``lazy`` disarmed and ready for the
            next run, and the run's ``Counted`` form when it was charged more than fuel, else its
            ``Compact`` form."""
            lazy.work = 0
            elements, strings = lazy.elements, lazy.strings
            lazy.room = -1  # disarmed, its counters back to zero (``LazyRunState.disarm``, inlined)
            if elements or strings or lazy.ticks or lazy.left != max_fuel:
                lazy.left = max_fuel
                lazy.ticks = lazy.elements = lazy.strings = 0
            if error is not None:  # nothing was charged: it failed before, or without, any stub
                return (run_key, None, error, 0, audit_clock(), ran)
            if elements or strings:  # the allocation is the text bytes (``pending``)
                return (run_key, value, None, max_fuel - fuel, audit_clock(), True, elements, strings)
            return (run_key, value, None, max_fuel - fuel, audit_clock(), True)

        def charge_inputs(lazy: LazyRunState, values: tuple[Value, ...], started: float) -> int:
            """Charge the inputs' shapes, then check the deadline (the ordinary run's first check,
            after its inputs are charged); the fuel left. Without a meter (``pending``) when the
            charges fit, else through the meter, which refuses exactly as the reference does. The
            charges of a single input are kept per shape object (held, so its id is not reused)."""
            if len(charged) == 1:
                shape = shape_of(values[charged[0]])
                known = by_shape.get(id(shape))
                if known is not None and known[0] is shape:
                    charges = known[1]
                else:
                    charges = input_charges(limits, room, (shape,))
                    if len(by_shape) < _SHAPES_KEPT:
                        by_shape[id(shape)] = (shape, charges)
            else:
                charges = input_charges(limits, room, [shape_of(values[index]) for index in charged])
            if charges is not None:
                lazy.left, lazy.ticks, lazy.elements, lazy.strings = charges
                if monotonic() >= started + wall_seconds:
                    lazy.meter.check_deadline()  # past the deadline: the meter raises R-TIMEOUT
                return charges[0]
            meter = lazy.meter
            for index in charged:
                meter.shape(shape_of(values[index]))
            meter.check_deadline()
            return max_fuel - meter.fuel_used

        def close(state: RunState, value: Value, error: ErrorInfo | None, fuel: int, ran: bool) -> RunRecord:
            """Close a run that built its run context: the ordinary run's end (``EntryCall.finish``)."""
            run = state.run
            if error is None:
                meter = run.meter
                meter.fuel_used = max_fuel - fuel
                meter.exit_call()
            return finish_run(run, value, error, return_type, "optimized" if ran else backend_name)

        def closed(state: RunState, value: Value, error: ErrorInfo | None, fuel: int, ran: bool) -> Closed:
            """``close`` up to the point where everything the record holds is fixed: the fuel is
            settled, the commands handed over and the timestamp read, as ``EntryCall.finish`` does;
            the usage and audit trail are read from the context later (``FastLane.record``)."""
            run = state.run
            if error is None:
                meter = run.meter
                meter.fuel_used = max_fuel - fuel
                meter.exit_call()
            else:
                value = None
            executed_by = "optimized" if ran else backend_name
            return (
                run,
                value,
                error,
                return_type,
                executed_by,
                audit_clock(),
                run.finish_commands(error is None),
            )

        def host_row(args: Sequence[object], lazy: LazyRunState, run_key: RunKey) -> tuple[Value, ...]:
            """The inputs of a row that is not an exact list or tuple, read as the ordinary path
            reads them: such a row is read by the host's own code (``execution._inputs_tuple`` asks
            it for its length and its items), which may take any time, and the wall budget counts
            it. So the run starts before the row is read and its deadline is checked once the row
            is read (the check before the first statement) - unlike a list or tuple of scalar
            inputs, read in constant time, whose run starts once it is read (spec/semantics.md
            section 11). Only for entries without charged inputs or bounds (``run``, ``many``)."""
            started = monotonic()
            lazy.lazy = (lane, run_key, started)
            values = read_inputs(args)
            if monotonic() >= started + wall_seconds:
                lazy.meter.check_deadline()  # past the deadline: the meter raises R-TIMEOUT
            return values

        recent_get, plan, general = self._recent.get, self.plan_id, self._run
        take = run_number_source()

        # an entry the verifier admitted (rule 25) is handed its event's checked snapshot: its
        # fused reads read it by key, and no map is built unless a read falls back to the exact stubs
        self.projects = self.event_project is not None and self.entry.entrypoint in artifact.projected
        read_event = self.event_project if self.projects else self.event_read

        if first >= 0 and first == event and check_bounds is None and read_event is not None:
            # an entry whose one charged parameter is the event, read by its reader: its own
            # closure (``event_lane``; with other parameters besides, scalars, its row closure)
            steps = EventSteps(
                lane, recent_get, source, general, lambda: LazyRunState(cell[0]), function, read_event,
                one, close, closed, room, wall_seconds, monotonic, self.event_row,
            )  # fmt: skip
            return one, None, event_runner(steps)
        if charged or scoped or check_bounds is not None:
            return one, None, None
        # ``many`` and ``run`` count fuel down from ``start`` (``small_fuel``): ``lift`` more was
        # left than the count says, which a run that built its context adds back when it closes
        start = start_fuel(self.plan, self.entry.entrypoint, function, max_fuel)
        lift = max_fuel - start

        def many(rows: Iterator[Sequence[object]], stop_on_error: bool, bound: _Bound) -> list[LaneRecord]:
            """``one`` over every row, its body written out in the loop (no call per row), for the
            plain case only: no input charged, no bounds, no UTF-16 scope. Must stay in step with
            ``one``: ``tests/host/test_execute_many.py`` compares every row with its ``execute``."""
            done: list[LaneRecord] = []
            keep = done.append
            take = run_number_source()
            state = LazyRunState(bound)
            for args in rows:
                run_key = take()
                fuel = start
                value: Value = None
                error: ErrorInfo | None = None
                ran = False
                try:
                    values = None
                    cls = type(args)
                    if cls is not list and cls is not tuple:
                        values = host_row(args, state, run_key)  # its run started before it was read
                    else:
                        if ints and len(args) == ints:
                            a0, a1 = args[0], args[-1]  # the same input twice for one parameter
                            if not (
                                type(a0) is int and lo0 <= a0 <= hi0 and type(a1) is int and lo1 <= a1 <= hi1
                            ):
                                values = read_inputs(args)
                        else:
                            values = read_inputs(args)
                        state.lazy = (lane, run_key, monotonic())  # the run starts: see ``_runner``
                    ran = True
                    if values is not None:
                        value, fuel = function(state, fuel, depth_left, 0, *values)
                    elif ints == 2:
                        value, fuel = function(state, fuel, depth_left, 0, a0, a1)
                    else:
                        value, fuel = function(state, fuel, depth_left, 0, a0)
                except Exception as exc:
                    error = failure_info(exc)
                if state.lazy is None:  # that run built its context: the next needs a new state
                    if lift and ran:  # only a start short of the worst case builds one here: fail closed
                        value, error = None, SHORT_START
                    keep(close(state, value, error, fuel + lift, ran))
                    state = LazyRunState(bound)
                else:
                    state.work = 0
                    if error is None:
                        keep((run_key, value, None, start - fuel, audit_clock(), True))
                        continue
                    keep((run_key, None, error, 0, audit_clock(), ran))
                if stop_on_error and error is not None:
                    break
            return done

        def run(
            args: Sequence[object],
            run_id: str | None,
            finish: Finish[_Out],
            defer: Callable[[Value, ErrorInfo | None, Compact], _Out] | None = None,
        ) -> _Out | None:
            """``FastLane.run`` while ``artifact`` is the plan's: ``one`` written out, with its result
            (must stay in step with ``one``; the fast-lane tests compare every corpus case)."""
            if recent_get(plan) is not source:
                return general(args, run_id, finish, defer)  # compiled anew, or dropped: rebind
            try:
                state = spares.pop()  # atomic: two threads never share a state
            except IndexError:
                state = LazyRunState(cell[0])
            run_key: RunKey = take() if run_id is None else run_id
            value: Value = None
            error: ErrorInfo | None = None
            fuel = start
            ran = False
            try:
                cls = type(args)
                if ints == 2 and (cls is list or cls is tuple) and len(args) == 2:
                    a0, a1 = args  # a predicate over two integers: its row tested inline, else read
                    if not (type(a0) is int and lo0 <= a0 <= hi0 and type(a1) is int and lo1 <= a1 <= hi1):
                        a0, a1 = read_inputs(args)
                    state.lazy = (lane, run_key, monotonic())  # the run starts: see ``_runner``
                    ran = True
                    value, fuel = function(state, fuel, depth_left, 0, a0, a1)
                else:
                    values = None
                    if cls is not list and cls is not tuple:
                        values = host_row(args, state, run_key)  # its run started before it was read
                    else:
                        if ints == 1 and len(args) == 1:
                            a0 = args[0]
                            if not (type(a0) is int and lo0 <= a0 <= hi0):
                                values = read_inputs(args)
                        else:
                            values = read_inputs(args)
                        state.lazy = (lane, run_key, monotonic())
                    ran = True
                    if values is None:
                        value, fuel = function(state, fuel, depth_left, 0, a0)
                    else:
                        value, fuel = function(state, fuel, depth_left, 0, *values)
            except Exception as exc:
                error = failure_info(exc)
            if state.lazy is None:  # that run built its context: close it (the state is its own)
                if lift and ran:  # only a start short of the worst case builds one here: fail closed
                    value, error = None, SHORT_START
                if defer is None:
                    return finish(*close(state, value, error, fuel + lift, ran))
                held = closed(state, value, error, fuel + lift, ran)
                return defer(held[1], held[2], held)  # type: ignore[arg-type]
            state.lazy = ()
            state.work = 0
            spares.append(state)
            if error is None:
                compact: Compact = (run_key, value, None, start - fuel, audit_clock(), True)
            else:  # nothing was charged: it failed before, or without, any stub
                compact = (run_key, None, error, 0, audit_clock(), ran)
            if defer is not None:
                return defer(compact[1], error, compact)
            return lane.record(compact, finish)

        return one, many, run

    def record(self, compact: Compact | Counted | Closed, finish: Finish[_Out] | None = None) -> _Out:
        """The ``RunRecord`` fields of a compact run, handed to ``finish`` (default: the record
        itself): what ``EntryCall.finish`` gives for a run that consumed fuel only (the shared
        usage record, no commands, no binding calls, an audit trail of just its ``RunSummary``,
        built when read), or, for a ``Counted`` run, fuel and its other counters (the usage record
        its meter would have given). A ``Closed`` run's record is read from its context
        (``EntryCall.closed_record``)."""
        size = len(compact)
        if size == 7:
            record = self.entry.closed_record(*compact)
            return (finish or _as_record)(*record)
        if size == 8:
            run_key, value, error, used, stamp, ran, elements, strings = compact  # type: ignore[misc]
            usage = ResourceUsage(
                fuel_used=used,
                max_fuel=self.max_fuel,
                allocated_bytes=strings,  # the allocation is the text bytes (``Counted``)
                collection_elements=elements,
                string_bytes=strings,
            )
        else:
            run_key, value, error, used, stamp, ran = compact  # type: ignore[misc]
            usage = fuel_only_usage(self.usage_memo, used, self.max_fuel)
        run_id = run_key if type(run_key) is str else run_id_text(run_key)  # type: ignore[arg-type]
        executed_by = "optimized" if ran else self.backend_name
        events = AuditTrail((), self.summary_builder, (run_id, stamp, 0, executed_by, error, usage))
        return (finish or _as_record)(
            run_id, value, error, usage, events, (), NO_CALLS, self.return_type, executed_by
        )


_Out = TypeVar("_Out")
Finish = Callable[
    [str, Value, "ErrorInfo | None", ResourceUsage, AuditTrail, tuple[Any, ...], Mapping[str, int], Any, str],
    _Out,
]
"""What a lane hands a finished run's ``RunRecord`` fields to, in order (a result constructor)."""


def _as_record(*fields: Any) -> Any:
    """The ``Finish`` that gives the ``RunRecord`` tuple itself."""
    return fields


_SHAPES_KEPT = 256
"""Most input shapes whose charges a lane keeps (``_runner``'s ``charge_inputs``): as many as
``core.values.text_keyed_map_shape`` shares."""

_INLINE_INT = (1 << 30) - 1
"""The largest magnitude of a CPython one-digit integer (``_runner``'s inline row test)."""


def _inline_range(limits: tuple[int, int]) -> tuple[int, int]:
    """``limits`` clipped to the one-digit integers (see ``_runner``)."""
    return max(limits[0], -_INLINE_INT), min(limits[1], _INLINE_INT)
