"""Which statements of a block the optimized backend analyses and generates: the live ones.

Dead statements (after an unconditional exit in their block, as the validator marks them) are never
executed nor charged, so every analysis of this backend (facts, work ticks, signs, cold paths) and the
code generator skip them the same way, through this one helper.
"""

from __future__ import annotations

from collections.abc import Iterator

from dotboxd.core import ast
from dotboxd.validator.plan import ExecutionPlan


def live(plan: ExecutionPlan, block: tuple[ast.Stmt, ...]) -> Iterator[ast.Stmt]:
    """The statements of ``block`` that can run (dead ones are never executed nor charged)."""
    for stmt in block:
        if not plan.is_dead(stmt):
            yield stmt
