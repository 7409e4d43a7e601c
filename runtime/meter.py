"""The meter: enforces every resource limit of a run and records its ``ResourceUsage``.

Why one class: both backends and every facade charge through it, so a limit means the same
everywhere. Amounts come from ``dotboxd.core.costs``; this module only counts and refuses.

Boundary rule (every limit): a charge that would bring a counter to N, where N is the limit, is
allowed; one that would bring it to N + 1 is refused, and the run stops at exactly that charge.
What the usage then shows depends on the kind of counter (DotBoxD reports it this way):

* the *attempt counters* - ``hostCalls`` (and a binding's own call count), ``loopIterations`` and
  ``logEvents`` - count the refused attempt too: with ``maxHostCalls = 1`` the second call fails
  and ``hostCalls`` is 2;
* the *amount counters* - fuel, allocation, string bytes, collection elements, file and network
  bytes - do not record the refused amount, so they stay within their limit.

Time and cancellation (spec/costs.md section 8): cancellation is checked on every charge; the wall-time
deadline on every 64th fuel charge, every 4096th loop charge and at binding checkpoints.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Final

from dotboxd.core import costs
from dotboxd.core.codes import all_codes
from dotboxd.core.limits import LIMIT_BY_NAME, LIMITS, Limits, LimitSpec
from dotboxd.core.values import SCALAR_SHAPE, Shape, frozen_constructor
from dotboxd.runtime.errors import SandboxError

DEFAULT_WALL_TIME_MS = LIMIT_BY_NAME["max_wall_time_ms"].default
MAX_WALL_TIME_MS = LIMIT_BY_NAME["max_wall_time_ms"].ceiling
USAGE_MEMO_SIZE = 256

# the cost-table constants read on every charge, bound once (a module attribute read per charge shows
# in the reference interpreter, which charges fuel for every node it evaluates)
_DEADLINE_EVERY_FUEL_CHARGES: Final = costs.DEADLINE_EVERY_FUEL_CHARGES
_DEADLINE_EVERY_LOOP_CHARGES: Final = costs.DEADLINE_EVERY_LOOP_CHARGES
_LOOP_ITERATION_COUNT: Final = costs.LOOP_ITERATION_COUNT
_LOOP_ITERATION_FUEL: Final = costs.LOOP_ITERATION_FUEL
_CALL_DEPTH_STEP: Final = costs.CALL_DEPTH_STEP
_HOST_CALL_COUNT: Final = costs.HOST_CALL_COUNT

STATE_COUNTERS: Final = (
    "fuel_used",
    "loop_iterations",
    "allocated_bytes",
    "call_depth",
    "host_calls",
    "file_bytes_read",
    "file_bytes_written",
    "network_bytes_read",
    "network_bytes_written",
    "log_events",
    "collection_elements",
    "string_bytes",
    "_fuel_ticks",
    "_loop_ticks",
)
"""The integer counters ``Meter.state`` carries (``calls_by_binding`` goes with them): the deadline
check's tick counters too, so the deadline is looked at on the same charges wherever a run goes on."""


@dataclass(frozen=True, slots=True)
class MeterLimits(Limits):
    """The limits a meter enforces: the core limit table's ``Limits`` (one declaration of every
    limit, its default and its ceiling), refused at construction when any is out of range."""

    def __post_init__(self) -> None:
        self.checked()

    @classmethod
    def from_object(cls, limits: object) -> MeterLimits:
        """The meter's copy of a policy's limits: every limit of the table, read by name (a missing
        one is an AttributeError, never a silent default)."""
        return cls(**{spec.name: getattr(limits, spec.name) for spec in LIMITS})


@dataclass(frozen=True, slots=True)
class ResourceUsage:
    """What a run consumed (DotBoxD's ``SandboxResourceUsage``, every field)."""

    fuel_used: int = 0
    max_fuel: int = 0
    loop_iterations: int = 0
    allocated_bytes: int = 0
    host_calls: int = 0
    file_bytes_read: int = 0
    file_bytes_written: int = 0
    network_bytes_read: int = 0
    network_bytes_written: int = 0
    log_events: int = 0
    collection_elements: int = 0
    string_bytes: int = 0

    def to_json(self) -> dict[str, int]:
        """camelCase keys, as in the conformance ``usage`` object."""
        return {_camel(f.name): getattr(self, f.name) for f in fields(self)}


