"""The run-time stub table: the only outside names generated code can call.

Generated functions keep the remaining fuel in a local (``f``) and never touch the meter; every
operation that needs the meter, the run context or a shared definition goes through one of these
stubs, which first write the exact fuel back to the meter (``sync``), then call the single
definition (``runtime.meter``, ``runtime.intrinsics``, ``runtime.binding_call``, ``core.arith``,
``core.values``) and hand the new fuel back. So fuel, failure points and every ``ResourceUsage``
field are those of the reference interpreter, because they are computed by the same code.

``lref`` ("loop refund") is non-zero only inside a bulk loop chunk: the chunk reserved ``n``
iterations in the meter up front, and a failure inside it must give back the ones not started.

Every stub takes the run's ``RunState`` first; the generated code cannot read it (no attribute
access is allowed), only pass it along.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from dotboxd.core import arith, costs
from dotboxd.core.values import (
    ListValue,
    SandboxFault,
    Shape,
    Value,
    flat_list_over,
    shape_of,
    utf16_len,
    values_equal,
)
from dotboxd.runtime.binding_call import call_binding
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.intrinsics import CONCAT_CHARGES, INTRINSICS, Intrinsic
from dotboxd.runtime.locations import locate_ordinal
from dotboxd.runtime.meter import Meter
from dotboxd.runtime.optimized.block_stubs import make_block_stubs
from dotboxd.runtime.optimized.fastops import FAST_PATHS, concat_charges, list_buffer, list_size, text_literal
from dotboxd.runtime.optimized.literal_reads import literal_read_stubs
from dotboxd.runtime.optimized.mapchunk_stubs import chunk_fits, overshot
from dotboxd.runtime.optimized.owned_map_stubs import (
    OwnedMap,
    owned_map_exact,
    owned_map_value,
    settle_owned_map,
    take_owned_map,
    take_text_keyed_map,
)
from dotboxd.runtime.optimized.settle_checks import check_list_settlement
from dotboxd.runtime.optimized.text_chunk import done as text_chunk_done
from dotboxd.runtime.optimized.text_chunk import fits as text_chunk_fits
from dotboxd.runtime.optimized.text_parts import TextParts, exact_fallbacks, literal_text
from dotboxd.runtime.optimized.text_parts import materialize as materialize_text
from dotboxd.runtime.optimized.text_parts import settle as settle_text
from dotboxd.runtime.optimized.text_parts import take as take_text
from dotboxd.runtime.optimized.work import CHUNK_WORK, chunk_limit, heavy_weight, iteration_units

CHUNK: Final = 2048
"""Most iterations one bulk reservation covers: the deadline and cancellation are checked at least
this often in a bulk loop, and more often when one iteration's real work is large
(``work.chunk_limit``); in per-iteration loops the meter checks them as in the reference."""

FAULT_OPS: Mapping[str, Callable[..., Any]] = MappingProxyType(
    {
        **{f"{op}_i32": fn for op, fn in arith.ARITH_I32.items()},
        **{f"{op}_i64": fn for op, fn in arith.ARITH_I64.items()},
        **{f"{op}_f64": fn for op, fn in arith.ARITH_F64.items()},
        "neg_i32": arith.neg_i32,
        "neg_i64": arith.neg_i64,
        "abs_i32": arith.abs_i32,
        "clamp_i32": arith.clamp_i32,
        "sqrt_f64": arith.sqrt_f64,
    }
)
"""Operations a fault site may call: the single definitions in ``core.arith``. Generated code checks
the common case inline and calls one of these only when the check fails; the definition then raises
the canonical fault (or, where the inline check was only conservative, returns the value)."""


class RunState:
    """Per-run state the stubs need: the meter, the run context and the artifact's resolved tables."""

    __slots__ = (
        "bindings",
        "chunk",
        "lazy",
        "meter",
        "nodes",
        "owned",
        "owned_map",
        "owned_text",
        "run",
        "sites",
        "texts",
        "totals",
        "work",
    )

    def __init__(
        self,
        run: RunContext,
        sites: tuple[Any, ...],
        totals: tuple[int, ...],
        texts: tuple[tuple[Value, Shape], ...],
        bindings: tuple[str, ...],
        nodes: tuple[int, ...] = (),
    ) -> None:
        self.run = run
        self.meter: Meter = run.meter
        self.sites = sites
        self.totals = totals
        self.texts = texts
        self.bindings = bindings
        self.nodes = nodes
        """Site -> operation ordinal (``Tables.resolved_site_nodes``): where a failure is located."""
        self.chunk: tuple[int, int, int, int] = (0, 0, 0, 0)
        """(start, size, caller's refund, work units per iteration) of the fast chunk running now
        (``reserve``)."""
        self.work = 0
        """Work units since the last deadline check: function entries (``tick``) and the
        iterations of fast chunks (``reserve``, less what ``give_back`` returns)."""
        self.lazy: Any = None
        """What a ``fastlane.LazyRunState`` builds its run context from while it is armed; None
        once the context exists (always, for a state built with one)."""
        self.owned: list[Any] | None = None
        """[buffer, settled size] of the owned list a bulk loop is appending to in place, or None
        (``take_owned``): ``sync`` settles its adds before anything reads the meter."""
        self.owned_map: OwnedMap | None = None
        """The owned map a bulk loop is updating as a dict, or None (``owned_map_stubs``)."""
        self.owned_text: TextParts | None = None
        """The parts of the text a bulk loop is building (``text_parts.take``), or None: ``sync``
        settles its concatenations before anything reads the meter."""


