"""Cold exact paths: how a fast bulk loop hands one exact iteration to an out-of-line function.

Why: a fast bulk loop needs its body twice - the fast copy that runs inside reserved chunks, and a
checked copy (the *exact path*) for the few iterations that run when a chunk cannot be reserved
(the fuel left is below one iteration's worst case, the loop budget is spent, or the frames for
inlined calls are missing). The exact path runs at most a handful of times per run, yet it was half
of the code of a loop-heavy kernel and so half of its compile latency. So the hot module calls
``_x<i>(R, f, d, lr, *params)`` there instead, and the cold functions are generated, verified and
compiled from the plan only when a run first needs one (``artifact.ColdPaths``).

This module is the one description of that interface that the code generator, the verifier and
the cold-path builder share, computed from the plan alone (no generator state), so the hot caller
and the lazily built callee cannot disagree:

* a cold loop is named by (index of its function in ``Tables.functions``, ordinal of the loop among
  the live loops of that function in ``facts.walk_loops`` order);
* ``params``: the IR locals the exact iteration reads or writes (a forRange counter first), passed
  in by value in this order;
* ``results``: the IR locals it assigns, handed back in this order;
* a cold function returns ``(signal, f, value, *results)``: ``signal`` 0 = next iteration,
  1 = leave the loop, 2 = return ``value`` from the enclosing function.
"""

from __future__ import annotations

from dataclasses import dataclass

from dotboxd.core import ast as ir
from dotboxd.validator.plan import ExecutionPlan

from .facts import walk_loops
from .live import live

NEXT = 0
LEAVE = 1
RETURN = 2


@dataclass(frozen=True, slots=True)
class ColdLoop:
    """One fast bulk loop whose exact iteration is a cold function."""

    fid: str
    loop: ir.While | ir.ForRange
    params: tuple[str, ...]
    results: tuple[str, ...]
    leaves: bool
    """The iteration can end the loop (a ``break``; for a while loop, a false condition)."""
    returns: bool
    """The iteration can return from the function."""

    @property
    def result_arity(self) -> int:
        """Length of the tuple the cold function returns."""
        return 3 + len(self.results)


def cold_name(index: int) -> str:
    return f"_x{index}"


def loop_ordinals(plan: ExecutionPlan, fid: str) -> dict[int, int]:
    """``id`` of each live loop of ``fid`` -> its ordinal."""
    body = plan.functions[fid].function.body
    return {id(loop): ordinal for ordinal, loop in enumerate(walk_loops(plan, body))}


def find_loop(plan: ExecutionPlan, fid: str, ordinal: int) -> ir.While | ir.ForRange | None:
    if ordinal < 0:
        return None
    for index, loop in enumerate(walk_loops(plan, plan.functions[fid].function.body)):
        if index == ordinal:
            return loop
    return None


def describe(plan: ExecutionPlan, fid: str, loop: ir.While | ir.ForRange) -> ColdLoop:
    """The interface of ``loop``'s cold function."""
    names: dict[str, None] = {}  # ordered set
    assigned: dict[str, None] = {}
    flags = [isinstance(loop, ir.While), False]  # leaves, returns
    if isinstance(loop, ir.ForRange):
        names[loop.local] = None
    else:
        _reads(loop.condition, names)
    _block(plan, loop.body, names, assigned, flags)
    return ColdLoop(fid, loop, tuple(names), tuple(assigned), flags[0], flags[1])


def _block(
    plan: ExecutionPlan,
    block: tuple[ir.Stmt, ...],
    names: dict[str, None],
    assigned: dict[str, None],
    flags: list[bool],
) -> None:
    for stmt in live(plan, block):
        kind = type(stmt)
        if kind is ir.Set:
            assert isinstance(stmt, ir.Set)
            _reads(stmt.value, names)
            names[stmt.name] = None
            assigned[stmt.name] = None
        elif kind is ir.Return:
            assert isinstance(stmt, ir.Return)
            _reads(stmt.value, names)
            flags[1] = True
        elif kind is ir.ExprStmt:
            assert isinstance(stmt, ir.ExprStmt)
            _reads(stmt.value, names)
        elif kind is ir.If:
            assert isinstance(stmt, ir.If)
            _reads(stmt.condition, names)
            _block(plan, stmt.then, names, assigned, flags)
            _block(plan, stmt.else_, names, assigned, flags)
        elif kind is ir.Break:
            flags[0] = True
        elif kind is not ir.Continue:
            raise ValueError("a cold loop's body holds no loops")  # only leaf loops are fast


def _reads(node: ir.Expr, names: dict[str, None]) -> None:
    kind = type(node)
    if kind is ir.Var:
        names[node.name] = None  # type: ignore[union-attr]
    elif kind is ir.Binary:
        _reads(node.left, names)  # type: ignore[union-attr]
        _reads(node.right, names)  # type: ignore[union-attr]
    elif kind is ir.Unary:
        _reads(node.operand, names)  # type: ignore[union-attr]
    elif kind is ir.Call:
        for arg in node.args:  # type: ignore[union-attr]
            _reads(arg, names)
