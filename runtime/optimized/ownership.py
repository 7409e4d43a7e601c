"""Owned lists re-proved on the generated code: ``_s_lown`` takes only a list no one else can see.

Why: ``b, t = _s_lown(R, v)`` hands generated code the raw buffer behind the list in ``v``, and
``_p_push(b, x)`` appends to it in place. That is invisible only while ``v`` is the one holder of
the newest version of a buffer made in this run: a list that is a parameter (the host, or another
run, holds it too), that was copied to another local, passed to a function or binding or stored in
another value, or that is taken twice at once, would see items another holder appended. The code
generator proves ownership on the plan's IR (``owned.owned_list``); a tampered artifact or a codegen
bug could put ``_s_lown`` on any list. So the verifier proves it again, on the generated function,
for every slot a ``_s_lown`` takes (``check_ownership``):

* **where the list comes from**: the slot is not a parameter, and every store to it is
  ``v, f = _s_i_list_empty(R, ...)`` (a fresh list), ``v, f = _s_i_list_add(R, f, lr, site, v, x)``
  with ``x`` not reading ``v`` (the newest version of its own buffer), or ``v = _s_lmat(R, b)`` with
  ``b`` a buffer taken from ``v``;
* **who reads it**: every other load of the slot is the list argument of a reader that keeps
  nothing (``_s_i_list_count``, ``_s_i_list_get``, ``_p_lsize``, ``_p_lbuf``), the receiver of such a
  self-add, the argument of its ``_s_lown``, or the value of ``return (v, f)`` (which ends the
  function): never a copy to another slot, an argument of a function, cold path or binding, or an
  item of another value;
* **when the buffer lives**: each take is followed, in its block, by statements that touch neither
  the list nor the buffer, then the bulk loop that appends (the only place its buffer is used, and
  where the list slot is not touched), then ``v = _s_lmat(R, b)`` straight after the loop. Each
  buffer is taken once; no take or materialization stands anywhere else. So at most one buffer is
  live at a time and the list is never read while its buffer grows.

The verifier also ties each take to the plan: the loop after it must be one whose reservation the
plan marks as owning a list (``reservations.Reservation.owned``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .errors import VerifierFailure
from .shapes import ASSIGNS, NAMES, RETURNS, TUPLES, WHILES, callee, statements, stored_names, walk

_READERS = {"_s_i_list_count": 4, "_s_i_list_get": 4, "_p_lsize": 0, "_p_lbuf": 0}
"""Callees that read a list and keep nothing of it -> the position of the list argument."""
_ADD = "_s_i_list_add"
_ADD_RECEIVER = 4
_EMPTY = "_s_i_list_empty"


@dataclass(frozen=True, slots=True)
class Take:
    """One ``b, t = _s_lown(R, v)`` and the bulk loop it serves."""

    slot: str
    buffer: str
    loop: ast.While
    inside: frozenset[int]
    """``id`` of every node of the loop (where the buffer may be loaded)."""


def _fail(reason: str, node: ast.AST | None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(reason + where)


def _is_load(node: Any, ident: str) -> bool:
    return type(node) in NAMES and node.id == ident and type(node.ctx) is ast.Load


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """``body`` and every statement list nested in it."""
    yield body
    for stmt in body:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _blocks(inner)


def _mentions(node: ast.AST, names: set[str]) -> bool:
    return any(type(sub) in NAMES and sub.id in names for sub in walk(node))


def _takes(fn: ast.FunctionDef) -> list[Take]:
    """Every take with the shape around it: (views), the bulk loop, the materialization."""
    found: list[Take] = []
    buffers: set[str] = set()
    for block in _blocks(fn.body):
        stmt: Any
        for index, stmt in enumerate(block):
            value: Any = getattr(stmt, "value", None)
            if callee(value) != "_s_lown":
                continue
            target: Any = stmt.targets[0] if type(stmt) in ASSIGNS and len(stmt.targets) == 1 else None
            args = value.args
            if not (
                type(target) in TUPLES
                and len(target.elts) == 2
                and type(target.elts[0]) in NAMES
                and len(args) == 2
                and type(args[1]) in NAMES
                and type(args[1].ctx) is ast.Load
            ):
                raise _fail("_s_lown takes a list slot into a buffer and a slot", stmt)
            slot, buffer = str(args[1].id), str(target.elts[0].id)
            if buffer in buffers:
                raise _fail(f"buffer {buffer!r} is taken twice", stmt)
            buffers.add(buffer)
            loop, inside = _served_loop(block, index, slot, buffer)
            found.append(Take(slot, buffer, loop, inside))
    return found


def _served_loop(
    block: list[ast.stmt], index: int, slot: str, buffer: str
) -> tuple[ast.While, frozenset[int]]:
    """The bulk loop a take at ``block[index]`` serves (and the ``id`` of its every node); its
    materialization must follow it."""
    both = {slot, buffer}
    for at in range(index + 1, len(block)):
        stmt = block[at]
        if type(stmt) in WHILES:
            assert isinstance(stmt, ast.While)
            after: Any = block[at + 1] if at + 1 < len(block) else None
            value: Any = getattr(after, "value", None)
            if not (
                type(after) in ASSIGNS
                and len(after.targets) == 1
                and type(after.targets[0]) in NAMES
                and after.targets[0].id == slot
                and callee(value) == "_s_lmat"
                and len(value.args) == 2
                and _is_load(value.args[1], buffer)
            ):
                raise _fail("an owned loop is followed by the materialization of its list", stmt)
            inside: set[int] = set()
            for sub in walk(stmt):
                inside.add(id(sub))
                if type(sub) in NAMES and sub.id == slot:
                    raise _fail("an owned loop touches its list while the buffer grows", sub)
                if callee(sub) in ("_s_lown", "_s_lmat"):
                    raise _fail("an owned loop takes or materializes a list", sub)
            return stmt, frozenset(inside)
        if _mentions(stmt, both):
            raise _fail("between a take and its loop, the list and buffer are untouched", stmt)
    raise _fail("a take with no owned loop after it", block[index])


def _check_buffer_scope(nodes: list[Any], takes: list[Take], fn: ast.FunctionDef) -> None:
    """Each buffer is loaded only inside its loop and by its materialization; ``_s_lmat`` stands
    nowhere else (``nodes``: every node of the function)."""
    inside = {take.buffer: take.inside for take in takes}
    materialized = {id(node.args[-1]) for node in nodes if callee(node) == "_s_lmat" and node.args}
    if len(materialized) != len(takes):
        raise _fail("a list materialized without its take", fn)
    placed: set[int] = set()
    for node in nodes:
        if type(node) in NAMES and node.id in inside:
            _one_place(node, placed)
            if (
                type(node.ctx) is ast.Load
                and id(node) not in inside[node.id]
                and id(node) not in materialized
            ):
                raise _fail(f"buffer {node.id!r} used outside its owned loop", node)


def _one_place(node: Any, placed: set[int]) -> None:
    """A name node of an owned list or its buffer stands at one place of the function. The checks
    here approve such loads by node identity (a buffer load inside its loop, a list load as a
    reader's argument), and ``compile()`` runs a node object shared into a second place there too: a
    buffer load of the loop shared into a push elsewhere, a reader's list argument shared into a copy
    to another slot (review6). The walk lists a shared node at each of its places; the generator
    shares none of these."""
    if id(node) in placed:
        raise _fail(f"a name node of {node.id!r} stands at two places", node)
    placed.add(id(node))


def _store_ok(stmt: Any, slot: str, buffers: set[str]) -> bool:
    """A store to ``slot`` that keeps it the one holder of the newest version of its own buffer."""
    if type(stmt) not in ASSIGNS or len(stmt.targets) != 1:
        return False
    target, value = stmt.targets[0], stmt.value
    name = callee(value)
    if type(target) in NAMES:
        return (
            name == "_s_lmat"
            and len(value.args) == 2
            and type(value.args[1]) in NAMES
            and (value.args[1].id in buffers)
        )
    if not (
        type(target) in TUPLES
        and len(target.elts) == 2
        and type(target.elts[0]) in NAMES
        and target.elts[0].id == slot
    ):
        return False
    if name == _EMPTY:
        return True
    return (
        name == _ADD
        and len(value.args) == _ADD_RECEIVER + 2
        and _is_load(value.args[_ADD_RECEIVER], slot)
        and not _mentions(value.args[_ADD_RECEIVER + 1], {slot})
    )


def _allowed_loads(stmts: list[ast.stmt], nodes: list[Any], slots: set[str]) -> set[int]:
    """``id`` of the loads of owned ``slots`` that keep nothing of the list (module docstring)."""
    allowed: set[int] = set()
    for stmt in stmts:
        value: Any = getattr(stmt, "value", None)
        if type(stmt) in RETURNS and type(value) in TUPLES and value.elts:
            allowed.add(id(value.elts[0]))
        if callee(value) == _ADD and len(value.args) > _ADD_RECEIVER:
            receiver = value.args[_ADD_RECEIVER]
            if type(receiver) in NAMES and receiver.id in stored_names(stmt):
                allowed.add(id(receiver))
    for node in nodes:
        name = callee(node)
        if name == "_s_lown" and len(node.args) == 2:
            allowed.add(id(node.args[1]))
        elif name in _READERS and len(node.args) > _READERS[name]:
            allowed.add(id(node.args[_READERS[name]]))
    return allowed


def check_ownership(fn: ast.FunctionDef, params: set[str]) -> dict[int, Take]:
    """Re-prove every take of ``fn`` (module docstring); raise ``VerifierFailure`` when one fails.
    Returns the takes by the ``id`` of the loop each serves (for the tie to the plan)."""
    takes = _takes(fn)
    if not takes:
        return {}
    nodes = list(walk(fn))
    stmts = list(statements(fn.body))
    slots = {take.slot for take in takes}
    _check_buffer_scope(nodes, takes, fn)
    for slot in slots:
        if slot in params:
            raise _fail(f"owned list {slot!r} is a parameter", fn)
        buffers = {take.buffer for take in takes if take.slot == slot}
        for stmt in stmts:
            if slot in stored_names(stmt) and not _store_ok(stmt, slot, buffers):
                raise _fail(f"owned list {slot!r} is assigned something other than its own versions", stmt)
    allowed = _allowed_loads(stmts, nodes, slots)
    placed: set[int] = set()
    for node in nodes:
        if type(node) in NAMES and node.id in slots:
            _one_place(node, placed)
            if type(node.ctx) is ast.Load and id(node) not in allowed:
                raise _fail(f"owned list {node.id!r} is read where it may be kept", node)
    return {id(take.loop): take for take in takes}


__all__ = ["Take", "check_ownership"]
