"""The counters' room of a capped bulk chunk (``_s_capm``), derived from the plan, tied to the chunk.

Why: a counter-capped chunk ``n = _s_capm(R, ..., room)`` runs the counter updates of its body
(``c = c + k``, ``c = c - k``) without their inline overflow checks; what keeps them exact is that
``room`` caps the chunk at as many iterations as every counter can take before it would leave
I32/I64 (``codegen.counter_room``). A larger room (a constant, a smaller step, an I64 bound for an
I32 counter, another slot than the counter's) would let such an update overflow silently: a wrong
value, never an error. So the verifier derives the room from the plan and matches it against the
chunk, never trusting the generator's expression:

* **from the plan** (``loop_counters``): the loop body's counters - the I32/I64 locals it assigns
  only as ``c = c +/- <int literal>`` (not the forRange local, not assigned any other way, no nested
  loop) - with their type's bounds and ``up``/``down``, the sums of their positive and negative
  steps as if every branch ran; and the live updates of those counters in source order;
* **the room expression**: one term, or ``_p_min`` of several, each ``(HIGH - v) // up`` or
  ``(v - LOW) // down`` (no ``// 1``), in the plan's order (counters by name, up before down) and
  with exactly the plan's bounds and steps;
* **the link from counter to slot**: the slot ``v`` of a counter's terms is the slot the chunk's
  body steps: every store to it in the body is a bare ``v = v +/- k``, and the sequence of those
  stores, in source order, is the plan's sequence of that counter's updates (the same steps at the
  same places among the other counters'). Two counters of the same steps and different types cannot
  swap slots: their updates sit at different places of the sequence.

Updates the prover PROVED safe (``GenOptions.proofs``) need no room, so under proofs a counter may
be left out of the room as a whole (its terms, not some of them); the verifier does not re-run the
prover to confirm it, as it re-runs no proof for the checks proofs drop elsewhere. Without proofs
the room is exactly the plan's, and ``_s_cap`` (no room at all) stands only where the loop has no
counter.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from dotboxd.core import ast as ir
from dotboxd.core.types import I32, I64
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN
from dotboxd.validator.plan import ExecutionPlan

from .live import live
from .shapes import ASSIGNS, BINOPS, CALLS, CONSTS, IFS, NAMES, UNARIES, stored_names
from .stubs import CHUNK

_BOUNDS = {I32: (I32_MIN, I32_MAX), I64: (I64_MIN, I64_MAX)}
MAX_MATCH_STEPS = 10_000
"""The verifier's own budget for matching room terms to counters under proofs (a counter may be left
out, so the match may backtrack): past it the room is refused, not searched."""

Term = tuple[bool, int, int]
"""``(upward, bound, step)``: ``(bound - v) // step`` when upward, else ``(v - bound) // step``."""


@dataclass(frozen=True, slots=True)
class Counter:
    """One counter of a leaf loop's body, as the plan determines it."""

    name: str
    low: int
    high: int
    up: int
    down: int
    reset: int = 0
    """The largest ``|m| - 1`` of the counter's resets ``c = x % m`` (0 when it has none): a reset
    leaves it within that distance of zero."""

    def terms(self) -> tuple[Term, ...]:
        """The room terms the counter needs, up before down."""
        found: list[Term] = []
        if self.up:
            found.append((True, self.high, self.up))
        if self.down:
            found.append((False, self.low, self.down))
        return tuple(found)


@dataclass(frozen=True, slots=True)
class LoopCounters:
    """A leaf loop's counters (by name) and their live updates in source order."""

    counters: tuple[Counter, ...] = ()
    updates: tuple[tuple[str, int], ...] = ()
    """``(counter, signed step)`` of every live update, then-arm before else-arm."""


def counter_step(stmt: ir.Stmt) -> tuple[str, int, ir.Binary] | None:
    """``c = c + k`` / ``c = c - k`` with an integer literal ``k``: (c, signed step, the binary).
    The one definition of a counter update, for the generator (``codegen.counter_room``) and the
    verifier alike."""
    if not isinstance(stmt, ir.Set):
        return None
    value = stmt.value
    if (
        isinstance(value, ir.Binary)
        and value.op in (ir.BinaryOp.ADD, ir.BinaryOp.SUB)
        and isinstance(value.left, ir.Var)
        and value.left.name == stmt.name
        and isinstance(value.right, ir.Literal)
        and value.right.kind in (ir.LiteralKind.I32, ir.LiteralKind.I64)
        and type(value.right.value) is int
    ):
        step = value.right.value
        return stmt.name, (step if value.op is ir.BinaryOp.ADD else -step), value
    return None


