"""Which loops run as *iteration blocks* (spec/optimized.md 4.2.8, issue 16), decided from the plan
alone so that the code generator and the verifier cannot disagree.

A block loop is a ``forRange`` that is not a leaf, whose loops directly inside are all fast bulk
``while`` loops (leaves, no inlined frames, no text operation) and which evaluates no call at all
(no built-in, no module function), no text literal and no operator on other operands than
scalars (text concatenation, composite equality): nothing in it calls a stub that reads the meter
on the way (fault stubs end the run), so the iterations its pool holds ahead cannot be seen. And it
returns nowhere. Its pool iterations weigh ``units`` work units
each: the nodes of one whole outer iteration (the inner loops' bodies once), which bounds both what
an outer iteration does itself and what one inner iteration does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from dotboxd.core import ast as ir
from dotboxd.core.types import BOOL, F64, I32, I64
from dotboxd.validator.plan import ExecutionPlan

from .facts import PlanFacts, live

_SCALARS: Final = frozenset({BOOL, I32, I64, F64})
"""Operand types whose operators are inline Python (a fault stub at most)."""
_SCALAR_LITERALS: Final = frozenset(
    {ir.LiteralKind.BOOL, ir.LiteralKind.I32, ir.LiteralKind.I64, ir.LiteralKind.F64}
)


def block_units(plan: ExecutionPlan, facts: PlanFacts, stmt: ir.While | ir.ForRange) -> int | None:
    """The work units of one pool iteration when ``stmt`` runs as a block loop, else None."""
    if not isinstance(stmt, ir.ForRange):
        return None
    own = facts.loops.get(id(stmt))
    if own is None or own.leaf or facts.work is None:
        return None
    inner = list(_direct_loops(plan, stmt.body))
    if not inner:
        return None
    for loop in inner:
        loop_facts = facts.loops.get(id(loop))
        if (
            not isinstance(loop, ir.While)
            or loop_facts is None
            or not loop_facts.leaf
            or not loop_facts.fast
            or loop_facts.need_depth
            or loop_facts.heavy
        ):
            return None
    if _has_stub_work(plan, stmt.body) or facts.work.iteration(stmt) is not None:
        return None
    return facts.work.loop(stmt)[0]


def _direct_loops(plan: ExecutionPlan, block: tuple[ir.Stmt, ...]) -> Iterator[ir.While | ir.ForRange]:
    for stmt in live(plan, block):
        if isinstance(stmt, ir.While | ir.ForRange):
            yield stmt
        elif isinstance(stmt, ir.If):
            yield from _direct_loops(plan, stmt.then)
            yield from _direct_loops(plan, stmt.else_)


def _has_stub_work(plan: ExecutionPlan, block: tuple[ir.Stmt, ...]) -> bool:
    """Anything whose code calls a stub other than a fault stub: a call, a text literal, an
    operator on other operands than scalars (text concatenation, composite equality), or a return.
    The whole tree, dead statements too (refusing more than needed is safe)."""
    stack: list[object] = list(block)
    while stack:
        node = stack.pop()
        if isinstance(node, ir.Call | ir.Return):
            return True
        if isinstance(node, ir.Literal) and node.kind not in _SCALAR_LITERALS:
            return True
        if isinstance(node, ir.If):
            stack += [node.condition, *node.then, *node.else_]
        elif isinstance(node, ir.While):
            stack += [node.condition, *node.body]
        elif isinstance(node, ir.ForRange):
            stack += [node.start, node.end, *node.body]
        elif isinstance(node, ir.Set | ir.ExprStmt):
            stack.append(node.value)
        elif isinstance(node, ir.Binary):
            if plan.type_of(node.left) not in _SCALARS or plan.type_of(node.right) not in _SCALARS:
                return True
            stack += [node.left, node.right]
        elif isinstance(node, ir.Unary):
            stack.append(node.operand)
    return False


__all__ = ["block_units"]
