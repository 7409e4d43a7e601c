"""Verifier rule 20: pre-checked owned-map chunks (section 4.2.6, ``mapchunk``; issue 16).

Why: a pre-checked chunk runs charges and updates with no fuel or limit test, on the strength of
its reservation test ``_p_mcfit``. The verifier does not trust the generator, so it re-derives
from the chunk's own tree what the test must cover and refuses anything else:

* the guard ``if _p_mcfit(f, n, size, units, room, most, A, B, Z, K):`` stands right after a bulk
  reservation ``n = _s_cap(...)`` and right before that chunk's checked ``for``; ``size units room
  most`` are the slots of one ``_s_mown`` take (``m, u, room, most = _s_mown(R, v)``, then
  ``size = _p_mlen(m)``, ``units = 0``), and ``room`` and ``most`` are stored nowhere else;
* its body is exactly ``T = 0``, a ``for`` over the checked chunk's own ``_range(k, k + n)``, and
  ``break``; the ``for``'s ``else`` is the *pay* sequence then ``k = k + n; continue``;
* in the fast body the tally ``T`` is only increased, ``T = T + E`` with ``E`` a sum of constants,
  the size and walk terms ``x // 32`` (``mapchunk_shape``), and ``worst`` of the body - its most
  per-size fuel, fixed fuel, walk terms and dict updates over every path - is at most the guard's
  ``A B Z K``; a walk term's ``x`` is the size or a count set earlier in the same block as
  ``x = size + 1`` or ``x = size + y`` (``y = key not in m`` earlier there too); the size is only
  ever stored such a count, the units only ``units + size`` or ``units + count``;
* ``f`` and ``T`` are read only as a fault stub's fuel ``f - T`` / ``f - (T + E)``
  (``_s_f1.._s_f3``, ``_s_mox``), in the increments and in the pay sequence; no other stub is
  called but ``_s_lback`` (right after a pay sequence) and ``_s_mcover`` (in one);
* the pay sequence is exactly ``f = f - T; u[0] = units; if f < 0 or units > room or size > most:
  _s_mcover(R)``: whatever a tampered body did, the run cannot leave the chunk with its fuel,
  entries or units past the budget undetected (it fails closed, ``R-HOST-INTERNAL``).
"""

from __future__ import annotations

import ast
from collections import Counter
from functools import lru_cache
from typing import Any

from .errors import VerifierFailure
from .mapchunk import FAULTS, FITS, OVERSHOT
from .mapchunk_shape import (
    ASSIGNS,
    BINOPS,
    CONSTS,
    IFS,
    NAMES,
    ShapeError,
    Worst,
    _kind,
    increment,
    terms,
    worst,
)
from .owned_map_code import Owned as Take
from .shapes import walk
from .treeops import nodes

# ``Take``: an owned map's slots as the verifier reads them off its take (``slot`` and ``text`` unused)

_CALLS, _EXPRS, _FORS = _kind(ast.Call), _kind(ast.Expr), _kind(ast.For)
_COMPARES, _BOOLOPS, _BREAKS = _kind(ast.Compare), _kind(ast.BoolOp), _kind(ast.Break)
_CONTINUES, _PASSES, _SUBSCRIPTS = _kind(ast.Continue), _kind(ast.Pass), _kind(ast.Subscript)
_GUARD_MAX = 2**16
"""The largest constant the guard may carry (the bound's coefficients are small numbers)."""