def settle_pending(state: RunState, meter: Meter) -> None:
    """Settle whatever owned value a bulk loop holds (a list's adds, a map's updates, a text's
    pieces) before anything reads the meter. Callers test the three fields first, so a loop that owns
    nothing pays no call."""
    if state.owned is not None:
        settle_owned(state)
    if state.owned_map is not None:
        settle_owned_map(state)
    if state.owned_text is not None:
        settle_text(meter, state.owned_text)


def sync(state: RunState, f: int, lref: int) -> Meter:
    """Write the exact fuel back to the meter and give back unused reserved loop iterations."""
    meter = state.meter
    meter.fuel_used = meter.max_fuel - f
    if lref:
        meter.loop_iterations -= lref
    if state.owned is not None or state.owned_map is not None or state.owned_text is not None:
        settle_pending(state, meter)
    return meter


def pay(state: RunState, f: int, lref: int, site: int) -> int:
    """Pay the fuel segment ``site`` that a stub call closes (exactly, see ``exhaust``)."""
    total = state.totals[site]
    if total:
        f -= total
        if f < 0:
            exhaust(state, f, lref, site)
    return f


def _internal(message: str) -> SandboxError:
    return SandboxError("R-HOST-INTERNAL", message)


# --- fuel exhaustion, faults, call depth -----------------------------------------------------


def exhaust(state: RunState, f_after: int, lref: int, site: int) -> None:
    """A segment's fuel does not fit (``f_after`` < 0 once it is paid): replay its charges one by one
    through the meter, which raises at exactly the charge the reference interpreter refuses."""
    charges = state.sites[site]
    meter = sync(state, f_after + sum(charges), lref)
    for amount in charges:
        meter.fuel(amount)
    raise _internal("fuel check disagreed with the meter")


def _locate(state: RunState, error: Exception, site: int) -> None:
    """Locate a run-time error raised at ``site`` at its operation node (``runtime.locations``)."""
    nodes = state.nodes
    if isinstance(error, SandboxFault) and site < len(nodes):
        locate_ordinal(error, state.run.plan.module, nodes[site])


FAULT_ARITIES: Final = (1, 2, 3)
"""The operand counts a fault site's operation takes (``_s_f<n>``, ``_s_c<n>`` in generated code)."""


def fault(state: RunState, f: int, lref: int, site: int, *args: Any) -> Any:
    """A fault site: apply its operation to ``args``; a run-time error it raises is raised with the
    meter brought up to date and the error located at the site's node. One function serves every
    arity (``_s_f1``..``_s_f3``: the verifier checks each call's argument count by that name)."""
    op = state.sites[site]
    try:
        return op(*args)
    except Exception as error:
        sync(state, f, lref)
        _locate(state, error, site)
        raise


