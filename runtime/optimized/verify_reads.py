"""Verifier rules for list-read views (``g<n>``), the one way generated code subscripts a list buffer.

An inline ``list.get`` in a bulk chunk reads the list's buffer directly (``codegen.list_read``): before
the loop ``s = _p_lsize(v)`` and, right after it, ``g = _p_lbuf(v)``; at the read
``if f >= q and x >= 0 and x < s: f = f - q; t = g[x]``. A list's buffer is shared by its versions
and may be longer than the list (a later version appended to it), so an unguarded ``g[x]`` could
show a kernel an item of another version, and the buffer itself is mutable: handed out as a value
it would let a kernel see a value change. These rules admit nothing else:

* ``g<n>`` is stored only by ``g<n> = _p_lbuf(v)`` (``v`` a slot), standing right after
  ``s = _p_lsize(v)`` of the same slot in the same block, and each ``g<n>`` and its ``s`` are stored
  by exactly one statement in the function: so ``s`` is always the size of the version whose buffer
  ``g`` holds (the first ``s`` items of a buffer never change), whatever happens to ``v`` later;
* ``g<n>`` is loaded only as ``g[x]`` (``x`` a name) in the value of the second statement of an
  ``if`` whose test is exactly ``f >= q and x >= 0 and x < s`` and whose body is exactly
  ``f = f - q; t = g[x]`` (``q`` a name, ``t`` a slot): the index is inside the version, and the read
  pays its fuel first. As a value, an argument, a return or a store target it is refused (a bare
  ``g<n>`` is neither a slot nor a stub), and ``_p_lbuf`` called anywhere else is refused.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from . import pyast as P
from .errors import VerifierFailure
from .shapes import walk

VIEW = re.compile(r"g(?:0|[1-9][0-9]{0,6})\Z")
"""The local-name kind of a list-read view (a code object may hold these besides slots)."""

TAKE = "_p_lbuf"
SIZE = "_p_lsize"


def _fail(message: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(f"list read: {message}{where}")


def _is(node: Any, kind: type[ast.AST]) -> bool:
    """``node`` is of ``kind`` exactly, or of the code generator's positioned twin of it (``pyast``)."""
    cls = type(node)
    return cls is kind or P.POSITIONED.get(cls) is kind


def _name(node: Any, ident: str | None = None, ctx: type[ast.AST] = ast.Load) -> bool:
    return (
        _is(node, ast.Name)
        and type(node.ctx) is ctx
        and type(node.id) is str
        and (ident is None or node.id == ident)
    )


def _call(node: Any, callee: str) -> bool:
    return (
        _is(node, ast.Call)
        and _name(node.func, callee)
        and not node.keywords
        and len(node.args) == 1
        and _name(node.args[0])
    )


def _assign(stmt: Any) -> tuple[str, Any] | None:
    """``name = value`` with one plain name target: (name, value)."""
    if not _is(stmt, ast.Assign) or len(stmt.targets) != 1 or getattr(stmt, "type_comment", None):
        return None
    target = stmt.targets[0]
    return (target.id, stmt.value) if _name(target, ctx=ast.Store) else None


def _compare(node: Any, op: type[ast.cmpop]) -> tuple[Any, Any] | None:
    if not _is(node, ast.Compare) or len(node.ops) != 1 or len(node.comparators) != 1:
        return None
    return (node.left, node.comparators[0]) if type(node.ops[0]) is op else None


def is_take(stmt: Any) -> bool:
    """Whether ``stmt`` stores a view (these rules then check all of it).

    ``_assign`` and ``_name`` written out, reading the same fields in the same order, with the class
    tests as set lookups and the view pattern tried only on a name that starts like one: the
    verifier asks this of every assignment it checks (issue 16)."""
    if type(stmt) not in _ASSIGN_KINDS or len(stmt.targets) != 1 or getattr(stmt, "type_comment", None):
        return False
    target = stmt.targets[0]
    if not (type(target) in _NAME_KINDS and type(target.ctx) is ast.Store and type(target.id) is str):
        return False
    ident, value = target.id, stmt.value
    return (ident[:1] == "g" and VIEW.match(ident) is not None) or _call(value, TAKE)


def _kinds(kind: type[ast.AST]) -> frozenset[type[ast.AST]]:
    """The classes ``_is(node, kind)`` accepts: ``kind`` and its positioned twin."""
    return frozenset({kind, *(cls for cls, base in P.POSITIONED.items() if base is kind)})


_ASSIGN_KINDS = _kinds(ast.Assign)
_NAME_KINDS = _kinds(ast.Name)


