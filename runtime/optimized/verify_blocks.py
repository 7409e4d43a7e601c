"""Verifier rule 24 (blocks): iteration blocks (spec/optimized.md 4.2.8, ``codegen_blocks``).

Why a rule of its own: a block's pool (``bk<n>``) is a count of loop iterations the meter has
already charged and the generated code draws from inline, with plain int arithmetic. A tampered
module could draw without taking from the pool, take less than it ran, keep the pool when it
leaves the loop, hand a failure too large a refund, or weigh the pool's work lighter - each a
usage lie or a deadline checked less often. So a pool name is not a slot: it is loaded and stored
only in the exact forms below, each found and approved here by the identity of its nodes
(``loads``, ``stores``, ``calls``), and the verifier refuses it anywhere else.

* ``bk = 0`` stands right before a ``for`` over ``_range`` whose body starts with the draw
  ``if bk > 0 and f >= 5: bk = bk - 1; f = f - 5 else: f, bk = _s_bkit(R, f, lr, bk, U)``, and
  ``_s_bkend(R, bk, U)`` stands right after it; ``U`` is the plan's (``blocks.block_units``) for the
  function's next block loop (in ``facts.walk_loops`` order), the same in all three calls.
* Inside that body (outside its chunks) there are no other loops than *pool loops*, no ``return``,
  and the only calls are fault stubs, pure helpers and cold paths, each given the refund
  ``lr + bk`` (``verifier.call``).
* A pool loop is ``while True:`` holding exactly ``n = bk`` (or ``n = ROOM; if bk < n: n = bk``),
  ``if f < n * W: n = f // W``, ``if n < 1: n, bk = _s_bkcap(R, f, lr, bk, W, U[, ROOM])``, its
  chunk ``for j in _range(n):`` and ``break``; it is the plan's next bulk loop (rule 8's order):
  ``W`` its worst fuel, no frames needed, no text weight, the rooms its counters' (rule 11).
  So ``n`` never exceeds the pool, and ``n * W`` never the fuel.
* The chunk's body stores neither ``n`` nor ``j``; every ``break`` of the chunk is right after
  ``bk = bk - j`` or ``bk = bk - (j + 1)``; its ``else`` starts ``if n:`` whose body ends
  ``bk = bk - n; continue``; its only calls are pure helpers and ``_s_bk<k>(R, f, j, lr + bk, site,
  ...)`` with a chunk fault site (no give-back, no ``_s_c<k>``, nothing that takes a refund).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Final

from dotboxd.core import costs
from dotboxd.validator.plan import ExecutionPlan

from . import pyast as P
from .block_stubs import END, FAULTS, ITERATION, RESERVE
from .blocks import block_units
from .errors import VerifierFailure
from .facts import PlanFacts, walk_loops
from .tables import Tables, function_name

POOL: Final = re.compile(r"bk(?:0|[1-9][0-9]{0,6})\Z")
"""A block's pool of reserved iterations (``codegen_blocks``): never a slot."""
BLOCK_STUBS: Final = frozenset({ITERATION, RESERVE, END, *FAULTS})
ARITIES: Final = {**dict.fromkeys(FAULTS, (5, 6, 7))}

_NAMES = frozenset({ast.Name, P.Name})
_CONSTS = frozenset({ast.Constant, P.Constant})
_BINOPS = frozenset({ast.BinOp, P.BinOp})
_COMPARES = frozenset({ast.Compare, P.Compare})
_IFS = frozenset({ast.If, P.If})
_ASSIGNS = frozenset({ast.Assign, P.Assign})
_FORS = frozenset({ast.For, P.For})
_BREAKS = frozenset({ast.Break, P.Break})
_CONTINUES = frozenset({ast.Continue, P.Continue})
_TUPLES = frozenset({ast.Tuple, P.Tuple})
_CALLS = frozenset({ast.Call, P.Call})
_BOOLOPS = frozenset({ast.BoolOp, P.BoolOp})
_EXPRS = frozenset({ast.Expr, P.ExprStmt})
_FUEL: Final = costs.LOOP_ITERATION_FUEL


class BlockFailure(VerifierFailure):
    """A block form the rule refuses."""