def chunk_fault(state: RunState, f: int, i: int, site: int, *args: Any) -> Any:
    """A fault site in a fast chunk, at iteration counter ``i``: the chunk's start, size and the
    refund its loop owes its caller are the ones ``reserve`` recorded (a chunk body holds no loop and
    calls no function that has one, so no other reservation runs before it ends). Every arity, as
    ``fault`` (``_s_c1``..``_s_c3``)."""
    op, base, ahead, started = state.sites[site]
    try:
        return op(*args)
    except Exception as error:
        start, n, lr, _ = state.chunk
        j = i - start
        sync(state, f - j * base + ahead, lr + n - j - started)
        _locate(state, error, site)
        raise


def too_deep(state: RunState, f: int, lref: int) -> None:
    """A module call one frame past ``maxCallDepth``: the meter's own check raises."""
    meter = sync(state, f, lref)
    meter.call_depth = meter.limits.max_call_depth
    meter.enter_call()
    raise _internal("call depth check disagreed with the meter")


def no_return(state: RunState, f: int, lref: int) -> None:
    sync(state, f, lref)
    raise _internal("function ended without returning")


def _refund(meter: Meter, lref: int) -> None:
    """An operation that fails gives back the loop iterations reserved ahead of it (``lref``), so
    the run's usage counts only the iterations that started, as the reference's does."""
    if lref:
        meter.loop_iterations -= lref


# --- loops -----------------------------------------------------------------------------------


_ITERATION_FUEL: Final = costs.LOOP_ITERATION_FUEL
_ITERATION_COUNT: Final = costs.LOOP_ITERATION_COUNT
_FUEL_CADENCE: Final = costs.DEADLINE_EVERY_FUEL_CHARGES
_LOOP_CADENCE: Final = costs.DEADLINE_EVERY_LOOP_CHARGES


def loop_iteration(state: RunState, f: int, lref: int) -> int:
    """One iteration of a per-iteration loop (spec/optimized.md 4.1), charged exactly as
    ``Meter.loop_iteration`` charges it.

    Why a fast path here (issue 16): an outer loop pays this once per entry of its inner bulk loop
    (a Collatz walk once per number), and the meter's own method, with its ``fuel`` call, was a third
    of that entry's cost. When the iteration cannot fail and lands on neither deadline check - not
    cancelled, the loop budget and the fuel fit, neither the loop-charge nor the fuel-charge cadence
    reaches its check - the meter's method would only count: the loop iteration, its loop tick and its
    fuel tick, and the fuel, which stays in ``f`` as the inline charges do (every stub that reads the
    meter writes it back first). Anything else - and an owned value to settle - takes the meter's own
    method, which raises and reads the clock at exactly its charge."""
    meter = state.meter
    count = meter.loop_iterations + _ITERATION_COUNT
    loop_ticks = meter._loop_ticks + 1
    fuel_ticks = meter._fuel_ticks + 1
    if (
        f >= _ITERATION_FUEL
        and count <= meter.limits.max_loop_iterations
        and loop_ticks < _LOOP_CADENCE
        and fuel_ticks < _FUEL_CADENCE
        and not meter._cancel.cancelled
        and state.owned is None
        and state.owned_map is None
        and state.owned_text is None
    ):
        meter.loop_iterations = count
        meter._loop_ticks = loop_ticks
        meter._fuel_ticks = fuel_ticks
        return f - _ITERATION_FUEL
    return _exact_iteration(state, f, lref)


def _exact_iteration(state: RunState, f: int, lref: int) -> int:
    """``Meter.loop_iteration`` itself, from a synchronized meter (refunding ``lref`` if it raises)."""
    meter = state.meter
    meter.fuel_used = meter.max_fuel - f
    if state.owned is not None or state.owned_map is not None or state.owned_text is not None:
        settle_pending(state, meter)
    try:
        meter.loop_iteration()
    except Exception:
        _refund(meter, lref)
        raise
    return meter.max_fuel - meter.fuel_used


def loop_end(state: RunState, f: int, lref: int) -> None:
    """The exact path of a bulk loop whose body is not fast: its reservation was refused only
    because the loop budget is spent, so the iteration charge raises; if it ever did not, the run
    fails closed rather than skip the body (``_s_liter`` then ``_s_noret``, in one call)."""
    no_return(state, _exact_iteration(state, f, lref), lref)


