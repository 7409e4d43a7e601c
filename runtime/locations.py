"""Where a run failed: the JSON pointer and ``line:column`` of the operation node that raised.

Why: a kernel author told "list index out of range" in a 300-line kernel needs to know which
``list.get``. Both backends must report the very same node, so the rule is narrow and defined here
once: an error raised *by an operation* - an arithmetic operator (``Binary`` add/sub/mul/div/rem,
``Unary`` negation), a built-in call or a binding call (any error raised while the built-in or the
binding runs, its own charges included) - is located at that ``Binary``/``Unary``/``Call`` node.
Errors raised by the run's own metering between operations (statement and expression fuel, loop
iterations, call depth, deadline and cancellation checks at those points) have no single node and
stay unlocated. So do fuel exhaustion, the deadline and cancellation wherever they strike
(``UNLOCATED_CODES``): fuel is one budget every node draws on, the optimized backend pays it in
segments that span several nodes (a built-in's base fee included), and time and cancellation are
about the run, not about the node that happened to be running. The innermost operation wins: a
location, once set, is never overwritten.

The reference interpreter locates with the node it is evaluating. The optimized backend cannot embed
node text in generated code, so its tables map each failure site to an operation *ordinal* - the
node's index in ``operation_nodes(module)``, a deterministic walk - and the stub that raised maps
the ordinal back through the run's plan (``locate_ordinal``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

from dotboxd.core import ast
from dotboxd.core.diagnostics import Span
from dotboxd.core.values import SandboxFault

LOCATED = (ast.Binary, ast.Unary, ast.Call)
"""The node kinds a run-time error can be located at."""

UNLOCATED_CODES = frozenset({"R-QUOTA-FUEL", "R-TIMEOUT", "R-CANCELLED"})
"""Codes never located, even when an operation raised them (see the module docstring)."""

NO_ORDINAL = -1
"""A failure site that belongs to no operation (its errors stay unlocated)."""


def locate(fault: SandboxFault, node: ast.Node) -> None:
    """Record ``node`` as where ``fault`` happened, unless an inner operation already did."""
    if fault.location is None and fault.code not in UNLOCATED_CODES:
        fault.location = (node.pointer, node.span)


def _operations(statements: tuple[ast.Stmt, ...]) -> Iterator[ast.Node]:
    for expr in ast.statement_expressions(statements):
        yield from _expression(expr)


def _expression(expr: ast.Expr) -> Iterator[ast.Node]:
    # explicit stack, pre-order: a deeply nested expression must not exhaust Python's recursion
    stack: list[ast.Expr] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Binary):
            yield node
            stack.append(node.right)
            stack.append(node.left)
        elif isinstance(node, ast.Unary):
            yield node
            stack.append(node.operand)
        elif isinstance(node, ast.Call):
            yield node
            stack.extend(reversed(node.args))


def operation_nodes(module: ast.Module) -> tuple[ast.Node, ...]:
    """Every ``Binary``, ``Unary`` and ``Call`` node of ``module``, functions in order, pre-order."""
    return tuple(node for function in module.functions for node in _operations(function.body))


def operation_ordinals(module: ast.Module) -> dict[int, int]:
    """``id(node)`` -> its index in ``operation_nodes(module)`` (for the optimized code generator)."""
    return {id(node): index for index, node in enumerate(operation_nodes(module))}


_RECENT = 64
_nodes: OrderedDict[int, tuple[ast.Module, tuple[ast.Node, ...]]] = OrderedDict()
_lock = threading.Lock()


def locate_ordinal(fault: SandboxFault, module: ast.Module, ordinal: int) -> None:
    """``locate`` by operation ordinal (``NO_ORDINAL``: leave ``fault`` unlocated). The walk of a
    module is kept for the last few modules that failed, so a kernel that fails on every run does
    not make the host walk it every time."""
    if ordinal == NO_ORDINAL or fault.location is not None:
        return
    with _lock:
        entry = _nodes.get(id(module))
        if entry is not None and entry[0] is module:
            _nodes.move_to_end(id(module))
            nodes = entry[1]
        else:
            nodes = operation_nodes(module)
            _nodes[id(module)] = (module, nodes)
            while len(_nodes) > _RECENT:
                _nodes.popitem(last=False)
    if 0 <= ordinal < len(nodes):
        locate(fault, nodes[ordinal])


Location = tuple[str, Span | None]