def expected_blocks(
    plan: ExecutionPlan, tables: Tables, options_key: str, facts: PlanFacts | None
) -> dict[str, tuple[int, ...]]:
    """Generated function name -> the units of its block loops, in ``walk_loops`` order (none
    unless the key's options ask for blocks)."""
    if facts is None or "blocks=1" not in options_key.split(";"):
        return {}
    out: dict[str, tuple[int, ...]] = {}
    for index, fid in enumerate(tables.functions):
        info = plan.functions.get(fid)
        if info is None:
            continue
        units = [block_units(plan, facts, loop) for loop in walk_loops(plan, info.function.body)]
        out[function_name(index)] = tuple(u for u in units if u is not None)
    return out


def _name(node: Any, ident: str | None = None) -> bool:
    return type(node) in _NAMES and (ident is None or node.id == ident) and type(node.ctx) is ast.Load


def _const(node: Any, value: int | None = None) -> bool:
    return type(node) in _CONSTS and type(node.value) is int and (value is None or node.value == value)


def _store(node: Any, ident: str | None = None) -> bool:
    return (
        type(node) in _NAMES
        and type(node.id) is str
        and (ident is None or node.id == ident)
        and type(node.ctx) is ast.Store
    )


def _assign(stmt: Any) -> Any:
    """The single target of a plain assignment, or None."""
    if type(stmt) in _ASSIGNS and len(stmt.targets) == 1 and not getattr(stmt, "type_comment", None):
        return stmt.targets[0]
    return None


def _binop(node: Any, op: type[ast.operator]) -> bool:
    return type(node) in _BINOPS and type(node.op) is op


def _compare(node: Any, op: type[ast.cmpop]) -> bool:
    return (
        type(node) in _COMPARES
        and len(node.ops) == 1
        and type(node.ops[0]) is op
        and len(node.comparators) == 1
    )


def _call(node: Any, stub: str, count: int) -> bool:
    return type(node) in _CALLS and _name(node.func, stub) and not node.keywords and len(node.args) == count


def _if_only(stmt: Any) -> bool:
    return type(stmt) in _IFS and not stmt.orelse and len(stmt.body) == 1


def stores_pool(stmt: Any) -> bool:
    """Whether ``stmt`` is an assignment with a pool name among its targets."""
    if type(stmt) not in _ASSIGNS:
        return False
    for target in stmt.targets:
        names = target.elts if type(target) in _TUPLES else [target]
        if any(type(n) in _NAMES and type(n.id) is str and POOL.match(n.id) for n in names):
            return True
    return False


