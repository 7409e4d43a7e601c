"""Verifier rules for owned maps: the dict (``m<n>``) and units cell (``u<n>``) local kinds.

Why: an owned map's dict is mutable, so the verifier - which does not trust the code generator -
confines it to the forms ``owned_map_code`` emits, and nothing else may touch it:

* ``m<n>, u<n>, t<a>, t<b> = _s_mown(R, v<c>)`` is the only store of either kind (the dict is a
  fresh copy of the map's entries, so nothing done to it can reach any existing value);
* a dict is loaded only as ``m[x]`` (read or assignment target, ``x`` a name or an integer or
  Boolean constant), as the right operand of ``in`` / ``not in``, and as the argument of
  ``_p_mlen(m)``, ``_s_mmat(R, m)`` and ``_s_mox(R, f, lr, site, m, op, ...)``;
* a cell is loaded only as ``u[0]`` (read, or assignment target);
* neither is ever read as a value, returned, passed anywhere else, aliased or stored into.

``_s_mox``'s site must be one of the artifact's charge sites and its operation an index of
``owned_map_stubs.EXACT_OPS`` with that operation's operand count. Everything else about these
statements (the names and expressions around them) goes through the ordinary rules.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Protocol

from . import pyast as P
from .errors import VerifierFailure
from .owned_map_stubs import EXACT_OPERANDS

TABLE = re.compile(r"m(?:0|[1-9][0-9]{0,6})\Z")
"""An owned map's dict (``codegen.take_owned_map``)."""
CELL = re.compile(r"u(?:0|[1-9][0-9]{0,6})\Z")
"""An owned map's units cell, a one-item list of the units its updates counted."""
TAKES = {"_s_mown": 4, "_s_mtown": 9}
"""The take stubs -> the length of the tuple each is unpacked into (a dict, a cell, then slots)."""
CELL_ITEMS = 2
"""A cell holds the units of the updates and (text keys) their key bytes: ``u[0]``, ``u[1]``."""
TABLE_ARGS = {"_p_mlen": (0, 1), "_s_mmat": (1, 2), "_s_mox": (4, None)}
"""Callee -> (position of its dict argument, its argument count; None: by operation)."""


def _kind(base: type[ast.AST]) -> frozenset[type[ast.AST]]:
    """``base`` and the code generator's positioned twin of it (``pyast.POSITIONED``)."""
    return frozenset({base, *(cls for cls, plain in P.POSITIONED.items() if plain is base)})


_NAMES, _TUPLES, _CALLS = _kind(ast.Name), _kind(ast.Tuple), _kind(ast.Call)
_CONSTS, _COMPARES = _kind(ast.Constant), _kind(ast.Compare)
_MEMBERSHIP = frozenset({ast.In, ast.NotIn})
NODES: frozenset[type[ast.AST]] = frozenset({ast.Subscript, ast.In, ast.NotIn})
"""AST node types only these rules admit (the general walker hands every one of them here)."""


class Host(Protocol):
    """What the rules need from the verifier that runs them."""

    charge_sites: frozenset[int]

    def target(self, node: ast.expr) -> None: ...
    def count(self, amount: int) -> None: ...


def _fail(reason: str, node: ast.AST | None = None) -> VerifierFailure:
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(reason + where)


def _named(node: Any, pattern: re.Pattern[str], known: set[str], ctx: type[ast.AST]) -> bool:
    return (
        type(node) in _NAMES
        and type(node.ctx) is ctx
        and type(node.id) is str
        and bool(pattern.match(node.id))
        and (ctx is ast.Store or node.id in known)
    )


def _key(node: Any) -> bool:
    """A dict key operand: a name (checked as a load by the general walker) or a small scalar constant."""
    if type(node) in _NAMES:
        return True
    return type(node) in _CONSTS and type(node.value) in (int, bool) and -(2**64) <= node.value <= 2**64


def is_take(stmt: Any) -> bool:
    value: Any = getattr(stmt, "value", None)
    return type(value) in _CALLS and type(value.func) in _NAMES and value.func.id in TAKES


def is_item_store(stmt: Any) -> bool:
    targets: Any = getattr(stmt, "targets", None)
    return bool(targets) and type(targets[0]) is ast.Subscript


