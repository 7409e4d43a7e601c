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
  With text keys (``TextSlots``) a new key also adds its bytes and may raise the longest key, and
  the new map's key bytes count into the cell's second item against the allocation and
  string-bytes rooms, the longest against ``maxStringLength``.

Inside a branch of ``if map.containsKey(m, k)`` (``KnownKey``) the generator knows whether ``k`` is in
the dict, and the forms on that key use it rather than test it again: ``map.get`` checks the fuel
alone (the key is there), and ``map.set`` knows ``c`` (``s`` when the key is there, ``s + 1`` when
not). The charges and every check on them are the same; only a repeated ``in`` goes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from dotboxd.core import costs
from dotboxd.core.values import flat_map_shape, text_keyed_map_shape

from . import pyast as P
from .owned_map_stubs import EXACT_OPS, MAP_UNIT_ALLOC

_READ_BASE: Final = costs.COLLECTION_BASE_FUEL
_SET_BASE: Final = costs.COLLECTION_BASE_FUEL + 1
_ENTRIES_PER_WALK: Final = costs.SHAPE_WALK_NODES_PER_FUEL // 2
_BYTES_PER_UNIT: Final = costs.STRING_BYTES_PER_UNIT
assert all(
    costs.read_fuel(s) == s + _READ_BASE
    and costs.copy_fuel(s, 1) == s + _SET_BASE
    and costs.shape_walk_fuel(flat_map_shape(c).nodes) == c // _ENTRIES_PER_WALK
    for s in (*range(300), 4095, 4096, 10**6, 2**40)
    for c in (s, s + 1)
), "the inline charges of owned maps (owned_map_code) no longer match core.costs"
assert all(
    text_keyed_map_shape(c, longest, units).nodes == flat_map_shape(c).nodes
    and text_keyed_map_shape(c, longest, units).string_bytes
    == units * _BYTES_PER_UNIT
    == costs.string_bytes(units)
    and text_keyed_map_shape(c, longest, units).elements == c
    for c, longest, units in ((1, 1, 1), (3, 5, 9), (40, 2, 70), (5000, 7, 20000))
), "owned maps with text keys: the shape of such a map no longer matches what the inline form charges"


@dataclass(frozen=True, slots=True)
class KnownKey:
    """Whether the owned map's dict holds the key in slot ``key``: known in a branch of an ``if`` on
    the inline ``map.containsKey`` of that key, while neither the slot is assigned nor (for a key
    known absent) the dict updated. Sets never remove a key, and a set of the key itself makes it
    present; anything nested (a branch, a loop, an inlined call) drops what is known."""

    key: str
    present: bool


@dataclass(frozen=True, slots=True)
class TextSlots:
    """The slots a map with text keys needs besides ``Owned``'s: its rooms for allocation (which
    also pays the key texts' bytes) and total string bytes, the longest text allowed, the key
    texts' bytes and longest length now, and the key bytes its updates counted (the cell's
    second item)."""

    alloc_room: str
    string_room: str
    longest_allowed: str
    key_bytes: str
    longest: str
    used_bytes: str


@dataclass(frozen=True, slots=True)
class Owned:
    """The slots of a loop's owned map (``ledger.Chunk.owned_map``). ``size`` holds ``len(m)`` for
    the whole loop: set from the dict after the take, and to the new count by each update that
    adds a key (the only change to the dict's length); ``units`` holds what the cell's first item
    holds (the generated code reads the slot and writes both)."""

    slot: str
    table: str
    cell: str
    room: str
    most: str
    size: str
    units: str
    text: TextSlots | None


def allocate(slot: str, new: Callable[[str], str], text_keys: bool) -> Owned:
    """Fresh slots for the owned map held in IR slot ``slot`` (``new``: the function's slot maker)."""
    text = TextSlots(*(new("t") for _ in range(6))) if text_keys else None
    return Owned(slot, new("m"), new("u"), new("t"), new("t"), new("t"), new("t"), text)


def take(owned: Owned) -> list[ast.stmt]:
    """Before the loop: ``m, u, room, most = _s_mown(R, v)`` (with text keys ``_s_mtown``, which
    also gives the text rooms and the keys' bytes and longest length), ``size = _p_mlen(m)``,
    ``units = 0`` (and ``used_bytes = 0``)."""
    names = [owned.table, owned.cell, owned.room, owned.most]
    zeros = [owned.units]
    text = owned.text
    if text is not None:
        names += [text.alloc_room, text.string_room, text.longest_allowed, text.key_bytes, text.longest]
        zeros.append(text.used_bytes)
    stub = "_s_mown" if text is None else "_s_mtown"
    targets = P.Tuple([P.store(name) for name in names], P.STORE)
    return [
        P.Assign([targets], P.call(stub, P.name("R"), P.name(owned.slot))),
        P.assign(owned.size, P.call("_p_mlen", P.name(owned.table))),
        *(P.assign(name, P.const(0)) for name in zeros),
    ]


