"""Two tree operations the code generator's rewrites run many times per compilation (issue 16).

Why a module: the chunk rewrites (``list_chunks``, ``mapchunk``, ``periodic_tally``) copy parts of
the checked body and search them for names, stubs and stores. ``copy.deepcopy`` and ``ast.walk``
did that correctly but slowly - through ``__reduce_ex__`` and a generator per node - and were most
of those rewrites' share of the compile latency. The two functions here give the same results:

- ``clone`` is ``copy.deepcopy`` of a generated tree: the same classes (positioned twins stay
  twins), the same attributes, fresh lists and nodes, and a node shared inside the copied tree
  stays shared in the copy (the generator shares some nodes; ``deepcopy``'s memo did the same);
- ``nodes`` lists exactly the nodes ``ast.walk`` yields, in the same (breadth-first) order.
"""

from __future__ import annotations

import ast
import copy
from typing import Any, TypeVar

_N = TypeVar("_N", bound=ast.AST)

_AST = ast.AST
_ATOMS = frozenset({str, int, bool, float, type(None), bytes, complex, type(...)})
"""Immutable field values, which ``deepcopy`` returns as they are."""


def clone(node: _N) -> _N:
    """A deep copy of ``node``, equal to ``copy.deepcopy(node)`` (see the module docstring)."""
    copied: _N = _clone(node, {})
    return copied


def _clone(value: Any, memo: dict[int, Any]) -> Any:
    key = id(value)
    done = memo.get(key)
    if done is not None:
        return done
    kind: Any = type(value)
    if kind is list:
        items: list[Any] = []
        memo[key] = items
        items.extend(_clone(item, memo) for item in value)
        return items
    if isinstance(value, _AST):
        new = kind.__new__(kind)
        memo[key] = new
        state = new.__dict__
        for name, item in value.__dict__.items():
            state[name] = item if type(item) in _ATOMS else _clone(item, memo)
        return new
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value, memo)  # anything else (a tuple constant): deepcopy's own rules


def nodes(root: ast.AST) -> list[Any]:
    """Every node under ``root`` (itself included), in ``ast.walk``'s order; typed loosely, as
    ``shapes.walk``: callers test each node's class first."""
    out: list[Any] = [root]
    append = out.append
    for node in out:  # the list grows while it is read: a breadth-first queue that keeps its items
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:  # a plain loop: the lists are short, a filtered copy cost more
                    if isinstance(item, _AST):
                        append(item)
            elif isinstance(value, _AST):
                append(value)
    return out


__all__ = ["clone", "nodes"]