def _fail(reason: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure("pre-checked map chunk: " + reason + where)


def _name(node: Any, ident: str | None = None) -> bool:
    return type(node) in NAMES and type(node.id) is str and (ident is None or node.id == ident)


def _call(node: Any, callee: str) -> bool:
    return type(node) in _CALLS and _name(node.func, callee) and not node.keywords


def is_guard(stmt: Any) -> bool:
    return type(stmt) in IFS and _call(stmt.test, FITS)


class MapChunkRules:
    """Rule 20 for one generated function."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        self.fn = fn
        self.takes: list[Take] = []
        self.counted: Counter[str] | None = None
        self.approved: set[int] = set()
        """``_p_mcfit`` and ``_s_mcover`` calls standing where this rule puts them."""

    def stores(self) -> Counter[str]:
        """How many times each name is stored in the function, counted on the first guard only:
        a walk of the whole function per function would cost every plan (most have no guard)
        about a sixth of its compile time."""
        if self.counted is None:
            names: list[Any] = [n for n in walk(self.fn) if type(n) in NAMES]  # ast.walk's nodes, faster
            self.counted = Counter(n.id for n in names if type(n.ctx) is ast.Store and type(n.id) is str)
        return self.counted

    def take(self, block: list[ast.stmt], index: int) -> None:
        """After ``m, u, room, most = _s_mown(R, v)``: ``size = _p_mlen(m)`` and ``units = 0`` (the
        generator's take) make its slots known; a take without them has no pre-checked chunk."""
        stmt: Any = block[index]
        after: Any = block[index + 1 : index + 3]
        elts = stmt.targets[0].elts
        if len(elts) != 4 or len(after) != 2 or not all(type(s) in ASSIGNS for s in after):
            return
        size, units = after[0], after[1]
        if not (
            _name(size.targets[0])
            and _call(size.value, "_p_mlen")
            and len(size.value.args) == 1
            and _name(size.value.args[0], elts[0].id)
            and _name(units.targets[0])
            and type(units.value) in CONSTS
            and units.value.value == 0
            and type(units.value.value) is int
        ):
            return
        table, cell, room, most = (e.id for e in elts)
        slots = Take("", table, cell, room, most, size.targets[0].id, units.targets[0].id, None)
        if len({table, cell, room, most, slots.size, slots.units}) == 6:
            self.takes.append(slots)

    def check(self, guard: Any, reservation: Any, checked: Any) -> Any:
        """The guard at ``while`` body index 1 (``reservation`` before it, the checked ``for``
        ``checked`` after it); returns the fast ``for``."""
        if type(checked) not in _FORS:
            raise _fail("the guard stands between a reservation and its checked chunk", guard)
        n = reservation.targets[0].id
        args = guard.test.args
        if len(args) != 10 or not (_name(args[0], "f") and _name(args[1], n)):
            raise _fail("the guard tests the fuel and the chunk's reservation", guard)
        slots = [a.id if _name(a) else None for a in args[2:6]]
        take = next((t for t in self.takes if [t.size, t.units, t.room, t.most] == slots), None)
        if take is None:
            raise _fail("the guard reads an owned map's size, units, room and entry limit", guard)
        stores = self.stores()
        if stores[take.room] != 1 or stores[take.most] != 1:
            raise _fail("an owned map's rooms are stored by its take alone", guard)
        bound = [a.value if type(a) in CONSTS and type(a.value) is int else -1 for a in args[6:]]
        if not all(0 <= c <= _GUARD_MAX for c in bound):
            raise _fail("the guard's bound is four small non-negative integers", guard)
        body = guard.body
        if guard.orelse or len(body) != 3 or type(body[2]) not in _BREAKS:
            raise _fail("the guard holds the tally's start, the fast loop and a break", guard)
        start, loop = body[0], body[1]
        tally = start.targets[0].id if type(start) in ASSIGNS and _name(start.targets[0]) else None
        if tally is None or not (type(start.value) in CONSTS and start.value.value == 0):
            raise _fail("the tally starts at 0", start)
        if tally in {"f", *vars_of(take)} or not tally.startswith("mc"):
            raise _fail("the tally is a slot of its own", start)
        if type(loop) not in _FORS or ast.dump(loop.iter) != ast.dump(checked.iter):
            raise _fail("the fast loop runs the checked chunk's iterations", loop)
        if ast.dump(loop.target) != ast.dump(checked.target):
            raise _fail("the fast loop counts in the checked chunk's counter", loop)
        step: Any = loop.iter.args[0] if len(loop.iter.args) == 2 else None
        tail = loop.orelse[3:]
        if not (
            _name(step)
            and self._pays(loop.orelse, tally, take)
            and len(tail) == 2
            and type(tail[0]) in ASSIGNS
            and _same(tail[0], f"{step.id} = {step.id} + {n}")
            and type(tail[1]) in _CONTINUES
        ):
            raise _fail("a completed fast loop pays, then moves on by the chunk", loop)
        self._body(loop.body, tally, take)
        found = worst(loop.body, tally, take.size, take.table)
        if not found.covered_by(Worst(*bound)):
            raise _fail(f"the guard's bound {tuple(bound)} does not cover the body's {found}", guard)
        self.approved.add(id(guard.test))
        return loop

    def _pays(self, block: list[ast.stmt], tally: str, take: Take) -> bool:
        """``block`` starts with ``f = f - T; u[0] = units; if f < 0 or units > room or size > most:
        _s_mcover(R)`` (approving that call)."""
        if len(block) < 3:
            return False
        test: Any = block[2]
        if not (
            _same(block[0], f"f = f - {tally}")
            and _same(block[1], f"{take.cell}[0] = {take.units}")
            and _same(
                test,
                f"if f < 0 or {take.units} > {take.room} or {take.size} > {take.most}:\n    {OVERSHOT}(R)",
            )
        ):
            return False
        self.approved.add(id(test.body[0].value))
        return True

    def _body(self, block: list[ast.stmt], tally: str, take: Take) -> None:
        """Every statement of the fast body, recursively through its ``if``s."""
        counts: set[str] = set()
        fresh: set[str] = set()
        for index, stmt in enumerate(block):
            kind = type(stmt)
            if kind in IFS and index >= 2 and self._pays(block[index - 2 :], tally, take):
                continue
            if kind in IFS:
                self._reads(stmt.test, tally, take.size)  # type: ignore[attr-defined]
                self._body(stmt.body, tally, take)  # type: ignore[attr-defined]
                if stmt.orelse:  # type: ignore[attr-defined]
                    self._body(stmt.orelse, tally, take)  # type: ignore[attr-defined]
            elif kind in _BREAKS or kind in _CONTINUES or kind in _PASSES:
                continue
            elif kind in _EXPRS and _call(stmt.value, "_s_lback"):  # type: ignore[attr-defined]
                if index < 3 or not self._pays(block[index - 3 :], tally, take):
                    raise _fail("a give-back follows the pay sequence", stmt)
            elif kind in ASSIGNS:
                self._assign(block, index, tally, take, counts, fresh)
            elif kind in _EXPRS:
                self._reads(stmt.value, tally, take.size)  # type: ignore[attr-defined]
            else:
                raise _fail(f"statement {kind.__name__} in a fast body", stmt)

    def _assign(
        self, block: list[ast.stmt], index: int, tally: str, take: Take, counts: set[str], fresh: set[str]
    ) -> None:
        stmt: Any = block[index]
        target, value = stmt.targets[0], stmt.value
        if len(stmt.targets) != 1 or not (_name(target) or type(target) in _SUBSCRIPTS):
            raise _fail("a fast body assigns one name or item at a time", stmt)
        if _name(target, "f"):
            if not self._pays(block[index:], tally, take) or not _lback_after(block, index + 3):
                raise _fail("the fuel is stored only by a pay sequence before a give-back", stmt)
            return
        if _name(target, tally):
            try:
                charge = increment(stmt, tally, take.size)
            except ShapeError as error:
                raise _fail(str(error), stmt) from None
            assert charge is not None
            for x in charge.walks:
                if x != take.size and x not in counts:
                    raise _fail(f"a walk term on {x!r}, not a count set before it in its block", stmt)
            return
        if _name(target) and target.id in (take.room, take.most, take.cell, take.table):
            raise _fail("a fast body stores an owned map's rooms", stmt)
        if _name(target, take.size):
            if not (_name(value) and value.id in counts):
                raise _fail("the size is only ever stored a count", stmt)
            return
        if _name(target, take.units):
            right: Any = value.right if type(value) in BINOPS and type(value.op) is ast.Add else None
            if not (
                right is not None  # a BinOp: only then has it a left operand to read
                and _name(value.left, take.units)
                and _name(right)
                and (right.id == take.size or right.id in counts)
            ):
                raise _fail("the units only ever grow by the size or a count", stmt)
            return
        self._reads(value, tally, take.size)
        if _name(target):
            counts.discard(target.id)
            fresh.discard(target.id)
            if _is_count(value, take.size, fresh):
                counts.add(target.id)
            elif _is_fresh(value, take.table):
                fresh.add(target.id)

    def _reads(self, node: Any, tally: str, size: str) -> None:
        """``f`` and the tally only as a fault stub's exact fuel; only fault stubs are called. The
        approval counts places, not nodes: the generator shares ``f`` name nodes, and a tamperer could
        share one from a fault stub's fuel into another place, which ``compile()`` runs too (review6)."""
        approved_fuel: dict[int, int] = {}  # per node: its places in fault stubs' exact fuel
        sub: Any
        for sub in nodes(node):  # ``ast.walk``'s sequence, cheaper (issue 16)
            if type(sub) in _CALLS and _name(sub.func):
                callee = sub.func.id
                if callee.startswith("_s_") and callee not in FAULTS:
                    raise _fail(f"{callee} in a fast body", sub)
                if callee in FAULTS:
                    if len(sub.args) < 2 or not _exact_fuel(sub.args[1], tally, size):
                        raise _fail(f"{callee} gets the exact fuel f - (T + pending)", sub)
                    for x in nodes(sub.args[1]):
                        approved_fuel[id(x)] = approved_fuel.get(id(x), 0) + 1
                elif callee.startswith("_fn") or callee.startswith("_x"):
                    raise _fail("a fast body calls no function", sub)
        met: dict[int, int] = {}
        for sub in nodes(node):
            if _name(sub) and sub.id in ("f", tally):
                places = met[id(sub)] = met.get(id(sub), 0) + 1
                if places > approved_fuel.get(id(sub), 0):
                    raise _fail("the fuel or tally read outside a fault stub's exact fuel", sub)


def vars_of(take: Take) -> tuple[str, ...]:
    return (take.table, take.cell, take.room, take.most, take.size, take.units)


def _same(node: Any, source: str) -> bool:
    """``node`` is the statement ``source`` (the generator's positioned twins dump as the plain
    classes: same names, same fields)."""
    try:
        return ast.dump(node) == _dump_of(source)
    except (TypeError, ValueError, AttributeError):
        return False


@lru_cache(maxsize=256)
def _dump_of(source: str) -> str:
    """The dump of the one statement ``source``: the same few texts (slot names differ little from
    plan to plan) are parsed on every verification otherwise (issue 16)."""
    return ast.dump(ast.parse(source).body[0])


def _lback_after(block: list[ast.stmt], index: int) -> bool:
    stmt: Any = block[index] if index < len(block) else None
    return type(stmt) in _EXPRS and _call(stmt.value, "_s_lback")


def _exact_fuel(node: Any, tally: str, size: str) -> bool:
    """``f - T`` or ``f - (T + E)`` with ``E`` a canonical sum (the pending charges)."""
    if not (type(node) in BINOPS and type(node.op) is ast.Sub and _name(node.left, "f")):
        return False
    paid = node.right
    if _name(paid, tally):
        return True
    if not (type(paid) in BINOPS and type(paid.op) is ast.Add and _name(paid.left, tally)):
        return False
    try:
        terms(paid.right, size)
    except ShapeError:
        return False
    return True


def _is_count(value: Any, size: str, fresh: set[str]) -> bool:
    """``size + 1`` or ``size + y`` with ``y`` a fresh-key test."""
    if not (type(value) in BINOPS and type(value.op) is ast.Add and _name(value.left, size)):
        return False
    right = value.right
    return (type(right) in CONSTS and right.value == 1 and type(right.value) is int) or (
        _name(right) and right.id in fresh
    )


def _is_fresh(value: Any, table: str) -> bool:
    """``key not in m``."""
    return (
        type(value) in _COMPARES
        and len(value.ops) == 1
        and type(value.ops[0]) is ast.NotIn
        and _name(value.comparators[0], table)
    )


__all__ = ["FITS", "OVERSHOT", "MapChunkRules", "is_guard"]
