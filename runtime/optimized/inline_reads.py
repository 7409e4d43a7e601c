"""The inline form of a fused read of a projected host event (issue 16, verifier rule 29).

Why: a predicate over a host event given as its checked snapshot (rule 25) spent most of its kernel
time in the fused read stubs' frames (``literal_reads``): a Python call of seven arguments and a
result pair per field read, to do a dict lookup and a few integer updates. The code generator now
writes that meter-less path into the entry function itself, in front of the very stub call it
stands for, which stays as the fallback:

    if _p_type(v0) is _p_dict and R.lazy:
        t0 = _p_dget(v0, _q0)                 # _q0 in v0 for map.containsKey
        t7 = R.strings + R.literals[0]
        t8 = f - 8 - _p_len(v0)               # both segments and the read's fuel (2 + size)
        t9 = R.ticks + 1
        if t0 is not None and R.literals[0] >= 0 and t7 <= R.room and t8 >= 0 and t9 < 64:
            R.strings = t7
            R.left = f - 6                    # what the literal's sync would have written
            R.ticks = t9
            f = t8
        else:
            t0, f = _s_lrget(R, f, lr, 1, 0, 2, v0)
    else:
        t0, f = _s_lrget(R, f, lr, 1, 0, 2, v0)

It is ``literal_reads._fused_get``'s (``_fused_has``'s) lazy path with the artifact's constants
folded in: the two segments' fuel (``totals``), the read's fuel ``costs.read_fuel(size)``, which is
``READ_BASE + size`` for every size (``_affine`` checks it), and the key, a namespace constant
``_q<index>`` bound to the text table's string (user text never stands in source). The same
conditions (armed without a meter, both segments and the read paid, the literal counted and within
the room, the tick short of a deadline check, the key present for ``get``: no snapshot value is
``None``, they are checked scalars), the same updates, else the same stub from the same state. A
map (not a ``dict``) or a run with its meter takes the stub, as before.

This module builds the form (``form``) from its fallback call; the code generator
(``codegen_inline_reads``) and the verifier (``verify_inline_reads``) both use it, the verifier to
rebuild the form from the call it has checked (rule 23) and compare.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from dotboxd.core import costs

from . import pyast as P
from .literal_reads import GET, HAS

TYPE: Final = "_p_type"
"""``builtins.type``: the test that tells a projected snapshot (a ``dict``) from a map."""
DICT: Final = "_p_dict"
"""``builtins.dict``."""
DGET: Final = "_p_dget"
"""``dict.get`` (unbound): the snapshot's value at a key, None when missing."""
LEN: Final = "_p_len"
"""``len`` (a pure helper already): the snapshot's size, which prices the read."""
KEY_PREFIX: Final = "_q"
"""``_q<index>``: the text table's string at ``index``, a namespace constant."""

HELPERS: Final[Mapping[str, Any]] = MappingProxyType({TYPE: type, DICT: dict, DGET: dict.get})
"""What the namespace binds for the form (only the form may name them: rule 29)."""
ATTRIBUTES: Final = frozenset({"lazy", "strings", "literals", "room", "ticks", "left"})
"""The run state's slots the form reads or writes (``fastlane.PendingRunState``)."""

READ_BASE: Final = costs.read_fuel(0)
"""``costs.read_fuel(size) == READ_BASE + size`` for every size (checked at import: ``_affine``)."""
EVERY: Final = costs.DEADLINE_EVERY_FUEL_CHARGES
STUBS: Final = frozenset({GET, HAS})


def _affine() -> None:
    """The form prices a read ``READ_BASE + len(snapshot)``: fail loudly if ``costs`` ever stops
    being that (a test checks it over a wide range too)."""
    for size in (0, 1, 2, 3, 63, 64, 65, 4096):
        if costs.read_fuel(size) != READ_BASE + size:
            raise AssertionError("costs.read_fuel is no longer READ_BASE + size")


_affine()


def key_name(index: int) -> str:
    return f"{KEY_PREFIX}{index}"


def key_values(texts: Sequence[tuple[str, str, str | None]]) -> dict[str, str]:
    """The ``_q<index>`` constants of a text table: each string literal's text."""
    return {key_name(i): raw for i, (kind, raw, _) in enumerate(texts) if kind == "string"}


