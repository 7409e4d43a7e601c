"""One pre-order index of the tree the verifier checks, shared by every ``shapes.walk`` (issue 16).

Why: the verifier's plan ties (``ownership``, ``verify_reads``, ``verify_refunds``,
``verify_list_chunks``, ``verify_mapchunk``, ``counter_rooms``) each walk the same generated function,
or statements of it, with ``shapes.walk`` - several full walks per function, each a generator
resumed once per node, and the largest single cost of verification. The tree does not change while
it is verified, so the first walk of a subtree records its nodes in ``shapes.walk``'s own order
(depth first, the last child first) and the size of every node's subtree; the walk of any node
inside it is then a slice of that list: the same nodes in the same order, so every check sees
exactly what its own walk showed it, and raises on the same node first.

Only whole functions are indexed (``subtree``). The index lives only inside ``indexed_walks()`` (``verify_module`` and ``verify_cold_module``),
in a context variable (a concurrent verification in another thread has its own). Outside it,
``subtree`` returns None and ``shapes.walk`` walks as before. A node is found by ``id``; the index
keeps every node it lists alive, so no other object can take one of their ids while it exists.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_Span = tuple[list[Any], int, int]
_SPANS: ContextVar[dict[int, _Span] | None] = ContextVar("dotboxd_walk_index", default=None)
_AST = ast.AST


@contextmanager
def indexed_walks() -> Iterator[None]:
    """Serve ``shapes.walk`` from an index for the duration (the tree must not change meanwhile)."""
    token = _SPANS.set({})
    try:
        yield
    finally:
        _SPANS.reset(token)


def subtree(node: ast.AST) -> list[Any] | None:
    """``list(shapes.walk(node))`` from the index, or None (walk it yourself) outside
    ``indexed_walks`` and for a node of no function indexed yet. A function is indexed the first
    time it is walked whole - where a check walked it anyway, after the verifier counted its nodes
    against its budget - not before: indexing each statement first would walk the tree twice."""
    spans = _SPANS.get()
    if spans is None:
        return None
    found = spans.get(id(node))
    if found is None:
        if type(node).__name__ != "FunctionDef":
            return None  # a statement walked before its function was: walked on its own
        _index(node, spans)
        found = spans[id(node)]
    order, start, end = found
    return order[start:end]


def _index(root: ast.AST, spans: dict[int, _Span]) -> None:
    """Walk ``root`` as ``shapes.walk`` does and record each node's span of the walk. A node the
    tree holds twice spans the same sequence at both places; either one serves."""
    order: list[Any] = []
    parents: list[int] = []
    stack: list[tuple[Any, int]] = [(root, -1)]
    pop, push, listed, parented = stack.pop, stack.append, order.append, parents.append
    while stack:
        current, parent = pop()
        here = len(order)
        listed(current)
        parented(parent)
        for field in current._fields:
            value = getattr(current, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, _AST):
                        push((item, here))
            elif isinstance(value, _AST):
                push((value, here))
    sizes = [1] * len(order)
    for position in range(len(order) - 1, 0, -1):  # a child always comes after its parent
        sizes[parents[position]] += sizes[position]
    for position, node in enumerate(order):
        spans[id(node)] = (order, position, position + sizes[position])


__all__ = ["indexed_walks", "subtree"]