@dataclass(slots=True)
class ReadRules:
    """The views one generated function took and the reads and takes approved so far."""

    sizes: dict[str, str] = field(default_factory=dict)
    """View name -> the slot holding its version's size."""
    approved: set[int] = field(default_factory=set)
    """``id`` of each approved ``g[x]`` subscript and ``_p_lbuf`` call."""

    def take(self, block: list[ast.stmt], index: int, is_slot: Any) -> ast.Call:
        """``g = _p_lbuf(v)`` right after ``s = _p_lsize(v)``; returns the call for the walker."""
        found = _assign(block[index])
        assert found is not None
        view, value = found
        before = _assign(block[index - 1]) if index > 0 else None
        if not (VIEW.match(view) and _call(value, TAKE) and is_slot(value.args[0].id)):
            raise _fail("a view is only g<n> = _p_lbuf(<slot>)", block[index])
        if before is None or not _call(before[1], SIZE) or before[1].args[0].id != value.args[0].id:
            raise _fail("a view is taken right after its list's size", block[index])
        if view in self.sizes:
            raise _fail(f"{view} taken twice", block[index])
        self.sizes[view] = before[0]
        self.approved.add(id(value))
        return value  # type: ignore[no-any-return]

    def approve(self, stmt: ast.If) -> None:
        """Approve the read in ``if f >= q and x >= 0 and x < s: f = f - q; t = g[x]`` when the
        ``if`` has exactly that shape and ``s`` is ``g``'s size (anything else stays unapproved)."""
        test: Any = stmt.test
        body = stmt.body
        if not (_is(test, ast.BoolOp) and type(test.op) is ast.And and len(test.values) == 3):
            return
        if len(body) != 2 or not stmt.orelse:
            return
        fuel, low, high = (
            _compare(v, op) for v, op in zip(test.values, (ast.GtE, ast.GtE, ast.Lt), strict=True)
        )
        charge, read = _assign(body[0]), _assign(body[1])
        if fuel is None or low is None or high is None or charge is None or read is None:
            return
        subscript: Any = read[1]
        if not (_is(subscript, ast.Subscript) and type(subscript.ctx) is ast.Load):
            return
        view, index = subscript.value, subscript.slice
        if not (_name(view) and view.id in self.sizes and _name(index)):
            return
        spent: Any = charge[1]
        if not (
            _name(fuel[0], "f")
            and _name(fuel[1])
            and charge[0] == "f"
            and _is(spent, ast.BinOp)
            and type(spent.op) is ast.Sub
            and _name(spent.left, "f")
            and _name(spent.right, fuel[1].id)
            and _name(low[0], index.id)
            and _is(low[1], ast.Constant)
            and low[1].value == 0
            and type(low[1].value) is int
            and _name(high[0], index.id)
            and _name(high[1], self.sizes[view.id])
        ):
            return
        self.approved.add(id(subscript))

    def subscript(self, node: ast.Subscript) -> list[ast.expr]:
        """An approved ``g[x]``; returns ``x`` for the general walker. Each approval is for one
        place: a subscript object shared from its guarded form into an unguarded one (``compile()``
        runs it at both) is refused there (review6)."""
        if id(node) not in self.approved:
            raise _fail("a view is read only behind its fuel and range test", node)
        self.approved.remove(id(node))
        return [node.slice]

    def call(self, node: ast.Call) -> None:
        if id(node) not in self.approved:
            raise _fail("_p_lbuf is called only to take a view", node)

    def check_stores(self, fn: ast.FunctionDef) -> None:
        """Each view and its size slot are stored by exactly one statement of the function."""
        if not self.sizes:
            return
        watched = {*self.sizes, *self.sizes.values()}
        stores: dict[str, int] = {}
        node: Any
        for node in walk(fn):  # ``ast.walk``'s nodes, about twice as fast (issue 16)
            if _is(node, ast.Name) and type(node.ctx) is ast.Store and node.id in watched:
                stores[node.id] = stores.get(node.id, 0) + 1
        for ident in sorted(watched):
            if stores.get(ident) != 1:
                raise _fail(f"{ident} is a view or its size, stored more than once", fn)


def is_view_read(node: Any) -> bool:
    """Whether a subscript reads a view (``ReadRules.subscript`` decides if it may)."""
    return _is(node, ast.Subscript) and _name(node.value) and VIEW.match(node.value.id) is not None


__all__ = ["SIZE", "TAKE", "VIEW", "ReadRules", "is_take", "is_view_read"]