def _attr(field: str, store: bool = False) -> ast.Attribute:
    return ast.Attribute(P.name("R"), field, ast.Store() if store else P.LOAD, **P.POSITION)


def _literal_size(index: int) -> ast.Subscript:
    return ast.Subscript(_attr("literals"), P.const(index), P.LOAD, **P.POSITION)


def _cmp(left: ast.expr, op: ast.cmpop, right: ast.expr) -> ast.Compare:
    return P.compare(left, op, right)


def form(
    call: ast.Call, out: str, scratch: tuple[str, str, str], event: str, totals: Sequence[int]
) -> ast.If:
    """The inline form of the fused read ``out, f = call`` (``call`` a ``_s_lrget`` / ``_s_lrhas``
    call whose sites and index are integer constants and whose map is the name ``event``), with
    the scratch slots ``(strings, after, ticks)``; ``totals`` the artifact's segment totals."""
    args: Any = call.args
    text_site, index, read_site = args[3].value, args[4].value, args[5].value
    paid = totals[text_site]
    charge = paid + totals[read_site] + READ_BASE
    strings, after, ticks = scratch
    ev = P.name(event)
    key = P.name(key_name(index))
    contains = call.func.id == HAS  # type: ignore[attr-defined]
    value = _cmp(key, ast.In(), ev) if contains else P.call(DGET, ev, key)
    checks: list[ast.expr] = [] if contains else [_cmp(P.name(out), ast.IsNot(), P.const(None))]
    checks += [
        _cmp(_literal_size(index), ast.GtE(), P.const(0)),
        _cmp(P.name(strings), ast.LtE(), _attr("room")),
        _cmp(P.name(after), ast.GtE(), P.const(0)),
        _cmp(P.name(ticks), ast.Lt(), P.const(EVERY)),
    ]
    fallback = P.assign2(out, "f", call)
    fast = P.if_(
        P.and_(*checks),
        [
            ast.Assign([_attr("strings", True)], P.name(strings), **P.POSITION),
            ast.Assign([_attr("left", True)], P.sub(P.name("f"), P.const(paid)), **P.POSITION),
            ast.Assign([_attr("ticks", True)], P.name(ticks), **P.POSITION),
            P.assign("f", P.name(after)),
        ],
        [fallback],
    )
    return P.if_(
        P.and_(_cmp(P.call(TYPE, ev), ast.Is(), P.name(DICT)), _attr("lazy")),
        [
            P.assign(out, value),
            P.assign(strings, P.add(_attr("strings"), _literal_size(index))),
            P.assign(after, P.sub(P.sub(P.name("f"), P.const(charge)), P.call(LEN, ev))),
            P.assign(ticks, P.add(_attr("ticks"), P.const(1))),
            fast,
        ],
        [fallback],
    )


def fallback_of(stmt: ast.stmt) -> ast.Assign | None:
    """The fallback ``out, f = call`` of what looks like an inline form (its outer ``else``), or None."""
    if not (type(stmt) in (ast.If, P.If) and isinstance(stmt, ast.If) and len(stmt.orelse) == 1):
        return None
    test = stmt.test
    if not (isinstance(test, ast.BoolOp) and test.values and isinstance(test.values[0], ast.Compare)):
        return None
    left = test.values[0].left
    if not (isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == TYPE):
        return None
    last = stmt.orelse[0]
    return last if isinstance(last, ast.Assign) else None


__all__ = [
    "ATTRIBUTES",
    "DGET",
    "DICT",
    "EVERY",
    "HELPERS",
    "KEY_PREFIX",
    "LEN",
    "READ_BASE",
    "STUBS",
    "TYPE",
    "event_names",
    "fallback_of",
    "form",
    "key_name",
    "key_values",
]


def event_names(stmt: ast.If) -> list[ast.expr]:
    """The three places an inline form names its event - ``_p_type(ev)``, the read (``_p_dget(ev,
    key)`` or ``key in ev``) and ``_p_len(ev)`` - where ``stmt`` has the form's outline, else
    nothing. Rule 25 admits the event there and nowhere else but a fused call's map."""
    test: Any = stmt.test
    body: Any = stmt.body
    try:
        kind = test.values[0].left.args[0]
        read = body[0].value
        place = read.args[0] if isinstance(read, ast.Call) else read.comparators[0]
        size = body[2].value.right.args[0]
    except (AttributeError, IndexError, TypeError):
        return []
    return [kind, place, size]