_new_usage = frozen_constructor(ResourceUsage)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class CancelToken:
    """A host-side switch: ``cancel()`` makes the run stop at its next charge with Cancelled."""

    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _NeverCancelled(CancelToken):
    """The token of every run whose host passed none: shared, so it refuses to be cancelled (a
    host that wants to cancel a run passes its own ``CancelToken``)."""

    __slots__ = ()

    def __init__(self) -> None:
        object.__setattr__(self, "cancelled", False)

    def cancel(self) -> None:
        raise RuntimeError("this run has no cancel token of its own; pass one to be able to cancel it")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("the shared no-cancel token cannot change")


_NOT_CANCELLABLE = _NeverCancelled()


_FILE_READ: Final = LIMIT_BY_NAME["max_file_bytes_read"]
_FILE_WRITE: Final = LIMIT_BY_NAME["max_file_bytes_written"]
_NETWORK_READ: Final = LIMIT_BY_NAME["max_network_bytes_read"]
_NETWORK_WRITE: Final = LIMIT_BY_NAME["max_network_bytes_written"]
_EXHAUSTED: Final = {
    spec.quota_code: all_codes()[spec.quota_code].summary
    for spec in (_FILE_READ, _FILE_WRITE, _NETWORK_READ, _NETWORK_WRITE)
}
"""The run error's message at each table-driven limit: the code registry's summary of its code."""


def _quota(code: str, message: str) -> SandboxError:
    return SandboxError(code, message)


