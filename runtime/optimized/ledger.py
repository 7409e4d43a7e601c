"""Fuel accounting inside generated code: the two ledgers and the loop contexts they need.

Generated functions keep the remaining fuel in the local ``f``. How the reference interpreter's
charges (``spec/costs.md``: 1 per statement and expression node, 5 per loop iteration, built-in base
fuel) turn into updates of ``f`` depends on where the code runs:

* **checked** code (everything outside bulk loops) groups consecutive charges into *segments*: a
  segment opens with ``f -= total`` and ``if f < 0: _s_fx(...)`` *before* the evaluation it pays for,
  and closes before anything that could fail, call out or branch. A segment therefore contains no
  failure point, so paying for it up front is exact; when it does not fit, ``_s_fx`` replays its
  charges one by one through the meter, which refuses exactly the charge the reference refuses.
* **fast** code (the body of a bulk loop whose fuel was reserved for the whole chunk) never checks:
  one iteration's unconditional charges (``base``) are paid in bulk when the chunk ends, only the
  extra cost of dearer branch arms is subtracted as it happens, and every point that can fail knows
  statically how far ``f`` is from the exact value (``ahead``), so it can hand the exact fuel to the
  fault stub. Iteration ``j`` of a chunk sees exact fuel ``f - j * base + ahead``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from . import pyast as P
from .owned_map_code import Owned


@dataclass(slots=True)
class Segment:
    """An open checked segment: where it opened (the block and the index its check goes to), the
    loop refund at that point, and the charges it covers so far."""

    out: list[ast.stmt]
    index: int
    lref: ast.expr
    charges: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Chunk:
    """A bulk loop chunk in progress: ``n`` iterations reserved, the iteration counter ``ivar``
    (minus ``start`` for a forRange loop) gives the index ``j`` of the current one."""

    fast: bool
    n: str
    ivar: str
    start: str | None
    base_nodes: list[ast.Constant] = field(default_factory=list)
    continue_fixes: list[tuple[ast.Constant, int, list[ast.stmt], ast.stmt]] = field(default_factory=list)
    """``f += fix`` before each ``continue`` of a fast body: the constant, the ``ahead`` where it stands,
    and the block and statement that hold it (dropped when the fix turns out to be 0)."""
    fault_sites: list[int] = field(default_factory=list)
    ahead: int = 0
    refund_at: tuple[list[ast.stmt], int] | None = None
    """Checked chunks: where an iteration has started (the block and index), so the refund
    ``lr + n - j - 1`` that every failure point of the iteration passes can be computed once there."""
    refund: str | None = None
    """The slot holding that refund, once a failure point needed it."""
    index_node: ast.expr | None = None
    assigned: frozenset[str] = frozenset()
    """Slots the loop body assigns (its counter too): every other slot holds one value for the
    whole loop, so a read of a list held in one can be prepared once (``views``)."""
    views: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """List slot -> (its size slot, its read-fuel slot, its buffer view ``g<n>``), set once before
    the loop (``view_stmts``)."""
    view_stmts: list[ast.stmt] = field(default_factory=list)
    needs: dict[tuple[str, int], str] = field(default_factory=dict)
    """(read-fuel slot, segment) -> the slot holding their sum, set once before the loop, so an
    inline read tests and subtracts one name instead of adding the two on every iteration."""
    counted: frozenset[int] = frozenset()
    """The ``c + k`` nodes of the body's counter updates whose overflow checks the chunk's capped
    reservation makes unnecessary (``codegen.counter_room``)."""
    owned: tuple[str, str, str] | None = None
    """(list slot, buffer slot, room slot) of the list this checked chunk appends to in place
    (``owned.owned_list``, ``codegen.owned_add``), or None."""
    owned_map: Owned | None = None
    """The slots of the map this checked chunk
    keeps as a dict (``owned_maps.owned_map``, ``codegen.owned_map_op``), or None."""
    owned_text: Any = None
    """The ``codegen_text.OwnedText`` this checked chunk builds in a parts list, or None."""
    counter_fixed: bool = False
    """The loop's body never assigns its counter, so a failure's refund of reserved iterations
    (``lr + n - j - 1``) is the same at every point of an iteration and can be computed where a
    failure happens (``codegen.lref``) instead of at the start of every iteration, which would cost
    the hot path five operations for a value only failure paths read."""
    refund_uses: list[ast.expr] = field(default_factory=list)
    """The refunds computed where failures happen; past ``LAZY_REFUNDS`` of them the body reads one
    slot instead (``codegen.chunk_body``), so the generated code stays proportional to the IR."""
    pool: tuple[str, int] | None = None
    """(pool slot, units) when this chunk draws from its outer loop's iteration block
    (``blocks.py``, ``codegen_blocks.py``): it then has no reservation or give-back of its own."""
    started: int = 1
    """1 once the current iteration counts as one (always for forRange; for while only after its
    condition held): a failure gives back ``n - j - started`` reserved iterations."""

    def index(self) -> ast.expr:
        """``j``: the number of iterations of this chunk before the current one (one shared node:
        it is never an operand of the kernel's own arithmetic and never patched)."""
        node = self.index_node
        if node is None:
            node = P.name(self.ivar) if self.start is None else P.sub(P.name(self.ivar), P.name(self.start))
            self.index_node = node
        return node

    def base(self) -> ast.Constant:
        node = P.const(0)
        self.base_nodes.append(node)
        return node

    def exact_fuel(self) -> ast.expr:
        """The exact remaining fuel at the current point of a fast iteration."""
        expr: ast.expr = P.sub(P.name("f"), P.mul(self.index(), self.base()))
        if self.ahead:
            expr = P.add(expr, P.const(self.ahead)) if self.ahead > 0 else P.sub(expr, P.const(-self.ahead))
        return expr

    def unstarted(self, started: int) -> ast.expr:
        """Reserved iterations not started: ``n - j - started`` (``started`` is 1 when the current
        iteration counts, 0 for a while loop whose condition just failed)."""
        expr: ast.expr = P.sub(P.name(self.n), self.index())
        return P.sub(expr, P.const(started)) if started else expr

    def finish(self, body_live: bool) -> int:
        """Fix ``base`` once the body is emitted: what one iteration costs on its main path."""
        base = -self.ahead if body_live else 0
        for node in self.base_nodes:
            node.value = base
        for node, ahead, block, update in self.continue_fixes:
            node.value = base + ahead
            if not node.value:
                block.remove(update)  # ``f += 0``; the block still ends with its ``continue``
        return base


@dataclass(slots=True)
class Loop:
    """A loop being emitted: ``chunk`` is set while emitting the body of a bulk chunk."""

    chunk: Chunk | None


@dataclass(slots=True)
class Inline:
    """An inlined call in progress: its result slot and the return edges to reconcile."""

    result: str
    edges: list[tuple[list[ast.stmt], int]] = field(default_factory=list)