def _assigned(block: tuple[ir.Stmt, ...], into: set[str]) -> None:
    for stmt in block:
        if isinstance(stmt, ir.Set):
            into.add(stmt.name)
        elif isinstance(stmt, ir.If):
            _assigned(stmt.then, into)
            _assigned(stmt.else_, into)
        elif isinstance(stmt, ir.While | ir.ForRange):
            _assigned(stmt.body, into)
            if isinstance(stmt, ir.ForRange):
                into.add(stmt.local)


def rem_divisor(value: ir.Expr) -> int:
    """``m`` when ``value`` is ``<x> % <int literal m>``, else 0 (a reset of a counter)."""
    if (
        isinstance(value, ir.Binary)
        and value.op is ir.BinaryOp.REM
        and isinstance(value.right, ir.Literal)
        and value.right.kind in (ir.LiteralKind.I32, ir.LiteralKind.I64)
        and type(value.right.value) is int
    ):
        return value.right.value
    return 0


def chunk_fits(low: int, high: int, up: int, down: int, reset: int) -> bool:
    """Whether a counter that a reset may bring back to within ``reset`` of zero still has room for
    a whole chunk (``stubs.CHUNK`` iterations, the most ``_s_capm`` reserves) of its steps from
    there: then the room computed from its value at the chunk's start bounds the chunk even when
    a reset runs inside it. The generator and the verifier both decide counters with this."""
    return not ((up and (high - reset) // up < CHUNK) or (down and (-reset - low) // down < CHUNK))


def collect_counters(
    block: tuple[ir.Stmt, ...],
    steps: dict[str, list[tuple[int, ir.Binary]]],
    other: set[str],
    resets: dict[str, int],
) -> None:
    """Sort the locals ``block`` assigns: counter updates into ``steps``, resets ``c = x % m`` into
    ``resets`` (the largest ``|m| - 1``: a truncating remainder is smaller than its divisor), every
    other assignment's target into ``other``. Every statement, dead ones too (their steps widen
    ``up``/``down``): the generator (``codegen.counter_room``) and the verifier both sort with this
    one function."""
    for stmt in block:
        found = counter_step(stmt)
        divisor = rem_divisor(stmt.value) if isinstance(stmt, ir.Set) else 0
        if found is not None:
            steps.setdefault(found[0], []).append((found[1], found[2]))
        elif isinstance(stmt, ir.Set) and divisor:
            resets[stmt.name] = max(resets.get(stmt.name, 0), abs(divisor) - 1)
        elif isinstance(stmt, ir.Set):
            other.add(stmt.name)
        elif isinstance(stmt, ir.If):
            collect_counters(stmt.then, steps, other, resets)
            collect_counters(stmt.else_, steps, other, resets)
        elif isinstance(stmt, ir.While | ir.ForRange):
            _assigned((stmt,), other)


def _live_updates(
    plan: ExecutionPlan, block: tuple[ir.Stmt, ...], names: set[str]
) -> Iterator[tuple[str, int]]:
    for stmt in live(plan, block):
        found = counter_step(stmt)
        if found is not None and found[0] in names:
            yield found[0], found[1]
        elif isinstance(stmt, ir.If):
            yield from _live_updates(plan, stmt.then, names)
            yield from _live_updates(plan, stmt.else_, names)


def loop_counters(plan: ExecutionPlan, loop: ir.While | ir.ForRange) -> LoopCounters:
    """The counters of a leaf loop's body, from the plan alone."""
    steps: dict[str, list[tuple[int, ir.Binary]]] = {}
    other: set[str] = {loop.local} if isinstance(loop, ir.ForRange) else set()
    resets: dict[str, int] = {}
    collect_counters(loop.body, steps, other, resets)
    counters: list[Counter] = []
    for name in sorted(steps):
        if name in other:
            continue
        bounds = _BOUNDS.get(plan.type_of(steps[name][0][1].left))  # type: ignore[call-overload]
        if bounds is None:
            continue
        up = sum(k for k, _ in steps[name] if k > 0)
        down = sum(-k for k, _ in steps[name] if k < 0)
        if not (up or down):
            continue  # only zero steps (``c = c + 0``): it never moves, the generator gives it no room
        reset = resets.get(name, 0)
        if not chunk_fits(bounds[0], bounds[1], up, down, reset):
            continue  # the generator leaves its steps checked
        counters.append(Counter(name, bounds[0], bounds[1], up, down, reset))
    names = {counter.name for counter in counters}
    return LoopCounters(tuple(counters), tuple(_live_updates(plan, loop.body, names)))


# --- the generated chunk ------------------------------------------------------------------------


def _int(node: Any) -> int | None:
    """An integer constant, never a bool; a negative one may come back from the disk cache's
    source text as ``-`` applied to its magnitude."""
    if type(node) in CONSTS and type(node.value) is int:
        return int(node.value)
    if type(node) in UNARIES and type(node.op) is ast.USub:
        magnitude = _int(node.operand)
        return None if magnitude is None or magnitude < 0 else -magnitude
    return None


def _slot(node: Any) -> str | None:
    if type(node) in NAMES and type(node.ctx) is ast.Load and type(node.id) is str and node.id[:1] == "v":
        return str(node.id)
    return None


def _term(node: Any) -> tuple[Term, str] | None:
    """``(H - v) // s``, ``H - v``, ``(v - L) // s`` or ``v - L``: (its term, its slot)."""
    step = 1
    if type(node) in BINOPS and type(node.op) is ast.FloorDiv:
        divisor = _int(node.right)
        if divisor is None or divisor < 2:
            return None
        node, step = node.left, divisor
    if not (type(node) in BINOPS and type(node.op) is ast.Sub):
        return None
    high, slot = _int(node.left), _slot(node.right)
    if high is not None and slot is not None:
        return (True, high, step), slot
    slot, low = _slot(node.left), _int(node.right)
    if slot is not None and low is not None:
        return (False, low, step), slot
    return None


def _terms(room: Any) -> list[tuple[Term, str]] | None:
    parts = room.args if type(room) in CALLS and _is_min(room) else [room]
    found = [_term(part) for part in parts]
    if any(term is None for term in found):
        return None
    return found  # type: ignore[return-value]


def _is_min(call: Any) -> bool:
    return type(call.func) in NAMES and call.func.id == "_p_min" and not call.keywords and len(call.args) >= 2


def _match(
    counters: tuple[Counter, ...], terms: list[tuple[Term, str]], all_needed: bool
) -> dict[str, str] | None:
    """Counter name -> slot: the terms, in order, are the terms of the counters (every one of them
    unless ``all_needed`` is off, then an in-order selection), each counter's terms on one slot."""
    budget = [MAX_MATCH_STEPS]

    def search(at_counter: int, at_term: int) -> dict[str, str] | None:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if at_counter == len(counters):
            return {} if at_term == len(terms) else None
        counter = counters[at_counter]
        want = counter.terms()
        got = terms[at_term : at_term + len(want)]
        if len(got) == len(want) and all(g[0] == w for g, w in zip(got, want, strict=True)):
            slots = {slot for _, slot in got}
            if len(slots) == 1:
                rest = search(at_counter + 1, at_term + len(want))
                if rest is not None:
                    return {counter.name: slots.pop(), **rest}
        if all_needed:
            return None
        return search(at_counter + 1, at_term)

    return search(0, 0)


def _bare_step(stmt: Any, slots: set[str]) -> tuple[str, int] | bool | None:
    """A store to one of ``slots``: ``(slot, signed step)`` for a bare ``v = v +/- k``, False for
    any other store to one of them, None when the statement stores none of them."""
    if not stored_names(stmt) & slots:
        return None
    if type(stmt) not in ASSIGNS or len(stmt.targets) != 1:
        return False
    target, value = stmt.targets[0], stmt.value
    if not (type(target) in NAMES and type(value) in BINOPS):
        return False
    step = _int(value.right)
    if _slot(value.left) != target.id or step is None or type(value.op) not in (ast.Add, ast.Sub):
        return False
    return str(target.id), (step if type(value.op) is ast.Add else -step)


_REMAINDERS = frozenset({"rem_i32", "rem_i64"})
_OP_STUBS = frozenset({"_s_c2", "_s_f2"})


def _reset_value(value: Any, bound: int, op_of: Callable[[int], str | None]) -> bool:
    """Whether ``value`` is within ``bound`` of zero whatever its operands: ``x % m`` (``x`` a name,
    or arithmetic of names and integer constants that cannot fail - ``(v + t) % m``, where
    ``value_ranges`` found the sum cannot overflow; ``m`` a constant with ``|m| - 1 <= bound``;
    Python's ``%`` lands in ``[0, m)`` or ``(m, 0]`` whatever the int it divides)
    or the checked remainder's exact path ``_s_c2(...)`` / ``_s_f2(...)`` whose site (``op_of``) is
    a remainder by such a constant (``core.arith``'s truncating remainder: smaller than its
    divisor)."""
    if type(value) in BINOPS and type(value.op) is ast.Mod and _arithmetic(value.left):
        divisor = _int(value.right)
    elif (
        type(value) in CALLS
        and type(value.func) in NAMES
        and value.func.id in _OP_STUBS
        and not value.keywords
        and len(value.args) == 6
    ):
        site = _int(value.args[3])
        divisor = _int(value.args[5]) if site is not None and op_of(site) in _REMAINDERS else None
    else:
        return False
    return divisor is not None and divisor != 0 and abs(divisor) - 1 <= bound


_PURE_OPS = (ast.Add, ast.Sub, ast.Mult)


def _arithmetic(node: Any) -> bool:
    """A name, an integer constant, or ``+ - *`` of such (the dividend forms the generator emits)."""
    if type(node) in NAMES:
        return True
    if type(node) in CONSTS:
        return type(node.value) is int
    if type(node) in BINOPS and type(node.op) in _PURE_OPS:
        return _arithmetic(node.left) and _arithmetic(node.right)
    return False


def _single_store(stmt: Any) -> tuple[str, Any] | None:
    """``(name, value)`` of ``name = value``, else None."""
    if type(stmt) in ASSIGNS and len(stmt.targets) == 1 and type(stmt.targets[0]) in NAMES:
        return str(stmt.targets[0].id), stmt.value
    return None


def _stores_reset(stmt: Any, name: str, bound: int, op_of: Callable[[int], str | None]) -> bool:
    """``name = <reset value>``, or an ``if`` both of whose arms end with one."""
    single = _single_store(stmt)
    if single is not None:
        return single[0] == name and _reset_value(single[1], bound, op_of)
    if type(stmt) in IFS and stmt.body and stmt.orelse:
        return all(_stores_reset(arm[-1], name, bound, op_of) for arm in (stmt.body, stmt.orelse))
    return False


def _with_previous(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, ast.stmt | None]]:
    """Every statement of ``body``, nested ones too, in source order (``shapes.statements``), with
    the statement just before it in its own block (None for a block's first)."""
    previous: ast.stmt | None = None
    for stmt in body:
        yield stmt, previous
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _with_previous(inner)
        previous = stmt


def _reset_store(
    stmt: Any, previous: Any, resets: dict[str, int], op_of: Callable[[int], str | None]
) -> bool:
    """Whether ``stmt`` stores into a counter slot ``v`` that has resets (``resets[v]``, its bound)
    a value within that bound of zero: ``v = <reset value>`` (``_reset_value``), or ``v = t`` right
    after the statement that set ``t`` to one (``t = x % m``, or an ``if`` whose arms both end so:
    how the generator spells a reset it computes into a temporary first)."""
    single = _single_store(stmt)
    if single is None or single[0] not in resets:
        return False
    bound = resets[single[0]]
    if _reset_value(single[1], bound, op_of):
        return True
    value = single[1]
    return (
        type(value) in NAMES and previous is not None and _stores_reset(previous, str(value.id), bound, op_of)
    )


def check_room(
    loop: LoopCounters,
    stub: str,
    args: list[ast.expr],
    chunk: list[ast.stmt],
    proofs: bool,
    op_of: Callable[[int], str | None],
) -> str | None:
    """Why the reservation ``stub(*args)`` (its chunk's body ``chunk``) does not cap the plan's
    counters, or None when it does (``op_of``: the operation of a fault site, for a counter's
    resets)."""
    if stub == "_s_cap":
        if loop.counters and not proofs:
            return "a loop with counters reserves without their room"
        return None
    terms = _terms(args[-1])
    if terms is None:
        return "a room is terms (HIGH - v) // up and (v - LOW) // down, or _p_min of them"
    slot_of = _match(loop.counters, terms, all_needed=not proofs)
    if not slot_of or len(set(slot_of.values())) != len(slot_of):
        return "a room's terms are not the plan's counters' bounds and steps"
    slots = set(slot_of.values())
    resets = {slot_of[c.name]: c.reset for c in loop.counters if c.name in slot_of and c.reset}
    found: list[tuple[str, int]] = []
    for stmt, previous in _with_previous(chunk):
        step = _bare_step(stmt, slots)
        if step is False and _reset_store(stmt, previous, resets, op_of):
            continue  # a reset: the counter ends within its reset bound of zero
        if step is False:
            return "a counter the room covers is stored other than by its steps"
        if step is not None:
            assert not isinstance(step, bool)
            found.append(step)
    expected = [(slot_of[name], step) for name, step in loop.updates if name in slot_of]
    if found != expected:
        return "a room's slots are not stepped as the plan's counters are"
    return None


__all__ = [
    "Counter",
    "LoopCounters",
    "check_room",
    "chunk_fits",
    "collect_counters",
    "counter_step",
    "loop_counters",
    "rem_divisor",
]