def reserve(
    state: RunState,
    f: int,
    d: int,
    lref: int,
    start: int,
    stop: int | None,
    worst: int,
    need: int,
    work: int,
    heavy: int,
    most: int | None = None,
) -> int:
    """Reserve up to ``CHUNK`` iterations of a bulk loop (0: run the next one on the exact path).

    ``start`` is the counter the chunk starts at (0 for a while loop, whose chunk counts from 0) and
    ``stop`` the loop's end (None: unknown, a while loop); ``worst`` the worst-case fuel of one
    iteration (0: fuel is charged per segment inside the body, only iterations are reserved);
    ``need`` the call frames the body's inlined calls need; ``work`` and ``heavy`` the static bound
    on one iteration's real work (``work.py``), which caps the chunk so that the deadline and
    cancellation, checked here once per chunk, are checked at a bounded real-time interval whatever
    the body does. A reservation is recorded in the run state for the chunk's fault sites
    (``chunk_fault``).

    The chunk's work joins the run's work counter (``state.work``, shared with ``tick``); the clock
    is read only when the work since the last check leaves no room for one more iteration, and the
    chunk is cut to the room that is left. So a loop entered again and again (the inner ``while``
    of a Collatz walk, a few iterations each time) checks the deadline once per ``CHUNK_WORK`` units
    of work actually done, not at every entry, and no stretch between two checks holds more.
    Cancellation is still checked at every reservation.

    ``most`` (``_s_capm``; ``_s_cap`` passes none) cuts the chunk to at most that many iterations.
    Why: a chunk whose body counts ``c = c + k`` (constant steps) can drop the overflow check of
    every such update when it runs no more iterations than the counters have room for; the
    generated code computes that room (``most``) from the counters' values before the chunk, so the
    update that would overflow always runs on the exact path, which checks it and faults exactly
    where the reference does. Cutting the chunk before reserving keeps the reservation the one
    record of the chunk (``state.chunk``) that the fault sites read."""
    if stop is None:
        n = CHUNK
    else:
        n = stop - start
        if n > CHUNK:
            n = CHUNK
    if most is not None:
        if most <= 0:
            sync(state, f, lref)  # nothing reserved: the exact path checks the deadline itself
            return 0
        if stop is None:
            start = 0
        if n > most:
            n = most
    # ``sync``, inlined, and the fuel written back only where the meter may read it or the run may
    # stop here (issue 16): as after an inline charge, ``f`` is the fuel until a stub needs the meter's
    meter = state.meter
    if lref:
        meter.loop_iterations -= lref
    if state.owned is not None or state.owned_map is not None or state.owned_text is not None:
        meter.fuel_used = meter.max_fuel - f
        settle_pending(state, meter)
    if d < need:
        meter.fuel_used = meter.max_fuel - f
        meter.check_deadline()
        return 0
    if meter._cancel.cancelled:  # the attribute ``Meter.check_cancelled`` reads; it raises
        meter.fuel_used = meter.max_fuel - f
        meter.check_cancelled()
    limits = meter.limits
    # ``iteration_units`` without the call when no text operation weighs in (the common case)
    per = iteration_units(work, heavy, limits.max_string_length) if heavy or work < 1 else work
    spent = state.work
    room = (CHUNK_WORK - spent) // per
    if room <= 0:
        meter.fuel_used = meter.max_fuel - f
        meter.check_deadline()
        spent = 0
        room = chunk_limit(work, heavy, limits.max_string_length)
    left = limits.max_loop_iterations - meter.loop_iterations
    if left < n:
        n = left
    if room < n:
        n = room
    if worst and f < n * worst:  # ``f // worst < n`` without dividing a large fuel on every chunk
        n = f // worst
    if n <= 0:
        state.work = spent
        return 0
    meter.loop_iterations += n
    state.work = spent + n * per
    state.chunk = (start, n, lref, per)
    return n


def tick(state: RunState, f: int, lref: int, nodes: int, heavy: int) -> None:
    """The entry of a generated function that makes real calls or runs text operations: count its
    own work (``work.WorkCounter.entry``) and check the deadline and cancellation once ``CHUNK_WORK``
    units have gone by since the last check, so a tree of calls cannot run unchecked for long."""
    work = state.work + nodes
    if heavy:
        work += heavy * heavy_weight(state.meter.limits.max_string_length)
    if work < CHUNK_WORK:
        state.work = work
        return
    state.work = 0
    meter = state.meter
    meter.fuel_used = meter.max_fuel - f  # exact here; the loop refund is given back only on failure
    try:
        meter.check_deadline()
    except SandboxError:
        _refund(meter, lref)
        raise


