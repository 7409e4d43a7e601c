"""Run-time side of *iteration blocks* (issue 16, spec/optimized.md 4.2.8): one reservation shared by
a loop and the bulk ``while`` loops directly inside it.

Why: an outer loop whose every iteration enters an inner bulk loop for a few iterations (the
Collatz walk of each number) paid three stub calls per entry - the outer iteration charge
(``_s_liter``), the inner chunk's reservation (``_s_capm``) and the give-back of what the chunk did
not start (``_s_lback``) - and those calls, not the arithmetic, were what kept it far from plain
CPython. A *block* is a number of loop iterations (the *pool*, slot ``bk<n>``) reserved in the meter
in one step, with their work units (``units`` each) added to the run's work counter. The outer
iteration and the inner chunks then draw from the pool with plain int arithmetic in the generated
code, and only an empty pool (or a draw the inline test cannot prove) calls a stub here.

Exactness: a pool never holds more than the loop budget left, so an iteration drawn from it is one
the meter would have allowed; the outer iteration's fuel is tested inline (``f >= 5``) and an inner
chunk's by its worst case, as a chunk reservation does. Iterations in the pool that were not started
are given back on every way out: the end of the loop (``_s_bkend``), a refill (the stubs here give
the old pool back before anything else), and every failure (the refund ``lr + bk`` every fault stub
in the block receives, ``lr + bk - j - started`` inside an inner chunk: ``_s_bk<k>``). So the loop
iterations, the fuel, the failing operation and the usage at a failure are the reference's.

Cadence: cancellation and the deadline are checked when a pool is reserved (the work counter's
cadence of spec/optimized.md 4.5: the clock is read once the run's work leaves no room for one more
pool iteration). An iteration drawn from a pool does not tick the meter's own loop and fuel cadence
counters (those count the charges that go through the meter); its work is in the pool's units
instead, so no stretch between two checks holds more than ``CHUNK_WORK`` units plus one iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from dotboxd.core import costs

from .work import CHUNK_WORK

POOL: Final = 2048
"""Most loop iterations one block reserves (as one bulk chunk, ``stubs.CHUNK``)."""

ITERATION: Final = "_s_bkit"
"""``f, bk = _s_bkit(R, f, lr, bk, units)``: the outer iteration when the pool cannot pay it."""
RESERVE: Final = "_s_bkcap"
"""``n, bk = _s_bkcap(R, f, lr, bk, worst, units[, room])``: an inner chunk when the pool cannot."""
END: Final = "_s_bkend"
"""``_s_bkend(R, bk, units)``: the loop is done; give the pool back."""
FAULTS: Final = ("_s_bk1", "_s_bk2", "_s_bk3")
"""``_s_bk<k>(R, f, j, lr + bk, site, *operands)``: a fault site inside an inner chunk of a block."""
ARITY: Final = {ITERATION: 5, RESERVE: 6, END: 3}
"""Argument counts (``_s_bkcap`` takes one more, the counters' room, when the chunk has counters)."""

_FUEL: Final = costs.LOOP_ITERATION_FUEL


def give_back(state: Any, pool: int, units: int) -> None:
    """Take the pool's unstarted iterations off the loop count and their work off the work counter
    (never below zero, as ``stubs.give_back``)."""
    if pool > 0:
        state.meter.loop_iterations -= pool
        work = state.work - pool * units
        state.work = work if work > 0 else 0


def reserve_pool(state: Any, f: int, lref: int, units: int) -> int:
    """Reserve a new pool: up to ``POOL`` iterations, within the loop budget left and the work room
    (reading the clock, as ``stubs.reserve`` does, when none is left); cancellation is checked here.
    0 when the loop budget is spent (the exact path then raises at the meter's own charge)."""
    meter = state.meter
    if meter._cancel.cancelled:  # the attribute ``Meter.check_cancelled`` reads; it raises
        _sync_plain(state, f, lref)
        if lref:
            meter.loop_iterations -= lref
        meter.check_cancelled()
    spent = state.work
    room = (CHUNK_WORK - spent) // units
    if room <= 0:
        _sync_plain(state, f, lref)
        try:
            meter.check_deadline()
        except Exception:
            if lref:  # ``_sync_plain`` left it: the run goes on when the clock allows
                meter.loop_iterations -= lref
            raise
        spent = 0
        room = max(1, CHUNK_WORK // units)
    left = meter.limits.max_loop_iterations - meter.loop_iterations
    n = POOL if left > POOL else left
    if room < n:
        n = room
    if n <= 0:
        state.work = spent
        return 0
    meter.loop_iterations += n
    state.work = spent + n * units
    return n


def _sync_plain(state: Any, f: int, lref: int) -> None:
    """The fuel written back before the meter reads the clock or raises (no owned values in a block:
    the generator and the verifier admit blocks only without them)."""
    meter = state.meter
    meter.fuel_used = meter.max_fuel - f


def make_block_stubs(
    loop_iteration: Callable[[Any, int, int], int],
    sync: Callable[[Any, int, int], Any],
    locate: Callable[[Any, Exception, int], None],
) -> Mapping[str, Callable[..., Any]]:
    """The block stubs, built on ``stubs``' exact iteration charge, ``sync`` and error location
    (passed in: ``stubs`` imports this module)."""

    def block_iteration(state: Any, f: int, lref: int, pool: int, units: int) -> tuple[int, int]:
        """The outer iteration when the pool is empty or the fuel is short of it: give the pool back,
        charge the iteration exactly (``_s_liter``: it raises where the reference does), then
        reserve the next pool. Returns (fuel, pool)."""
        give_back(state, pool, units)
        f = loop_iteration(state, f, lref)
        return f, reserve_pool(state, f, lref, units)

    def block_reserve(
        state: Any, f: int, lref: int, pool: int, worst: int, units: int, most: int | None = None
    ) -> tuple[int, int]:
        """An inner chunk the pool cannot pay (empty, or the fuel or counters' room short of one
        iteration): give the pool back, reserve a new one and draw ``min(pool, most, f // worst)``
        from it. When that is 0 the whole pool goes back (the next iteration runs on the exact
        path, which charges through the meter and must find the loop count as it is). Returns
        (count, pool)."""
        give_back(state, pool, units)
        if most is not None and most <= 0:
            _sync_plain(state, f, lref)
            return 0, 0
        pool = reserve_pool(state, f, lref, units)
        n = pool
        if most is not None and most < n:
            n = most
        if f < n * worst:
            n = f // worst
        if n <= 0:
            give_back(state, pool, units)
            return 0, 0
        return n, pool

    def block_end(state: Any, pool: int, units: int) -> None:
        """The block loop is done: its pool's unstarted iterations are not charged."""
        give_back(state, pool, units)

    def block_fault(state: Any, f: int, i: int, refund: int, site: int, *args: Any) -> Any:
        """A fault site at iteration ``i`` of an inner chunk of a block (``stubs.chunk_fault`` with the
        refund passed in): the exact fuel ``f - i * base + ahead`` and the refund
        ``lr + bk - i - started``, ``refund`` being ``lr + bk`` (the chunk draws from the pool as its
        iterations start)."""
        op, base, ahead, started = state.sites[site]
        try:
            return op(*args)
        except Exception as error:
            sync(state, f - i * base + ahead, refund - i - started)
            locate(state, error, site)
            raise

    return {
        ITERATION: block_iteration,
        RESERVE: block_reserve,
        END: block_end,
        **{name: block_fault for name in FAULTS},
    }


__all__ = [
    "ARITY",
    "END",
    "FAULTS",
    "ITERATION",
    "POOL",
    "RESERVE",
    "give_back",
    "make_block_stubs",
    "reserve_pool",
]
