"""One listing of each function the verifier checks, shared by every whole-function ``shapes.walk``
(issue 16).

Why: the verifier's plan ties (``verify_reads.check_stores``, ``verify_list_chunks.check_rooms``,
``ownership``, ``verify_mapchunk``) each walk the same generated function whole - up to three or four
walks of every function that holds owned lists or list views, each the largest single cost of its
check. The tree does not change while it is verified, so the first whole walk of a function lists
its nodes in ``shapes.walk``'s own order (depth first, the last child first) and every later one
reads that list: the same nodes in the same order, so every check sees exactly what its own walk
showed it, and raises on the same node first.

A walk of anything smaller than a function (a statement, a target) walks on its own, as before:
serving those from slices of the listing needs every node's subtree size, and measured, recording
them cost more than the statement walks it saved (a function with one whole walk paid it all).

The listings live only inside ``indexed_walks()`` (``verify_module`` and ``verify_cold_module``),
in a context variable (a concurrent verification in another thread has its own). Outside it,
``listed`` returns None and ``shapes.walk`` walks as before. A function is found by ``id``; its
listing holds the function itself, so no other object can take that id while the listing exists.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_LISTINGS: ContextVar[dict[int, list[Any]] | None] = ContextVar("dotboxd_walk_index", default=None)


@contextmanager
def indexed_walks() -> Iterator[None]:
    """Serve whole-function ``shapes.walk`` calls from one listing each for the duration (the tree
    must not change meanwhile)."""
    token = _LISTINGS.set({})
    try:
        yield
    finally:
        _LISTINGS.reset(token)


def listed(node: ast.AST, walk: Callable[[ast.AST], list[Any]]) -> list[Any] | None:
    """``walk(node)`` listed once per function inside ``indexed_walks`` (the same list object each
    time: callers only read it); None for anything but a function, or outside ``indexed_walks``."""
    listings = _LISTINGS.get()
    if listings is None or type(node).__name__ != "FunctionDef":
        return None
    found = listings.get(id(node))
    if found is None:
        found = listings[id(node)] = walk(node)
    return found


__all__ = ["indexed_walks", "listed"]