def give_back(state: RunState, count: int) -> None:
    """A bulk chunk left early (break, return): the iterations it did not start are not charged,
    and their work leaves the run's work counter (never below zero)."""
    state.meter.loop_iterations -= count
    work = state.work - count * state.chunk[3]
    state.work = work if work > 0 else 0


# --- values that go through the meter --------------------------------------------------------


def text(state: RunState, f: int, lref: int, site: int, index: int) -> tuple[Value, int]:
    """A text literal: a new value, charged as one (its shape) every time it is evaluated."""
    value, shape = state.texts[index]
    meter = sync(state, pay(state, f, lref, site), 0)
    try:
        meter.shape(shape)
    except Exception:
        _refund(meter, lref)
        raise
    return value, meter.max_fuel - meter.fuel_used


def composite_equal(state: RunState, f: int, lref: int, site: int, a: Value, b: Value) -> tuple[bool, int]:
    """``eq`` on two List, Map or Record values: the node-count fuel, then structural equality."""
    meter = sync(state, pay(state, f, lref, site), 0)
    try:
        meter.fuel(costs.composite_equality_fuel(shape_of(a).nodes, shape_of(b).nodes))
    except Exception:
        _refund(meter, lref)
        raise
    return values_equal(a, b), meter.max_fuel - meter.fuel_used


def binding(
    state: RunState, f: int, lref: int, site: int, index: int, args: tuple[Value, ...]
) -> tuple[Value, int]:
    """A host-binding call: the shared call sequence (spec/semantics.md section 7) of ``runtime.binding_call``."""
    meter = sync(state, pay(state, f, lref, site), 0)
    try:
        value = call_binding(state.run, state.bindings[index], args)
    except Exception as error:
        _refund(meter, lref)
        _locate(state, error, site)
        raise
    return value, meter.max_fuel - meter.fuel_used


def _exact_stub(impl: Intrinsic, name: str) -> Callable[..., tuple[Value, int]]:
    """A stub that pays its site's fuel segment, then runs ``impl`` with every charge through the
    meter; returns the value and the fuel left. An error is located at the site, with the loop
    iterations reserved ahead (``lref``) given back."""

    def stub(state: RunState, f: int, lref: int, site: int, *args: Value) -> tuple[Value, int]:
        # ``pay`` and ``sync`` inlined: this is the hottest stub of collection-heavy kernels
        total = state.totals[site]
        if total:
            f -= total
            if f < 0:
                exhaust(state, f, lref, site)
        meter = state.meter
        meter.fuel_used = meter.max_fuel - f
        try:
            value = impl(meter, args)
        except Exception as error:
            _refund(meter, lref)
            if state.owned_map is not None:  # a list.get failing in an owned-map loop
                settle_owned_map(state)
            _locate(state, error, site)
            raise
        return value, meter.max_fuel - meter.fuel_used

    stub.__name__ = name
    return stub


def _intrinsic_stub(builtin: str) -> Callable[..., tuple[Value, int]]:
    return _exact_stub(INTRINSICS[builtin], intrinsic_stub_name(builtin))


_concat_charges_stub = _exact_stub(CONCAT_CHARGES, "_s_cat_exact")


def concat_charges_exact(state: RunState, f: int, lref: int, site: int, a: Value, b: Value) -> int:
    """Every charge of ``string.concatBudgeted`` through the meter, in the reference's order, and
    no text: the generated code appends it to the variable itself (``s = s + x``); returns the fuel
    left. Fails exactly where the exact stub of the built-in fails."""
    return _concat_charges_stub(state, f, lref, site, a, b)[1]


# --- owned lists (spec/optimized.md, owned collections) -------------------------------------
# A bulk loop whose only collection work is ``v = list.add(v, scalar)`` on a list the code generator
# proved owned (``owned.owned_list``) appends to the list's buffer in place: ``take_owned`` hands the
# generated code the raw buffer and the size up to which every add fits the run's limits, the
# generated code checks fuel and that size inline, and the adds' allocation, elements and deadline
# cadence are settled here in one step (``settle_owned``) whenever anything syncs the meter (every
# chunk reservation and every failure), and when the value is materialized after the loop.


