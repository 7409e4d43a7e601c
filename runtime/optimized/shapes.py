"""Shape helpers the verifier's plan ties share (``counter_rooms``, ``ownership``).

Why a module: both read the same few node shapes of a generated function - which names a statement
stores, which stub a call reaches - and must read them the same way on the code generator's
positioned nodes (``pyast``) and on the plain nodes the disk cache parses back. They dispatch on the
exact node class, as the verifier does, never on ``isinstance``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from . import pyast as P
from .walk_index import listed

_AST = ast.AST
_TWINS = {base: positioned for positioned, base in P.POSITIONED.items()}


def _either(base: type[ast.AST]) -> frozenset[type[ast.AST]]:
    """The plain node class and its positioned twin (``pyast.POSITIONED``)."""
    return frozenset({base, _TWINS[base]})


NAMES = _either(ast.Name)
CALLS = _either(ast.Call)
TUPLES = _either(ast.Tuple)
ASSIGNS = _either(ast.Assign)
CONSTS = _either(ast.Constant)
BINOPS = _either(ast.BinOp)
UNARIES = _either(ast.UnaryOp)
WHILES = _either(ast.While)
FORS = _either(ast.For)
RETURNS = _either(ast.Return)
IFS = _either(ast.If)


def walk(node: ast.AST) -> Iterator[Any]:
    """Every node under ``node`` (itself included), typed loosely: callers test each node's exact
    class first. Depth first, the last child first; inside the verifier a whole function is listed
    once and shared by every check that walks it (``walk_index``)."""
    shared = listed(node, _nodes)
    return iter(shared if shared is not None else _nodes(node))


def _nodes(node: ast.AST) -> list[Any]:
    """The walk itself: a plain stack over ``_fields``, listed at once (a generator resumed per node
    cost more than the whole list; no caller stops early but to fail).

    A list field goes onto the stack whole and anything that is not a node is dropped when it is
    popped: the nodes come out in the same order as when each list was filtered before it was
    pushed, and nearly every item of a generated list is a node (issue 16: a sixth faster)."""
    out: list[Any] = [node]
    stack: list[Any] = []
    pop, push, extend, append = stack.pop, stack.append, stack.extend, out.append
    current: Any = node
    while True:
        for field in current._fields:
            value = getattr(current, field, None)
            if type(value) is list:
                extend(value)
            elif isinstance(value, _AST):
                push(value)
        while stack:
            current = pop()
            if isinstance(current, _AST):
                append(current)
                break
        else:
            return out


def callee(node: Any) -> str | None:
    """The stub or function a plain call reaches by name, else None."""
    if type(node) in CALLS and type(node.func) in NAMES and type(node.func.id) is str:
        return str(node.func.id)
    return None


def stored_names(stmt: Any) -> set[str]:
    """The names ``stmt`` itself stores (not the statements nested in it): an assignment's targets,
    a for-loop's target. An augmented assignment stores only the fuel (the verifier sees to it)."""
    if type(stmt) in ASSIGNS:
        targets = list(stmt.targets)
    elif type(stmt) in FORS:
        targets = [stmt.target]
    else:
        return set()
    return {
        str(node.id)
        for target in targets
        for node in walk(target)
        if type(node) in NAMES and type(node.ctx) is ast.Store
    }


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body``, nested ones too, in source order (an ``if``'s body before its
    ``else``)."""
    for stmt in body:
        yield stmt
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from statements(inner)


__all__ = [
    "ASSIGNS",
    "BINOPS",
    "CALLS",
    "CONSTS",
    "FORS",
    "IFS",
    "NAMES",
    "RETURNS",
    "TUPLES",
    "UNARIES",
    "WHILES",
    "callee",
    "statements",
    "stored_names",
    "walk",
]