class MapRules:
    """The owned-map dicts and cells one verifier has seen taken."""

    def __init__(self) -> None:
        self.tables: set[str] = set()
        self.cells: set[str] = set()

    def take(self, host: Host, stmt: ast.Assign) -> list[ast.expr]:
        """``m, u, t, t = _s_mown(R, v)`` (``_s_mtown``: five more slots); returns the call's
        operands for the general walker."""
        targets = stmt.targets
        target: Any = targets[0] if len(targets) == 1 else None
        call: Any = stmt.value
        if not (
            type(target) in _TUPLES
            and type(target.ctx) is ast.Store
            and len(target.elts) == TAKES[call.func.id]
            and _named(target.elts[0], TABLE, self.tables, ast.Store)
            and _named(target.elts[1], CELL, self.cells, ast.Store)
            and not getattr(stmt, "type_comment", None)
        ):
            raise _fail("a take is unpacked into a dict, a cell and its slots", stmt)
        if call.keywords or len(call.args) != 2 or not _is_run_state(call.args[0]):
            raise _fail("a take gets the run state and one map", stmt)
        for slot in target.elts[2:]:
            host.target(slot)
        host.count(2 + len(target.elts))
        self.tables.add(target.elts[0].id)
        self.cells.add(target.elts[1].id)
        return [call.args[1]]

    def item_store(self, host: Host, stmt: ast.Assign) -> list[ast.expr]:
        """``m[x] = y`` or ``u[0] = y``; returns what the general walker checks (``x``, ``y``)."""
        targets = stmt.targets
        if len(targets) != 1 or getattr(stmt, "type_comment", None):
            raise _fail("chained assignment", stmt)
        operands = self.subscript(targets[0], ast.Store)
        host.count(2)
        return [*operands, stmt.value]

    def subscript(self, node: Any, ctx: type[ast.AST] = ast.Load) -> list[ast.expr]:
        """``m[x]`` or ``u[0]`` in context ``ctx``; returns the key for the general walker."""
        if type(node) is not ast.Subscript or type(node.ctx) is not ctx:
            raise _fail("subscripts only read or store an owned map's item or cell", node)
        container = node.value
        if _named(container, TABLE, self.tables, ast.Load) and _key(node.slice):
            return [node.slice]
        index: Any = node.slice
        if (
            _named(container, CELL, self.cells, ast.Load)
            and type(index) in _CONSTS
            and type(index.value) is int
            and 0 <= index.value < CELL_ITEMS
        ):
            return []
        raise _fail("subscripts only read or store an owned map's item or cell", node)

    def membership(self, node: Any) -> list[ast.expr]:
        """``x in m`` / ``x not in m``; returns ``x`` for the general walker."""
        if not (
            len(node.ops) == 1
            and type(node.ops[0]) in _MEMBERSHIP
            and len(node.comparators) == 1
            and _named(node.comparators[0], TABLE, self.tables, ast.Load)
        ):
            raise _fail("in / not in only test an owned map's keys", node)
        return [node.left]

    def table_call(self, host: Host, callee: str, args: list[ast.expr], node: ast.Call) -> list[ast.expr]:
        """A call that takes an owned map's dict; returns its other arguments."""
        position, arity = TABLE_ARGS[callee]
        if callee == "_s_mox":
            op: Any = args[5] if len(args) > 5 else None
            if not (type(op) in _CONSTS and type(op.value) is int and 0 <= op.value < len(EXACT_OPERANDS)):
                raise _fail("_s_mox names an owned-map operation", node)
            arity = 6 + EXACT_OPERANDS[op.value]
            site: Any = args[3]
            if not (type(site) in _CONSTS and type(site.value) is int and site.value in host.charge_sites):
                raise _fail("_s_mox is off its charge site", node)
        if len(args) != arity:
            raise _fail(f"{callee} called with the wrong number of arguments", node)
        if not _named(args[position], TABLE, self.tables, ast.Load):
            raise _fail(f"{callee} needs an owned map's dict taken by _s_mown", node)
        return [*args[:position], *args[position + 1 :]]


def _is_run_state(node: Any) -> bool:
    return type(node) in _NAMES and node.id == "R" and type(node.ctx) is ast.Load


def is_membership(node: Any) -> bool:
    return type(node) in _COMPARES and any(type(op) in _MEMBERSHIP for op in node.ops)


OPCODES = ("CONTAINS_OP", "BINARY_SUBSCR", "STORE_SUBSCR")
"""Opcodes the owned maps' forms compile to (only from the AST forms above: the code check runs on
code compiled from the checked tree)."""
LOCALS = (TABLE, CELL)
"""Local-name kinds a code object may hold besides slots (``verifier.verify_code``)."""

__all__ = [
    "CELL",
    "CELL_ITEMS",
    "LOCALS",
    "NODES",
    "OPCODES",
    "TABLE",
    "TABLE_ARGS",
    "TAKES",
    "MapRules",
    "is_item_store",
    "is_membership",
    "is_take",
]