class Meter:
    """Counts one run's consumption against ``MeterLimits``; raises SandboxError on exhaustion."""

    __slots__ = (
        "_cancel",
        "_clock",
        "_deadline",
        "_fuel_ticks",
        "_loop_ticks",
        "allocated_bytes",
        "call_depth",
        "calls_by_binding",
        "collection_elements",
        "file_bytes_read",
        "file_bytes_written",
        "fuel_used",
        "host_calls",
        "limits",
        "log_events",
        "loop_iterations",
        "max_fuel",
        "network_bytes_read",
        "network_bytes_written",
        "string_bytes",
    )

    def __init__(
        self,
        limits: MeterLimits,
        cancel: CancelToken | None = None,
        clock: Callable[[], float] = time.monotonic,
        started: float | None = None,
    ) -> None:
        """``started`` is when the run began on ``clock`` (default: now): the wall-time budget counts
        from there, also for a meter built part way through a run (the optimized fast lane builds
        one only when the run first needs it)."""
        # one store per slot and nothing else: a meter is built for every run, so its construction is
        # on the per-call path (the deadline is ``wall_time_ms`` spelled out, without the property call)
        self.limits = limits
        self.max_fuel = limits.max_fuel
        self._cancel = _NOT_CANCELLABLE if cancel is None else cancel
        self._clock = clock
        wall_ms = limits.max_wall_time_ms
        self._deadline = (clock() if started is None else started) + (
            DEFAULT_WALL_TIME_MS if wall_ms is None else wall_ms
        ) / 1000.0
        self._fuel_ticks = 0
        self._loop_ticks = 0
        self.fuel_used = 0
        self.loop_iterations = 0
        self.allocated_bytes = 0
        self.call_depth = 0
        self.host_calls = 0
        self.calls_by_binding: dict[str, int] = {}
        self.file_bytes_read = 0
        self.file_bytes_written = 0
        self.network_bytes_read = 0
        self.network_bytes_written = 0
        self.log_events = 0
        self.collection_elements = 0
        self.string_bytes = 0

    # --- time and cancellation -------------------------------------------------------------

    def check_cancelled(self) -> None:
        if self._cancel.cancelled:
            raise SandboxError("R-CANCELLED", "the run was cancelled")

    def check_deadline(self) -> None:
        """Timeout if the wall-time budget is spent (also checks cancellation)."""
        self.check_cancelled()
        if self._clock() >= self._deadline:
            raise SandboxError("R-TIMEOUT", "wall-time budget exhausted")

    def remaining_seconds(self) -> float:
        """Wall time left (Timeout if none): the bound given to blocking bindings."""
        remaining = self._deadline - self._clock()
        if remaining <= 0:
            raise SandboxError("R-TIMEOUT", "wall-time budget exhausted")
        return remaining

    def seconds_left(self) -> float:
        """Wall time left, negative once the deadline passed (never raises): what a host tells
        an isolated worker that goes on with the run (``deadline_in``)."""
        return self._deadline - self._clock()

    def deadline_in(self, seconds: float) -> None:
        """Move the deadline to ``seconds`` from now (the worker's side of ``seconds_left``)."""
        self._deadline = self._clock() + seconds

    # --- fuel and loops --------------------------------------------------------------------

    def fuel_remaining(self) -> int:
        """Fuel still available to the run (``max_fuel - fuel_used``, never negative)."""
        return self.max_fuel - self.fuel_used

    def set_fuel_used(self, used: int) -> None:
        """Set the fuel counter to ``used`` (0 <= used <= max_fuel): for a backend that keeps the
        fuel in a local while it runs compiled code and writes it back before anything else reads or
        charges the meter. It records, it does not charge: no cancellation or deadline check, no
        refusal beyond the range check (exhaustion is the backend's own charge to detect, through
        ``fuel``). Together with ``fuel_remaining`` it is the supported way to keep such a local in
        step with the meter."""
        if type(used) is not int or not 0 <= used <= self.max_fuel:
            raise ValueError("fuel used must be an integer in [0, max_fuel]")
        self.fuel_used = used

    def fuel(self, amount: int) -> None:
        """Charge ``amount`` fuel (cancellation every charge, deadline every 64th)."""
        if self._cancel.cancelled:
            raise SandboxError("R-CANCELLED", "the run was cancelled")
        used = self.fuel_used + amount
        if used > self.max_fuel:
            raise _quota("R-QUOTA-FUEL", "fuel exhausted")
        self.fuel_used = used
        ticks = self._fuel_ticks + 1
        if ticks >= _DEADLINE_EVERY_FUEL_CHARGES:
            self._fuel_ticks = 0
            if self._clock() >= self._deadline:
                raise SandboxError("R-TIMEOUT", "wall-time budget exhausted")
        else:
            self._fuel_ticks = ticks

    def loop_iteration(self) -> None:
        """One loop iteration: a unit of the loop budget, then the iteration's fuel."""
        if self._cancel.cancelled:
            raise SandboxError("R-CANCELLED", "the run was cancelled")
        count = self.loop_iterations + _LOOP_ITERATION_COUNT
        self.loop_iterations = count  # an attempt counter: the refused iteration counts too
        if count > self.limits.max_loop_iterations:
            raise _quota("R-QUOTA-LOOP", "loop iteration budget exhausted")
        ticks = self._loop_ticks + 1
        if ticks >= _DEADLINE_EVERY_LOOP_CHARGES:
            self._loop_ticks = 0
            self.check_deadline()
        else:
            self._loop_ticks = ticks
        self.fuel(_LOOP_ITERATION_FUEL)

    # --- calls -----------------------------------------------------------------------------

    def enter_call(self) -> None:
        depth = self.call_depth + _CALL_DEPTH_STEP
        if depth > self.limits.max_call_depth:
            raise _quota("R-QUOTA-CALL-DEPTH", "call depth exceeded")
        self.call_depth = depth

    def exit_call(self) -> None:
        if self.call_depth > 0:
            self.call_depth -= _CALL_DEPTH_STEP

    def host_call(self, binding_id: str, max_calls_per_run: int | None) -> None:
        """One host-binding call (a pure built-in's too): the run's MaxHostCalls, then the
        binding's maxCallsPerRun. Attempt counters: each is counted before it is checked, so a
        refused call shows in ``host_calls`` (and, if it got that far, in the binding's count)."""
        self.check_cancelled()
        total = self.host_calls + costs.HOST_CALL_COUNT
        self.host_calls = total
        if total > self.limits.max_host_calls:
            raise _quota("R-QUOTA-HOST-CALLS", f"host call budget exhausted at {binding_id}")
        calls = self.calls_by_binding.get(binding_id, 0) + costs.HOST_CALL_COUNT
        self.calls_by_binding[binding_id] = calls
        if max_calls_per_run is not None and calls > max_calls_per_run:
            raise _quota("R-QUOTA-BINDING-CALLS", f"binding call budget exhausted at {binding_id}")

    def host_call_fits(self) -> bool:
        """Whether one more host call is within MaxHostCalls (and the run is not cancelled);
        changes nothing. For the optimized backend's all-at-once paths of the built-ins that
        count as host calls (they have no maxCallsPerRun); on True they settle their other charges
        and then ``host_call``, which cannot refuse."""
        return self.host_calls < self.limits.max_host_calls and not self._cancel.cancelled

    # --- memory and value shapes ----------------------------------------------------------

    def alloc(self, amount: int) -> None:
        if self._cancel.cancelled:
            raise SandboxError("R-CANCELLED", "the run was cancelled")
        total = self.allocated_bytes + amount
        if total > self.limits.max_allocated_bytes:
            raise _quota("R-QUOTA-ALLOCATION", "allocation budget exhausted")
        self.allocated_bytes = total

    def list_length(self, length: int) -> None:
        """Refuse, before it is built, a list longer than MaxListLength (``string.split``: the
        number of pieces is known from one scan, so the pieces are never made for nothing). The
        new list's ``shape`` charge still follows; this check charges nothing."""
        if length > self.limits.max_list_length:
            raise _quota("R-QUOTA-LIST-LENGTH", "list length budget exhausted")

    def shape(self, shape: Shape) -> None:
        """Charge a newly created value: walk fuel, then each shape limit, then its elements,
        then its text (longest string, allocation and total string bytes)."""
        if shape is SCALAR_SHAPE:
            return  # a scalar's shape is within every limit and costs nothing (0 nodes // 64)
        walk = costs.shape_walk_fuel(shape.nodes)
        if walk:
            self.fuel(walk)
        limits = self.limits
        if shape.max_list > limits.max_list_length:
            raise _quota("R-QUOTA-LIST-LENGTH", "list length budget exhausted")
        if shape.max_map > limits.max_map_entries:
            raise _quota("R-QUOTA-MAP-ENTRIES", "map entry budget exhausted")
        if shape.depth > limits.max_collection_depth:
            raise _quota("R-QUOTA-COLLECTION-DEPTH", "collection depth budget exhausted")
        if shape.elements:
            total = self.collection_elements + shape.elements
            if total > limits.max_total_collection_elements:
                raise _quota("R-QUOTA-COLLECTION-ELEMENTS", "collection element budget exhausted")
            self.collection_elements = total
        self.text(shape.max_string, shape.string_bytes)

    def text(self, max_length16: int, total_bytes: int) -> None:
        """Charge text: the longest string against MaxStringLength, the bytes as allocation and
        against MaxTotalStringBytes."""
        if max_length16 > self.limits.max_string_length:
            raise _quota("R-QUOTA-STRING-LENGTH", "string length budget exhausted")
        if total_bytes:
            total = self.string_bytes + total_bytes
            if total > self.limits.max_total_string_bytes:
                raise _quota("R-QUOTA-STRING-BYTES", "string byte budget exhausted")
            self.alloc(total_bytes)
            self.string_bytes = total

    # --- all-at-once settlement (for a backend that keeps the fuel in a local) --------------
    # The stepwise charges above raise at the first refusal. A backend that keeps the remaining fuel
    # in a local (the optimized backend) may instead ask whether *all* the charges of one operation
    # would succeed and apply them in one step; on False nothing has changed and it must make the
    # stepwise charges, which then fail exactly where the reference interpreter fails. Each
    # ``settle_*`` mirrors a sequence of the methods above (every check is an upper bound on a
    # monotone counter, so checking final totals is checking each step). The fuel itself stays in
    # the caller's local: ``fuel_after`` is what is left once the operation's ``charges`` fuel
    # charges are paid (negative: they do not fit). A charge that falls on the deadline check (every
    # ``DEADLINE_EVERY_FUEL_CHARGES``-th) reads the clock here as ``fuel`` would (``_settled_ticks``):
    # a spent budget declines (the stepwise path then raises R-TIMEOUT at that very charge), so the
    # hot loops of the optimized backend no longer leave their fast path once every 32 calls.

    def _settled_ticks(self, fuel_after: int, charges: int) -> int:
        """What every ``settle_*`` checks first: the fuel fits (``fuel_after`` >= 0) and the run is
        not cancelled; then the deadline-check cycle after ``charges`` more fuel charges (each at
        most one cycle long): ``fuel``'s own counting, with its clock read when a charge lands on the
        check. -1 when any of these declines (nothing changed)."""
        if fuel_after < 0 or self._cancel.cancelled:
            return -1
        ticks = self._fuel_ticks + charges
        if ticks < _DEADLINE_EVERY_FUEL_CHARGES:
            return ticks
        if self._clock() >= self._deadline:
            return -1
        return ticks - _DEADLINE_EVERY_FUEL_CHARGES

    def _host_call_settled(self, binding_id: str) -> None:
        """Count one host call of ``binding_id`` that ``host_call_fits`` allowed (``host_call``
        without its checks: a pure built-in has no maxCallsPerRun)."""
        self.host_calls += _HOST_CALL_COUNT
        calls = self.calls_by_binding
        calls[binding_id] = calls.get(binding_id, 0) + _HOST_CALL_COUNT

    def settle_fuel(self, fuel_after: int, charges: int) -> bool:
        """``charges`` plain ``fuel`` charges leaving ``fuel_after``; True when applied."""
        ticks = self._settled_ticks(fuel_after, charges)
        if ticks < 0:
            return False
        self._fuel_ticks = ticks
        return True

    def settle_call(self, binding_id: str, fuel_after: int, charges: int) -> bool:
        """``host_call(binding_id, None)`` then ``charges`` plain ``fuel`` charges leaving
        ``fuel_after`` (a constant-cost pure built-in); True when applied."""
        if self.host_calls >= self.limits.max_host_calls or not self.settle_fuel(fuel_after, charges):
            return False
        self._host_call_settled(binding_id)
        return True

    def settle_value(self, fuel_after: int, charges: int, alloc: int, shape: Shape) -> bool:
        """``charges`` fuel charges, ``alloc(alloc)``, then ``shape(shape)`` whose walk fuel the
        caller included in ``charges`` and ``fuel_after``; True when applied."""
        ticks = self._settled_ticks(fuel_after, charges)
        if ticks < 0:
            return False
        limits = self.limits
        text_bytes = shape.string_bytes
        allocated = self.allocated_bytes + alloc + text_bytes
        elements = self.collection_elements + shape.elements
        strings = self.string_bytes + text_bytes
        if (
            allocated > limits.max_allocated_bytes
            or shape.max_list > limits.max_list_length
            or shape.max_map > limits.max_map_entries
            or shape.depth > limits.max_collection_depth
            or elements > limits.max_total_collection_elements
            or shape.max_string > limits.max_string_length
            or strings > limits.max_total_string_bytes
        ):
            return False
        self._fuel_ticks = ticks
        self.allocated_bytes = allocated
        self.collection_elements = elements
        self.string_bytes = strings
        return True

    def settle_text_call(self, binding_id: str, fuel_after: int, charges: int, length16: int) -> bool:
        """``host_call(binding_id, None)``, then ``settle_text`` (a pure built-in that builds one text:
        ``string.concatBudgeted``, ``int32.toStringInvariant``); True when applied. One call where the
        text builders asked ``host_call_fits``, settled the text, then made the host call."""
        if self.host_calls >= self.limits.max_host_calls or not self.settle_text(
            fuel_after, charges, length16
        ):
            return False
        self._host_call_settled(binding_id)
        return True

    def settle_flat_list(self, fuel_after: int, charges: int, alloc: int, count: int) -> bool:
        """``settle_value`` for a new list of ``count`` scalars (its shape ``flat_list_shape(count)``:
        ``count`` elements and longest list, depth 1, no map, no text), without the shape record
        (``list.add`` of a scalar onto a flat list builds none: ``ListValue`` keeps such shapes
        implicit); True when applied."""
        ticks = self._settled_ticks(fuel_after, charges)
        if ticks < 0:
            return False
        limits = self.limits
        allocated = self.allocated_bytes + alloc
        elements = self.collection_elements + count
        if (
            allocated > limits.max_allocated_bytes
            or count > limits.max_list_length
            or limits.max_collection_depth < 1
            or elements > limits.max_total_collection_elements
        ):
            return False
        self._fuel_ticks = ticks
        self.allocated_bytes = allocated
        self.collection_elements = elements
        return True

    def settle_text(self, fuel_after: int, charges: int, length16: int) -> bool:
        """``settle_value`` for one new text of ``length16`` UTF-16 units (its shape: one node, no
        elements, depth 0, its bytes charged as allocation and string bytes), without building the
        shape record; True when applied."""
        ticks = self._settled_ticks(fuel_after, charges)
        if ticks < 0:
            return False
        limits = self.limits
        text_bytes = costs.string_bytes(length16)
        allocated = self.allocated_bytes + text_bytes
        strings = self.string_bytes + text_bytes
        if (
            length16 > limits.max_string_length
            or strings > limits.max_total_string_bytes
            or allocated > limits.max_allocated_bytes
        ):
            return False
        self._fuel_ticks = ticks
        self.allocated_bytes = allocated
        self.string_bytes = strings
        return True

    def settle_owned(self, alloc: int, elements: int, charges: int) -> None:
        """Record charges that the caller has already proved fit: the optimized backend's owned
        lists (spec/optimized.md, owned collections) check every limit of their adds inline
        against a room computed from this meter, and settle the allocation, collection elements
        and deadline cadence of the adds done since the last settlement here. No clock read: the
        bulk chunk's reservation is the deadline check of the work it covers."""
        self.allocated_bytes += alloc
        self.collection_elements += elements
        self._fuel_ticks = (self._fuel_ticks + charges) % _DEADLINE_EVERY_FUEL_CHARGES

    def settle_owned_text(self, text_bytes: int, charges: int, calls: tuple[tuple[str, int], ...]) -> None:
        """Record charges that the caller has already proved fit: the optimized backend's owned
        strings (spec/optimized.md, owned strings) check host calls, string length, string bytes
        and allocation inline against rooms taken from this meter, and settle here the new texts'
        bytes (string bytes and the same allocation), the host calls by built-in (``calls``, in the
        order the reference first makes them) and the deadline cadence of their fuel charges. No
        clock read: the bulk chunk's reservation is the deadline check of the work it covers."""
        self.string_bytes += text_bytes
        self.allocated_bytes += text_bytes
        self._fuel_ticks = (self._fuel_ticks + charges) % _DEADLINE_EVERY_FUEL_CHARGES
        by_binding = self.calls_by_binding
        for binding_id, count in calls:
            self.host_calls += count
            by_binding[binding_id] = by_binding.get(binding_id, 0) + count

    # --- facade counters (file, network, log) ---------------------------------------------

    def file_read(self, amount: int) -> None:
        self._charge_amount(_FILE_READ, amount)

    def file_write(self, amount: int) -> None:
        self._charge_amount(_FILE_WRITE, amount)

    def network_read(self, amount: int) -> None:
        self._charge_amount(_NETWORK_READ, amount)

    def network_write(self, amount: int) -> None:
        self._charge_amount(_NETWORK_WRITE, amount)

    def _charge_amount(self, spec: LimitSpec, amount: int) -> None:
        """Raise the amount counter of ``spec`` (the limit table's ``counter``) by ``amount``,
        unless that passes the limit: then its quota code, and the counter is unchanged. Read
        from the table, not spelt per counter; kept to the facade counters, whose charges are
        rare next to the I/O they meter (fuel, loops and allocation stay spelt out: they are the
        hot path)."""
        counter = spec.counter
        assert counter is not None
        total = getattr(self, counter) + amount
        if total > getattr(self.limits, spec.name):
            raise _quota(spec.quota_code, _EXHAUSTED[spec.quota_code])
        setattr(self, counter, total)

    def log_event(self, message_length16: int) -> None:
        if message_length16 > self.limits.max_log_message_length:
            raise _quota("R-QUOTA-LOG-MESSAGE", "log message length budget exhausted")
        total = self.log_events + 1
        self.log_events = total  # an attempt counter: the refused event counts too
        if total > self.limits.max_log_events:
            raise _quota("R-QUOTA-LOG-EVENTS", "log event budget exhausted")

    def take_pending(
        self, fuel_used: int, fuel_ticks: int, allocated: int, elements: int, strings: int
    ) -> None:
        """Start from charges a run settled before this meter existed (the optimized fast lane's
        ``pending``: its inputs' shapes and its text literals, all within the limits, the
        cadence not yet at a deadline check): the counters as the same charges made here would
        have left them. A fresh meter only (its counters are overwritten)."""
        self.fuel_used = fuel_used
        self._fuel_ticks = fuel_ticks
        self.allocated_bytes = allocated
        self.collection_elements = elements
        self.string_bytes = strings

    # --- state transfer (a run split across two processes) ------------------------------

    def state(self) -> dict[str, Any]:
        """Every counter of the run so far, as JSON-ready data: what an isolated worker and its host
        exchange at each binding call (``dotboxd.isolation.kernel_worker``), so the side that goes
        on counting starts exactly where the other stopped. The limits, the deadline and the cancel
        token are not state: each side has its own."""
        out: dict[str, Any] = {name: getattr(self, name) for name in STATE_COUNTERS}
        out["calls_by_binding"] = dict(self.calls_by_binding)
        return out

    def load_state(self, state: dict[str, Any]) -> None:
        """Take over ``state`` (from ``state`` on the other side). Refuses (ValueError, nothing
        changed) a counter that is not a non-negative integer or a per-binding count map that is
        not ``{str: int}``; whether the values are plausible is the caller's check
        (``dotboxd.host.worker_relay``), which knows what it can trust."""
        if set(state) != {*STATE_COUNTERS, "calls_by_binding"}:
            raise ValueError("meter state has the wrong keys")
        counters = [state[name] for name in STATE_COUNTERS]
        calls = state["calls_by_binding"]
        if any(type(value) is not int or value < 0 for value in counters):
            raise ValueError("meter counters are non-negative integers")
        if not isinstance(calls, dict) or any(
            type(k) is not str or type(v) is not int or v < 0 for k, v in calls.items()
        ):
            raise ValueError("per-binding call counts are a map of non-negative integers")
        if state["fuel_used"] > self.max_fuel:
            raise ValueError("fuel used is over the run's maximum")
        for name, value in zip(STATE_COUNTERS, counters, strict=True):
            setattr(self, name, value)
        self.calls_by_binding = dict(calls)

    # --- reporting -------------------------------------------------------------------------

    def usage(self, memo: dict[int, ResourceUsage] | None = None) -> ResourceUsage:
        """The run's consumption so far. With ``memo`` (records by fuel used, all for this meter's
        ``max_fuel``: one memo per limits) a run that consumed nothing but fuel - most runs of small
        pure kernels - gets the equal record an earlier such run got (records are immutable), not a
        new one. No record is added to a memo that holds ``USAGE_MEMO_SIZE`` of them."""
        if memo is not None and not (
            self.loop_iterations
            or self.allocated_bytes
            or self.collection_elements
            or self.string_bytes
            or self.host_calls
            or self.file_bytes_read
            or self.file_bytes_written
            or self.network_bytes_read
            or self.network_bytes_written
            or self.log_events
        ):
            return fuel_only_usage(memo, self.fuel_used, self.max_fuel)
        return _new_usage(
            self.fuel_used,
            self.max_fuel,
            self.loop_iterations,
            self.allocated_bytes,
            self.host_calls,
            self.file_bytes_read,
            self.file_bytes_written,
            self.network_bytes_read,
            self.network_bytes_written,
            self.log_events,
            self.collection_elements,
            self.string_bytes,
        )


def fuel_only_usage(memo: dict[int, ResourceUsage], fuel_used: int, max_fuel: int) -> ResourceUsage:
    """The usage record of a run that consumed nothing but ``fuel_used`` fuel, shared through
    ``memo`` (records by fuel used, all for this ``max_fuel``; see ``Meter.usage``): records are
    immutable, so equal ones need not be built twice. No record is added to a full memo."""
    found = memo.get(fuel_used)
    if found is None:
        found = _new_usage(fuel_used, max_fuel)
        if len(memo) < USAGE_MEMO_SIZE:
            memo[fuel_used] = found
    return found