def release(owned: Owned) -> ast.stmt:
    """``v = _s_mmat(R, m)`` after the loop (settles the updates, builds the value)."""
    return P.assign(owned.slot, P.call("_s_mmat", P.name("R"), P.name(owned.table)))


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
    present: bool | None = None,
) -> list[ast.stmt]:
    """The statements of one inline form (``operands``: the key, and the value for ``map.set``, as
    leaves; ``exact_head``: ``R, f, lref, site`` of the ``_s_mox`` call; ``out`` receives the
    result of a read; ``present``: whether the dict holds the key, when the generator knows it)."""
    f, table, size = P.name("f"), owned.table, owned.size
    fuel = temp()
    exact = P.expr_stmt(
        P.call("_s_mox", *exact_head, P.name(table), P.const(EXACT_OPS.index(builtin)), *operands)
    )
    if builtin == "map.set":
        return _update(owned, operands, total, exact, temp, present)
    code: list[ast.stmt] = [P.assign(fuel, P.add(P.name(size), P.const(_READ_BASE + total)))]
    fits: ast.expr = P.compare(f, P.GTE, P.name(fuel))
    if builtin == "map.get":
        if present is not True:  # a key known present needs no test (known absent: the exact path)
            fits = P.and_(fits, contains(operands[0], table))
        result: ast.expr = subscript(table, operands[0])
    elif builtin == "map.containsKey":
        result = contains(operands[0], table)
    else:
        assert builtin == "map.count", builtin
        result = P.name(size)
    return [*code, P.if_(fits, [P.assign("f", P.sub(f, P.name(fuel))), P.assign(out, result)], [exact])]


def _update(
    owned: Owned,
    operands: list[ast.expr],
    total: int,
    exact: ast.stmt,
    temp: Callable[[], str],
    present: bool | None,
) -> list[ast.stmt]:
    """``m = map.set(m, k, v)``: the count after it, its fuel and units, and (text keys) the key
    texts' bytes and longest length after it; all checked, then the update. With ``present``
    known, the count is ``s`` or ``s + 1`` without testing the key."""
    (key, item), table, size, text = operands, owned.table, owned.size, owned.text
    f = P.name("f")
    fresh, fuel, units = temp(), temp(), temp()
    count = size if present else temp()  # a key known present leaves the count as it is
    code: list[ast.stmt] = []
    if present is None:
        code = [
            P.assign(fresh, contains(key, table, negated=True)),
            P.assign(count, P.add(P.name(size), P.name(fresh))),
        ]
    elif not present:
        code = [P.assign(count, P.add(P.name(size), P.const(1)))]
    code += [
        P.assign(
            fuel,
            P.add(
                P.add(P.name(size), P.const(_SET_BASE + total)),
                P.binop(P.name(count), P.FLOORDIV, P.const(_ENTRIES_PER_WALK)),
            ),
        ),
        P.assign(units, P.add(P.name(owned.units), P.name(count))),
    ]
    tests = [
        P.compare(f, P.GTE, P.name(fuel)),
        P.compare(P.name(count), P.LTE, P.name(owned.most)),
        P.compare(P.name(units), P.LTE, P.name(owned.room)),
    ]
    done: list[ast.stmt] = [
        P.assign("f", P.sub(f, P.name(fuel))),
        P.Assign([subscript(table, key, store=True)], item),
        P.Assign([subscript(owned.cell, P.const(0), store=True)], P.name(units)),
        P.assign(owned.units, P.name(units)),
    ]
    if count != size:
        done.append(P.assign(size, P.name(count)))
    if text is not None:
        key_bytes, longest, used, length = temp(), temp(), temp(), temp()
        code += [
            P.assign(key_bytes, P.name(text.key_bytes)),
            P.assign(longest, P.name(text.longest)),
            *_new_key_text(present, fresh, key, key_bytes, longest, length, text),
            P.assign(used, P.add(P.name(text.used_bytes), P.name(key_bytes))),
        ]
        tests += [
            P.compare(
                P.add(P.mul(P.name(units), P.const(MAP_UNIT_ALLOC)), P.name(used)),
                P.LTE,
                P.name(text.alloc_room),
            ),
            P.compare(P.name(used), P.LTE, P.name(text.string_room)),
            P.compare(P.name(longest), P.LTE, P.name(text.longest_allowed)),
        ]
        done += [
            P.Assign([subscript(owned.cell, P.const(1), store=True)], P.name(used)),
            P.assign(text.used_bytes, P.name(used)),
            P.assign(text.key_bytes, P.name(key_bytes)),
            P.assign(text.longest, P.name(longest)),
        ]
    return [*code, P.if_(P.and_(*tests), done, [exact])]


def _new_key_text(
    present: bool | None,
    fresh: str,
    key: ast.expr,
    key_bytes: str,
    longest: str,
    length: str,
    text: TextSlots,
) -> list[ast.stmt]:
    """What a new text key adds to the key bytes and longest key: tested (``if fresh:``), always
    (known absent), or nothing (known present)."""
    adds: list[ast.stmt] = [
        P.assign(length, P.call("_p_u16len", key)),
        P.assign(key_bytes, P.add(P.name(text.key_bytes), P.mul(P.name(length), P.const(_BYTES_PER_UNIT)))),
        P.assign(longest, P.call("_p_max", P.name(text.longest), P.name(length))),
    ]
    if present is None:
        return [P.if_(P.name(fresh), adds)]
    return [] if present else adds


__all__ = [
    "KnownKey",
    "Owned",
    "TextSlots",
    "allocate",
    "contains",
    "operation",
    "release",
    "subscript",
    "take",
]