def settle_owned(state: RunState) -> None:
    """Charge the adds made to the owned buffer since the last settlement (closed forms in
    ``core.costs``, the same numbers as the adds one by one: ``tests/runtime/test_costs_owned.py``)."""
    record = state.owned
    assert record is not None
    buffer, done = record
    size = len(buffer)
    if size > done:
        count = size - done
        alloc, elements = costs.list_adds_alloc(done, count), costs.list_adds_elements(done, count)
        check_list_settlement(state.meter, size, alloc, elements)  # the room tests are generated code
        state.meter.settle_owned(alloc, elements, costs.list_adds_charges(done, count))
        record[1] = size


def owned_room(meter: Meter, size: int) -> int:
    """The size below which one more scalar add onto a flat list fits every limit the meter
    checks for it (list length, depth, allocation, total elements), given that nothing else
    charges those counters until the list is materialized: adds onto sizes ``size`` .. room - 1
    all fit, the add onto ``room`` would be refused (the exact stub then raises there)."""
    limits = meter.limits
    most = limits.max_list_length - size  # adds until the length limit
    if limits.max_collection_depth < 1 or most <= 0:
        return size
    alloc_room = limits.max_allocated_bytes - meter.allocated_bytes
    element_room = limits.max_total_collection_elements - meter.collection_elements

    def fits(count: int) -> bool:
        return (
            costs.list_adds_alloc(size, count) <= alloc_room
            and costs.list_adds_elements(size, count) <= element_room
        )

    if fits(most):
        return size + most
    low, high = 0, most  # fits(low), not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return size + low


def take_owned(state: RunState, lst: ListValue) -> tuple[list[Value], int]:
    """Before a bulk loop that appends to an owned list: (its buffer, ``owned_room``). The list is
    the newest version of its buffer (it was built in this function and never shared); were it
    not, its items are copied into a buffer of its own, so no other version ever sees a change."""
    if not lst.flat:
        raise _internal("owned list is not flat")
    meter = state.meter
    if state.owned is not None:
        settle_owned(state)
    buffer = lst._buffer
    size = lst.size
    if len(buffer) != size:
        buffer = buffer[:size]
    state.owned = [buffer, size]
    return buffer, owned_room(meter, size)


def owned_value(state: RunState, buffer: list[Value]) -> ListValue:
    """After the loop: settle the adds and hand the buffer out as an immutable list value."""
    record = state.owned
    if record is None or record[0] is not buffer:
        raise _internal("owned list was not taken")
    settle_owned(state)
    state.owned = None
    return flat_list_over(buffer)


def owned_add_exact(state: RunState, f: int, lref: int, site: int, buffer: list[Value], item: Value) -> None:
    """An owned add whose inline check failed (fuel short, or the size reached the room): settle,
    materialize, and run the exact stub, which fails exactly where the reference fails."""
    lst = owned_value(state, buffer)
    _intrinsic_stub("list.add")(state, f, lref, site, lst, item)  # a failure path: built when needed
    raise _internal("owned list.add check disagreed with the meter")


def exact_intrinsic_stub(builtin: str) -> Callable[..., tuple[Value, int]]:
    """The exact stub of ``builtin``: every charge through the meter, in the reference's order."""
    return _intrinsic_stub(builtin)


def _builtin_stub(builtin: str) -> Callable[..., tuple[Value, int]]:
    """The stub generated code calls for ``builtin``: its fast path (``fastops``) in front of the
    exact stub where one exists, else the exact stub."""
    exact = _intrinsic_stub(builtin)
    fast = FAST_PATHS.get(builtin)
    return exact if fast is None else fast(exact)


def intrinsic_stub_name(builtin: str) -> str:
    """``list.add`` -> ``_s_i_list_add``."""
    return "_s_i_" + builtin.replace(".", "_")


# --- pure helpers (never raise for well-typed values) ----------------------------------------