class BlockRules:
    """The approved pool nodes of one generated function, and the block and pool loops found."""

    def __init__(self, expected: tuple[int, ...]) -> None:
        self.pending = list(reversed(expected))
        self.loads: set[int] = set()
        self.stores: set[int] = set()
        self.calls: set[int] = set()
        self.statements: set[int] = set()
        """Approved statements that store a pool (the verifier checks their other parts)."""
        self.loops: dict[int, tuple[str, int]] = {}
        """``id`` of a block loop's ``for`` -> (pool, units)."""
        self.chunks: dict[int, tuple[str, str]] = {}
        """``id`` of a pool loop's chunk ``for`` -> (count ``n``, iteration ``j``)."""
        self.takes: set[int] = set()
        """Chunk exits ``bk = bk - j [ - 1]`` approved (each right before its ``break``)."""

    def _load(self, node: Any, pool: str) -> None:
        if not _name(node, pool):
            raise BlockFailure("a block form reads another name than its pool")
        self.loads.add(id(node))

    def _stored(self, node: Any, pool: str) -> None:
        if not _store(node, pool):
            raise BlockFailure("a block form stores another name than its pool")
        self.stores.add(id(node))

    # --- the block loop ----------------------------------------------------------------------

    def open(self, stmts: list[ast.stmt], index: int) -> tuple[str, int]:
        """``bk = 0`` at ``stmts[index]``: its ``for``, draw and ``_s_bkend`` (see the module)."""
        init: Any = stmts[index]
        target = _assign(init)
        if not (_store(target) and POOL.match(target.id) and _const(init.value, 0)):
            raise BlockFailure("a pool starts as bk = 0")
        pool = target.id
        if index + 2 >= len(stmts):
            raise BlockFailure("a pool is followed by its loop and its give-back")
        loop: Any = stmts[index + 1]
        end: Any = stmts[index + 2]
        if type(loop) not in _FORS or loop.orelse or not loop.body:
            raise BlockFailure("a pool is followed by its block loop")
        if not self.pending:
            raise BlockFailure("a block the plan has no block loop for")
        units = self.pending.pop()
        self._draw_iteration(loop.body[0], pool, units)
        if not (type(end) in _EXPRS and _call(end.value, END, 3)):
            raise BlockFailure("a block loop is followed by _s_bkend(R, bk, units)")
        self._fixed(end.value, pool, units, 1, 2)
        self.calls.add(id(end.value))
        self.stores.add(id(target))
        self.statements.add(id(init))
        self.loops[id(loop)] = (pool, units)
        return pool, units

    def _fixed(self, call: Any, pool: str, units: int, pool_at: int, units_at: int) -> None:
        if not _name(call.args[0], "R"):
            raise BlockFailure("a block stub receives the run state first")
        self._load(call.args[pool_at], pool)
        if not _const(call.args[units_at], units):
            raise BlockFailure("a block stub's work units differ from the plan's")

    def _draw_iteration(self, stmt: Any, pool: str, units: int) -> None:
        """``if bk > 0 and f >= 5: bk = bk - 1; f = f - 5 else: f, bk = _s_bkit(R, f, lr, bk, U)``."""
        test: Any = stmt.test if type(stmt) in _IFS else None
        if not (
            type(test) in _BOOLOPS
            and type(test.op) is ast.And
            and len(test.values) == 2
            and _compare(test.values[0], ast.Gt)
            and _const(test.values[0].comparators[0], 0)
            and _compare(test.values[1], ast.GtE)
            and _name(test.values[1].left, "f")
            and _const(test.values[1].comparators[0], _FUEL)
            and len(stmt.body) == 2
            and len(stmt.orelse) == 1
        ):
            raise BlockFailure("a block loop starts with its iteration's draw")
        self._load(test.values[0].left, pool)
        take, pay = stmt.body
        if not (
            _assign(take) is not None
            and _binop(take.value, ast.Sub)
            and _const(take.value.right, 1)
            and _assign(pay) is not None
            and _store(_assign(pay), "f")
            and _binop(pay.value, ast.Sub)
            and _name(pay.value.left, "f")
            and _const(pay.value.right, _FUEL)
        ):
            raise BlockFailure("a drawn iteration takes one from the pool and pays its fuel")
        self._stored(_assign(take), pool)
        self._load(take.value.left, pool)
        refill: Any = stmt.orelse[0]
        target: Any = _assign(refill)
        if not (
            type(target) in _TUPLES
            and len(target.elts) == 2
            and _store(target.elts[0], "f")
            and _call(refill.value, ITERATION, 5)
            and _name(refill.value.args[1], "f")
            and _name(refill.value.args[2], "lr")
        ):
            raise BlockFailure("an iteration the pool cannot pay is f, bk = _s_bkit(R, f, lr, bk, U)")
        self._stored(target.elts[1], pool)
        self._fixed(refill.value, pool, units, 3, 4)
        self.calls.add(id(refill.value))
        self.statements.update((id(take), id(refill)))

    # --- pool loops ----------------------------------------------------------------------------

    def pool_loop(
        self, loop: Any, pool: str, units: int, constants: tuple[int, ...]
    ) -> tuple[Any, list[Any]]:
        """A ``while True:`` in a block body, against the plan's next bulk loop (``constants``:
        worst, need, work, heavy). Returns (the chunk ``for``, the rooms to check against the
        plan's counters: rule 11)."""
        body = loop.body
        worst, need, _, heavy = constants
        if need or heavy or worst <= 0:
            raise BlockFailure("a pool loop is a fast loop without frames or text weight")
        first: Any = body[0] if body else None
        n_target = _assign(first)
        if not _store(n_target):
            raise BlockFailure("a pool loop starts by drawing its count")
        n = n_target.id
        rooms: list[Any] = []
        at = 1
        if _name(first.value, pool):
            self.loads.add(id(first.value))
        else:
            rooms.append(first.value)
            cut: Any = body[1] if len(body) > 1 else None
            if not (
                _if_only(cut)
                and _compare(cut.test, ast.Lt)
                and _name(cut.test.comparators[0], n)
                and _store(_assign(cut.body[0]), n)
            ):
                raise BlockFailure("a pool loop's count is cut to the pool")
            self._load(cut.test.left, pool)
            self._load(cut.body[0].value, pool)
            at = 2
        if len(body) != at + 4:
            raise BlockFailure("a pool loop is its draw, its chunk and break")
        fuel: Any = body[at]
        if not (
            _if_only(fuel)
            and _compare(fuel.test, ast.Lt)
            and _name(fuel.test.left, "f")
            and _binop(fuel.test.comparators[0], ast.Mult)
            and _name(fuel.test.comparators[0].left, n)
            and _const(fuel.test.comparators[0].right, worst)
            and _store(_assign(fuel.body[0]), n)
            and _binop(fuel.body[0].value, ast.FloorDiv)
            and _name(fuel.body[0].value.left, "f")
            and _const(fuel.body[0].value.right, worst)
        ):
            raise BlockFailure("a pool loop's count is cut to the worst-case fuel, the plan's")
        refill: Any = body[at + 1]
        target: Any = _assign(refill.body[0]) if _if_only(refill) else None
        count = 6 if not rooms else 7
        if not (
            _compare(refill.test, ast.Lt)
            and _name(refill.test.left, n)
            and _const(refill.test.comparators[0], 1)
            and type(target) in _TUPLES
            and len(target.elts) == 2
            and _store(target.elts[0], n)
            and _call(refill.body[0].value, RESERVE, count)
        ):
            raise BlockFailure("an empty draw is n, bk = _s_bkcap(R, f, lr, bk, worst, units[, room])")
        call: Any = refill.body[0].value
        if not (_name(call.args[1], "f") and _name(call.args[2], "lr") and _const(call.args[4], worst)):
            raise BlockFailure("_s_bkcap takes the fuel, lr and the plan's worst fuel")
        self._fixed(call, pool, units, 3, 5)
        if rooms:
            rooms.append(call.args[6])
        self._stored(target.elts[1], pool)
        self.calls.add(id(call))
        self.statements.add(id(refill.body[0]))
        chunk: Any = body[at + 2]
        if not (
            type(chunk) in _FORS
            and _store(chunk.target)
            and chunk.target.id != n
            and _call(chunk.iter, "_range", 1)
            and _name(chunk.iter.args[0], n)
            and type(body[at + 3]) in _BREAKS
        ):
            raise BlockFailure("a pool loop's chunk is for j in _range(n), then break")
        self._settle(chunk, pool, n)
        self.chunks[id(chunk)] = (n, chunk.target.id)
        return chunk, rooms

    def _settle(self, chunk: Any, pool: str, n: str) -> None:
        """The chunk's ``else`` starts ``if n:`` ending ``bk = bk - n; continue``."""
        done: Any = chunk.orelse[0] if chunk.orelse else None
        if not (type(done) in _IFS and _name(done.test, n) and len(done.body) >= 2):
            raise BlockFailure("a completed chunk of a pool loop starts with if n:")
        take: Any = done.body[-2]
        target = _assign(take)
        if not (
            type(done.body[-1]) in _CONTINUES
            and target is not None
            and _binop(take.value, ast.Sub)
            and _name(take.value.right, n)
        ):
            raise BlockFailure("a completed chunk takes its n iterations from the pool: bk = bk - n")
        self._stored(target, pool)
        self._load(take.value.left, pool)
        self.statements.add(id(take))

    def take(self, stmts: list[ast.stmt], index: int, pool: str, ivar: str) -> None:
        """``bk = bk - j`` or ``bk = bk - (j + 1)`` right before a ``break`` of the chunk."""
        stmt: Any = stmts[index]
        target = _assign(stmt)
        value = stmt.value
        count: Any = value.right if _binop(value, ast.Sub) else None
        if not (
            index + 1 < len(stmts)
            and type(stmts[index + 1]) in _BREAKS
            and target is not None
            and (
                _name(count, ivar)
                or (_binop(count, ast.Add) and _name(count.left, ivar) and _const(count.right, 1))
            )
        ):
            raise BlockFailure("a chunk leaves a pool loop taking what it started: bk = bk - j [+ 1], break")
        self._stored(target, pool)
        self._load(value.left, pool)
        self.statements.add(id(stmt))
        self.takes.add(id(stmts[index + 1]))

    def refund(self, node: Any, pool: str) -> None:
        """``lr + bk``: what a failure in a block body gives back."""
        if not (_binop(node, ast.Add) and _name(node.left, "lr")):
            raise BlockFailure("in a block the loop refund is lr plus the pool")
        self._load(node.right, pool)

    def finish(self) -> None:
        if self.pending:
            raise BlockFailure("a block loop of the plan is not generated as a block")


__all__ = ["ARITIES", "BLOCK_STUBS", "POOL", "BlockFailure", "BlockRules", "expected_blocks", "stores_pool"]
