"""Which statements of a block the optimized backend analyses and generates: the live ones.

Dead statements (after an unconditional exit in their block, as the validator marks them) are never
executed nor charged, so every analysis of this backend (facts, work ticks, signs, cold paths) and the
code generator skip them the same way, through this one helper.
"""

from __future__ import annotations

from dotboxd.core import ast
from dotboxd.validator.plan import ExecutionPlan


def live(plan: ExecutionPlan, block: tuple[ast.Stmt, ...]) -> tuple[ast.Stmt, ...]:
    """The statements of ``block`` that can run (dead ones are never executed nor charged), in order.

    Why a tuple and not a generator: the analyses ask for the live statements of every block many
    times per compilation (each loop's facts walk its body again), and most blocks hold no dead
    statement at all; such a block is returned as it is, after one set test in C (issue 16)."""
    dead = plan.dead_statements
    if not dead or dead.isdisjoint(map(id, block)):
        return block
    return tuple([stmt for stmt in block if id(stmt) not in dead])