PURE_HELPERS: Mapping[str, Callable[..., Any]] = MappingProxyType(
    {
        "_p_min": min,
        "_p_max": max,
        "_p_abs": arith.abs_i32,
        "_p_clamp": arith.clamp_i32,
        "_p_sqrt": arith.sqrt_f64,
        "_p_floor": arith.floor_f64,
        "_p_ceil": arith.ceil_f64,
        "_p_round": arith.round_f64,
        "_p_u16len": utf16_len,
        "_p_tof64": arith.to_f64,
        "_p_lsize": list_size,
        "_p_rfuel": costs.read_fuel,
        "_p_lbuf": list_buffer,
        "_p_len": len,
        "_p_push": list.append,
        "_p_mlen": len,
        "_p_part": list.append,
        "_p_i2s": int.__repr__,
        "_p_slen": len,
        "_p_lcadds": costs.list_adds_flat_fuel,
        "_p_mcfit": chunk_fits,
        "_p_strchunk_i2s": str,
    }
)
"""Shared definitions generated code calls directly. ``_p_abs``, ``_p_clamp`` and ``_p_sqrt`` can
fail, so generated code calls them only after the inline check that rules the failure out (the
failure itself goes through a fault stub). ``_p_len`` and ``_p_push`` only ever receive an owned
list's raw buffer (``b<n>`` slots, which the verifier confines to them and the owned-list stubs);
``_p_mlen`` only an owned map's dict (``m<n>``, confined likewise: ``verify_maps``);
``_p_part`` only an owned text's parts list (``p<n>``, ``text_parts``). ``_p_i2s`` is
``int32.toStringInvariant`` of an int (``int.__repr__``: the decimal text, and a TypeError rather
than a text for anything that is not an int), ``_p_slen`` the length of the ASCII text it returns.
``_p_strchunk_i2s`` is the same text for an int, the faster way (``str``: CPython specializes a call
of ``str`` with one argument); it stands only as the piece of a pre-checked fast text chunk, whose
operand is a pure int expression (``verify_strchunk``, ``codegen_strchunk``).
``_p_lbuf`` hands out a list's mutable buffer, so generated code keeps it only in a ``g<n>`` view,
read behind ``0 <= index < _p_lsize(list)`` (``codegen.list_read``, ``verify_reads``).
``_p_lcadds`` is the fuel of a run of owned adds (``costs.list_adds_flat_fuel``), which a fast list
chunk reserves and its fault sites subtract (``list_chunks``)."""

STUBS: Mapping[str, Callable[..., Any]] = MappingProxyType(
    {
        "_s_fx": exhaust,
        **{f"_s_f{arity}": fault for arity in FAULT_ARITIES},
        **{f"_s_c{arity}": chunk_fault for arity in FAULT_ARITIES},
        "_s_deep": too_deep,
        "_s_noret": no_return,
        "_s_liter": loop_iteration,
        "_s_lend": loop_end,
        "_s_cap": reserve,
        "_s_capm": reserve,
        "_s_tick": tick,
        "_s_lback": give_back,
        "_s_text": text_literal(text, sync),
        "_s_ceq": composite_equal,
        "_s_bind": binding,
        "_s_cat": concat_charges(concat_charges_exact),
        "_s_lown": take_owned,
        "_s_lmat": owned_value,
        "_s_lox": owned_add_exact,
        "_s_mown": take_owned_map,
        "_s_mtown": take_text_keyed_map,
        "_s_mmat": owned_map_value,
        "_s_mox": owned_map_exact(_intrinsic_stub),
        "_s_mcover": overshot,
        "_s_sown": take_text,
        "_s_smat": materialize_text,
        "_s_tlit": literal_text,
        "_s_strfits": text_chunk_fits,
        "_s_strdone": text_chunk_done,
        **exact_fallbacks(_intrinsic_stub("int32.toStringInvariant"), text, concat_charges_exact),
        **{intrinsic_stub_name(name): _builtin_stub(name) for name in INTRINSICS},
        **literal_read_stubs(text_literal(text, sync), text, _builtin_stub, _intrinsic_stub, sync),
        **make_block_stubs(loop_iteration, sync, _locate),
    }
)
"""Every stub by its name in the generated code's namespace."""

RANGE_NAME: Final = "_range"


def namespace_base() -> dict[str, Any]:
    """The names every artifact's namespace starts with (plus its own functions and constants)."""
    names: dict[str, Any] = {"__builtins__": {}}
    names.update(STUBS)
    names.update(PURE_HELPERS)
    names[RANGE_NAME] = range
    return names


__all__ = [
    "CHUNK",
    "FAULT_OPS",
    "PURE_HELPERS",
    "RANGE_NAME",
    "STUBS",
    "RunState",
    "exact_intrinsic_stub",
    "intrinsic_stub_name",
    "namespace_base",
    "sync",
]
