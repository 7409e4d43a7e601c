"""The generated code of owned maps: the inline forms of ``map.get``, ``containsKey``, ``count``
and ``set`` on a map a bulk loop keeps as a dict (``owned_maps``, ``owned_map_stubs``).

Each form computes the operation's whole charge from the dict's size ``s`` with integer arithmetic
on locals, checks that every charge fits, and only then changes ``f`` and reads or updates the dict;
otherwise it calls ``_s_mox``, which settles, materializes and runs the exact stub (it always
raises: the inline check is exact). ``total`` is the fuel of the segment the operation closes
(paid by the exact stub before the operation's own charges). The forms, with ``m`` the dict, ``u``
the units cell, ``room`` the units the updates may count and ``most`` the entry limit:

* ``map.containsKey(m, k)``: ``t = s + 2 + total; if f >= t: f = f - t; out = k in m``.
* ``map.get(m, k)``: the same fuel, and ``k in m`` joins the check (a missing key is NotFound,
  raised by the exact stub after the fuel, as the reference raises it); then ``out = m[k]``.
* ``map.count(m)``: the same fuel; ``out = s``.
* ``m = map.set(m, k, v)``: ``c = s + (k not in m)``, fuel ``s + 3 + total + c // 32`` (copy,
  then the walk of ``flat_map_shape(c)``'s ``1 + 2 c`` nodes, ``(1 + 2 c) // 64``), and ``c <= most``
  and ``units + c <= room`` join the check; then ``m[k] = v`` and ``units = u[0] = units + c``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Final

from dotboxd.core import costs
from dotboxd.core.values import flat_map_shape

from . import pyast as P
from .owned_map_stubs import EXACT_OPS

_READ_BASE: Final = costs.COLLECTION_BASE_FUEL
_SET_BASE: Final = costs.COLLECTION_BASE_FUEL + 1
_ENTRIES_PER_WALK: Final = costs.SHAPE_WALK_NODES_PER_FUEL // 2
assert all(
    costs.read_fuel(s) == s + _READ_BASE
    and costs.copy_fuel(s, 1) == s + _SET_BASE
    and costs.shape_walk_fuel(flat_map_shape(c).nodes) == c // _ENTRIES_PER_WALK
    for s in (*range(300), 4095, 4096, 10**6, 2**40)
    for c in (s, s + 1)
), "the inline charges of owned maps (owned_map_code) no longer match core.costs"

Owned = tuple[str, str, str, str, str, str, str]
"""(map slot, dict slot, units cell, units room, most entries, size, units): ``ledger.Chunk.owned_map``.
The size slot holds ``len(m)`` for the whole loop: set from the dict after the take, and to the
new count by each update that adds a key (the only change to the dict's length). The units slot
holds what the cell holds (the generated code reads the slot and writes both)."""


def take(owned: Owned) -> list[ast.stmt]:
    """``m, u, room, most = _s_mown(R, v)``, ``size = _p_mlen(m)`` and ``units = 0`` before the loop."""
    slot, table, cell, room, most, size, units = owned
    targets = P.Tuple([P.store(table), P.store(cell), P.store(room), P.store(most)], P.STORE)
    return [
        P.Assign([targets], P.call("_s_mown", P.name("R"), P.name(slot))),
        P.assign(size, P.call("_p_mlen", P.name(table))),
        P.assign(units, P.const(0)),
    ]


def release(owned: Owned) -> ast.stmt:
    """``v = _s_mmat(R, m)`` after the loop (settles the updates, builds the value)."""
    slot, table = owned[0], owned[1]
    return P.assign(slot, P.call("_s_mmat", P.name("R"), P.name(table)))


def subscript(table: str, key: ast.expr, store: bool = False) -> ast.Subscript:
    """``m[k]`` (a dict item) or, with ``table`` a cell and ``key`` 0, the cell's count."""
    return ast.Subscript(P.name(table), key, P.STORE if store else P.LOAD, **P.POSITION)


def contains(key: ast.expr, table: str, negated: bool = False) -> ast.Compare:
    return P.Compare(key, [ast.NotIn() if negated else ast.In()], [P.name(table)])


def operation(
    builtin: str,
    owned: Owned,
    operands: list[ast.expr],
    out: str,
    total: int,
    exact_head: list[ast.expr],
    temp: Callable[[], str],
) -> list[ast.stmt]:
    """The statements of one inline form (``operands``: the key, and the value for ``map.set``, as
    leaves; ``exact_head``: ``R, f, lref, site`` of the ``_s_mox`` call; ``out`` receives the
    result of a read)."""
    _, table, cell, room, most, size, used = owned
    f = P.name("f")
    fuel = temp()
    code: list[ast.stmt] = []
    exact = P.expr_stmt(
        P.call("_s_mox", *exact_head, P.name(table), P.const(EXACT_OPS.index(builtin)), *operands)
    )
    if builtin == "map.set":
        key, item = operands
        count, units = temp(), temp()
        code.append(P.assign(count, P.add(P.name(size), contains(key, table, negated=True))))
        walk = P.binop(P.name(count), P.FLOORDIV, P.const(_ENTRIES_PER_WALK))
        code.append(P.assign(fuel, P.add(P.add(P.name(size), P.const(_SET_BASE + total)), walk)))
        code.append(P.assign(units, P.add(P.name(used), P.name(count))))
        test = P.and_(
            P.compare(f, P.GTE, P.name(fuel)),
            P.compare(P.name(count), P.LTE, P.name(most)),
            P.compare(P.name(units), P.LTE, P.name(room)),
        )
        done: list[ast.stmt] = [
            P.assign("f", P.sub(f, P.name(fuel))),
            P.Assign([subscript(table, key, store=True)], item),
            P.Assign([subscript(cell, P.const(0), store=True)], P.name(units)),
            P.assign(used, P.name(units)),
            P.assign(size, P.name(count)),
        ]
        return [*code, P.if_(test, done, [exact])]
    code.append(P.assign(fuel, P.add(P.name(size), P.const(_READ_BASE + total))))
    fits: ast.expr = P.compare(f, P.GTE, P.name(fuel))
    if builtin == "map.get":
        fits = P.and_(fits, contains(operands[0], table))
        result: ast.expr = subscript(table, operands[0])
    elif builtin == "map.containsKey":
        result = contains(operands[0], table)
    else:
        assert builtin == "map.count", builtin
        result = P.name(size)
    return [*code, P.if_(fits, [P.assign("f", P.sub(f, P.name(fuel))), P.assign(out, result)], [exact])]


__all__ = ["Owned", "contains", "operation", "release", "subscript", "take"]
