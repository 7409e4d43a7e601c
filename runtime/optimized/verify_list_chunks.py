"""Verifier rule 22: fast list chunks (``list_chunks``), checked without trusting the generator.

A fast list chunk stands between a ``_s_cap`` reservation and its checked chunk::

    n = _s_cap(R, f, d, lr, k, stop, ...)
    L = _p_len(b)                                  # only with an owned add
    t = <fuel of the chunk>
    if n and f >= t and t >= n * 5 [and L + n <= room] [and k >= 0 and k + n <= s ...]:
        for v in _range(k, k + n):
            <body: no charge, no loop, jump or return, no call but pure helpers and fault stubs>
        f = f - t
        k = k + n
        continue
    for v in _range(k, k + n):                     # the checked chunk
        ...

What the rules guarantee whatever the generator wrote:

* **fuel never goes negative undetected, and every item pays at least its iteration**: the body
  neither stores nor charges ``f`` (it reads it only as a fault stub's argument, and a fault stub
  touches the meter only when it raises), and after the loop ``f = f - t`` with ``f >= t`` and
  ``t >= 5 n`` tested first; the iterations themselves were charged by the reservation (the
  ``for`` ranges over exactly its ``n``, which the body cannot change);
* **an unchecked view read stays inside its version**: ``g[v]`` is admitted only with ``v`` the loop's
  own counter, which the body never stores, and only when the test holds ``k >= 0`` and
  ``k + n <= s`` for that view's size ``s`` (rule 18's size slot): every ``v`` in ``[k, k + n)``
  is then a valid index;
* **an unchecked owned add stays inside the list's room**: the body pushes at most once per iteration,
  at its top level (so exactly once), onto a buffer ``b`` whose length ``L`` was taken right before
  the test and whose room is the slot its ``_s_lown`` returned, and the test holds ``L + n <= room``.

Anything else in that place - a missing or reordered test term, another view's size, a read by a
computed index, a conditional or second push, a charge, a call of a paying stub - is refused.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core import costs

from . import pyast as P
from .errors import VerifierFailure
from .shapes import walk
from .stubs import PURE_HELPERS
from .treeops import nodes

_FAULT = re.compile(r"_s_f[0-9]\Z")
_FORBIDDEN = frozenset({ast.For, ast.While, ast.Break, ast.Continue, ast.Return, ast.AugAssign})


def _fail(message: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(f"fast list chunk: {message}{where}")


def _kind(node: Any) -> type[ast.AST] | None:
    cls = type(node)
    return P.POSITIONED.get(cls, cls) if isinstance(node, ast.AST) else None


def _name(node: Any, ident: str | None = None, ctx: type[ast.AST] = ast.Load) -> bool:
    return (
        _kind(node) is ast.Name
        and type(node.ctx) is ctx
        and type(node.id) is str
        and (ident is None or node.id == ident)
    )


def _binop(node: Any, op: type[ast.operator]) -> tuple[Any, Any] | None:
    return (node.left, node.right) if _kind(node) is ast.BinOp and type(node.op) is op else None


def _compare(node: Any, op: type[ast.cmpop]) -> tuple[Any, Any] | None:
    if _kind(node) is not ast.Compare or len(node.ops) != 1 or len(node.comparators) != 1:
        return None
    return (node.left, node.comparators[0]) if type(node.ops[0]) is op else None


def _assign(stmt: Any) -> tuple[str, Any] | None:
    if _kind(stmt) is not ast.Assign or len(stmt.targets) != 1 or getattr(stmt, "type_comment", None):
        return None
    target = stmt.targets[0]
    return (target.id, stmt.value) if _name(target, ctx=ast.Store) else None


def _call(node: Any) -> str | None:
    if _kind(node) is not ast.Call or not _name(node.func) or node.keywords:
        return None
    return node.func.id  # type: ignore[no-any-return]


def _sum_of(node: Any, left: str, right: str) -> bool:
    pair = _binop(node, ast.Add)
    return pair is not None and _name(pair[0], left) and _name(pair[1], right)


@dataclass(slots=True)
class QuickChunk:
    """An approved fast list chunk: where its checked chunk stands, its own loop, its view reads."""

    checked_at: int
    loop: ast.For
    reads: set[int] = field(default_factory=set)
    room: str | None = None
    """The room slot its room term reads (``check_rooms`` then holds it to its one store)."""


@dataclass(slots=True)
class _Test:
    count: str
    total: str
    start: str
    length: str | None = None
    room: str | None = None
    low: bool = False
    sizes: set[str] = field(default_factory=set)


def check(body: list[ast.stmt], rooms: Mapping[str, str], sizes: Mapping[str, str]) -> QuickChunk:
    """Check the statements after a ``_s_cap`` reservation (``body[0]``) of a ``while k < stop:``
    loop up to its checked chunk. ``rooms`` maps each owned buffer to its ``_s_lown`` room slot,
    ``sizes`` each view to its size slot (rule 18)."""
    reservation = _assign(body[0])
    assert reservation is not None
    count = reservation[0]
    at = 1
    length: tuple[str, str] | None = None
    if at < len(body) and (found := _assign(body[at])) is not None and _call(found[1]) == "_p_len":
        args = found[1].args
        if len(args) != 1 or not _name(args[0]) or args[0].id not in rooms:
            raise _fail("the list's length is taken of an owned buffer", body[at])
        length = (found[0], args[0].id)
        at += 1
    total = _assign(body[at]) if at < len(body) else None
    if total is None:
        raise _fail("a reservation is followed by its chunk, or by a fast chunk's fuel", body[0])
    at += 1
    quick: Any = body[at] if at < len(body) else None
    if _kind(quick) is not ast.If or quick.orelse:
        raise _fail("the fast chunk is one `if` without else after its fuel", body[0])
    test = _test(quick.test, count, total[0], length)
    loop = _done(quick.body, test)
    checked_at = at + 1
    if checked_at >= len(body) or _kind(body[checked_at]) is not ast.For:
        raise _fail("a fast chunk is followed by its checked chunk", quick)
    approved = QuickChunk(checked_at, loop)
    _body(loop, test, length, rooms, sizes, approved)
    return approved


def _test(node: Any, count: str, total: str, length: tuple[str, str] | None) -> _Test:
    """``n and f >= t and t >= n * 5`` then the room and range terms."""
    if _kind(node) is not ast.BoolOp or type(node.op) is not ast.And or len(node.values) < 3:
        raise _fail("the fast chunk's test is `n and f >= t and t >= n * 5 and ...`", node)
    first, fuel, least, *rest = node.values
    covered = _compare(fuel, ast.GtE)
    floor = _compare(least, ast.GtE)
    per = _binop(floor[1], ast.Mult) if floor is not None else None
    if not (
        _name(first, count)
        and covered is not None
        and _name(covered[0], "f")
        and _name(covered[1], total)
        and floor is not None
        and _name(floor[0], total)
        and per is not None
        and _name(per[0], count)
        and _kind(per[1]) is ast.Constant
        and type(per[1].value) is int
        and per[1].value >= costs.LOOP_ITERATION_FUEL
    ):
        raise _fail("the fast chunk's test is `n and f >= t and t >= n * 5 and ...`", node)
    test = _Test(count=count, total=total, start="")
    for term in rest:
        _term(term, test, length)
    return test


def _term(term: Any, test: _Test, length: tuple[str, str] | None) -> None:
    """One room or range term: ``L + n <= room``, ``k >= 0`` or ``k + n <= s``."""
    upper = _compare(term, ast.LtE)
    lower = _compare(term, ast.GtE)
    if lower is not None and _name(lower[0]) and _kind(lower[1]) is ast.Constant and lower[1].value == 0:
        if type(lower[1].value) is not int or test.low or (test.start and lower[0].id != test.start):
            raise _fail("one `k >= 0` term, on the loop's start", term)
        test.start, test.low = lower[0].id, True
        return
    pair = _binop(upper[0], ast.Add) if upper is not None else None
    if upper is None or pair is None or not _name(pair[0]) or not _name(pair[1], test.count):
        raise _fail("a room or range term is `L + n <= room` or `k + n <= s`", term)
    if not _name(upper[1]):
        raise _fail("a room or range term compares with a slot", term)
    if length is not None and pair[0].id == length[0]:
        if test.room is not None:
            raise _fail("one room term", term)
        test.room = upper[1].id
        test.length = length[0]
        return
    if test.start and pair[0].id != test.start:
        raise _fail("the range terms name one start", term)
    test.start = pair[0].id
    test.sizes.add(upper[1].id)


def _done(block: list[ast.stmt], test: _Test) -> ast.For:
    """``for v in _range(k, k + n): ...; f = f - t; k = k + n; continue``."""
    if len(block) != 4 or _kind(block[0]) is not ast.For or _kind(block[3]) is not ast.Continue:
        raise _fail("a fast chunk runs its loop, pays, moves on and continues", block[0] if block else None)
    loop: Any = block[0]
    iterator = loop.iter
    args = iterator.args if _call(iterator) == "_range" else []
    bound = _binop(args[1], ast.Add) if len(args) == 2 else None
    start = args[0].id if args and _name(args[0]) else None
    if start is None or bound is None or not (_name(bound[0], start) and _name(bound[1], test.count)):
        raise _fail("a fast chunk's loop ranges over _range(k, k + n)", loop)
    if test.start and test.start != start:
        raise _fail("the range terms name the loop's start", loop)
    test.start = start
    if test.sizes and not test.low:
        raise _fail("a view range needs `k >= 0`", loop)
    paid = _assign(block[1])
    moved = _assign(block[2])
    spent = _binop(paid[1], ast.Sub) if paid is not None else None
    if (
        paid is None
        or paid[0] != "f"
        or spent is None
        or not (_name(spent[0], "f") and _name(spent[1], test.total))
    ):
        raise _fail("a fast chunk pays `f = f - t` after its loop", block[1])
    if moved is None or moved[0] != start or not _sum_of(moved[1], start, test.count):
        raise _fail("a fast chunk moves on by `k = k + n`", block[2])
    if loop.orelse or not _name(loop.target, ctx=ast.Store):
        raise _fail("a fast chunk's loop has a plain counter and no else", loop)
    return loop  # type: ignore[no-any-return]


def _body(
    loop: Any,
    test: _Test,
    length: tuple[str, str] | None,
    rooms: Mapping[str, str],
    sizes: Mapping[str, str],
    approved: QuickChunk,
) -> None:
    counter = loop.target.id
    fixed = {"f", test.count, test.start, test.total, counter}
    if length is not None:
        fixed.add(length[0])
    covered = {view for view, size in sizes.items() if size in test.sizes}
    pushes = 0
    for node in (child for stmt in loop.body for child in nodes(stmt)):  # ast.walk's sequence
        kind = _kind(node)
        if kind in _FORBIDDEN:
            raise _fail(f"{type(node).__name__} inside a fast chunk", node)
        if kind is ast.Name and type(node.ctx) is ast.Store and node.id in fixed:
            raise _fail(f"a fast chunk stores {node.id!r}", node)
        if kind is ast.Subscript:
            if not (
                type(node.ctx) is ast.Load
                and _name(node.value)
                and node.value.id in covered
                and _name(node.slice, counter)
            ):
                raise _fail("a fast chunk reads a view only by its counter, inside its tested range", node)
            approved.reads.add(id(node))
        callee = _call(node) if kind is ast.Call else None
        if kind is ast.Call and (callee is None or not (callee in PURE_HELPERS or _FAULT.match(callee))):
            raise _fail("a fast chunk calls only pure helpers and fault stubs", node)
        if callee == "_p_push":
            pushes += 1
    if not pushes:
        return
    top = [
        stmt.value.args for stmt in loop.body if _kind(stmt) is ast.Expr and _call(stmt.value) == "_p_push"
    ]
    buffer = top[0][0] if len(top) == 1 and len(top[0]) == 2 else None
    if pushes != 1 or len(top) != 1 or length is None or not _name(buffer, length[1]):
        raise _fail("a fast chunk pushes once per iteration, onto the buffer it measured", loop)
    if test.length != length[0] or test.room != rooms.get(length[1]):
        raise _fail("a fast chunk's pushes fit the buffer's room: `L + n <= room`", loop)
    approved.room = test.room


def check_rooms(fn: ast.FunctionDef, rooms: set[str]) -> None:
    """Each room slot a fast chunk's room term reads is stored once in the function (by its
    ``_s_lown``): no statement can widen the room between the take and the chunk. A function
    without fast list chunks has nothing to check (and is not walked again)."""
    if not rooms:
        return
    stores: dict[str, int] = {}
    for node in walk(fn):  # ``ast.walk``'s nodes, about twice as fast (issue 16)
        if _kind(node) is ast.Name and type(node.ctx) is ast.Store and node.id in rooms:
            stores[node.id] = stores.get(node.id, 0) + 1
    for room in sorted(rooms):
        if stores.get(room) != 1:
            raise _fail(f"the room {room} is stored more than once", fn)


__all__ = ["QuickChunk", "check", "check_rooms"]
