"""Short loops read as straight-line code: every iteration analysed on its own, exactly.

A ``forRange`` over two constants, or a ``while`` whose guard the concrete ranges decide at every
iteration (``i = 0; while i < 3``, ``i = n - 3; while i <= n``), runs the same number of times on
every input. Up to :data:`MAX_UNROLL` iterations, the analyzer walks them one by one instead of
summarising the loop with an invariant: the charges are added exactly as the interpreter makes them
(the guard, then one loop iteration, then the body), and each iteration's arithmetic keeps exact
operands, so an overflow in the third iteration is refuted with a witness input (``acc + a * b``
four times, a sum of ``x`` three times, an off-by-one increment past ``I32`` max) where the
summarised loop could only say UNKNOWN.

Unrolling is attempted first as a dry run in probe mode (no charge, no obligation, no fact), and
the real walk happens only if every guard was decided within the cap, so an abandoned attempt
leaves nothing behind. Bodies with nested loops or calls of module functions are never unrolled:
their probe-mode values differ from the real ones, so the dry run would not predict the walk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dotboxd.core import ast, costs
from dotboxd.core.types import I32
from dotboxd.validator.plan import CallKind

from .domain import ABool, AInt
from .report import LoopFact, Verdict
from .state import LOOPS, Flow, State
from .sym import FALSE, TRUE, const

if TYPE_CHECKING:
    from .interface import AnalyzerView as Analyzer

MAX_UNROLL = 8
"""Iterations a loop may have to be unrolled (more keep the invariant-based summary)."""


def unroll(
    an: Analyzer, node: ast.While | ast.ForRange, st: State, span: tuple[int, int] | None = None
) -> Flow | None:
    """The flow of ``node`` walked iteration by iteration, or None when it cannot be (the caller
    then summarises the loop). ``span`` is a ``forRange``'s constant ``(start, end)`` (None for a
    ``while``); a ``forRange``'s bounds have already been evaluated and charged."""
    if isinstance(node, ast.ForRange) and (span is None or span[1] - span[0] > MAX_UNROLL):
        return None
    if not _simple(an, node.body):
        return None
    with an.probing():
        dry = _walk(an, node, st.copy(), span)
    if dry is None:
        return None
    flow = _walk(an, node, st, span)
    if flow is None:  # the dry run decided every guard; the real walk must too
        raise AssertionError("unrolling: the real walk diverged from the dry run")
    return flow


def _walk(
    an: Analyzer, node: ast.While | ast.ForRange, st: State, span: tuple[int, int] | None
) -> Flow | None:
    out = Flow()
    cur: State | None = st
    iterations = 0
    start, end = span if span is not None else (0, 0)
    while cur is not None:
        if isinstance(node, ast.While):
            g = an.eval(node.condition, cur)
            c = g.cond if isinstance(g, ABool) else None
            if c == FALSE:
                an.refine(cur, node.condition, False)
                break
            if c != TRUE or iterations >= MAX_UNROLL:
                return None
            an.refine(cur, node.condition, True)
        elif start + iterations >= end:
            break
        an.charge(cur, LOOPS, const(costs.LOOP_ITERATION_COUNT))
        an.fuel(cur, costs.LOOP_ITERATION_FUEL)
        if isinstance(node, ast.ForRange):
            i = const(start + iterations)
            cur.vars[node.local] = AInt(i, i, I32)
        flow = an.block(node.body, cur)
        iterations += 1
        if flow.breaks or flow.continues:
            return None  # an exit in the middle: keep the summary (it handles breaks)
        out.returns.extend(flow.returns)
        cur = flow.normal
    if cur is not None:
        cur.vars = {name: value for name, value in cur.vars.items() if name in st.vars}
        if isinstance(node, ast.ForRange):
            cur.vars.pop(node.local, None)
    out.normal = cur
    if not an.probe:
        an.loop_facts.append(
            LoopFact(
                an.function,
                node.pointer,
                "forRange" if isinstance(node, ast.ForRange) else "while",
                Verdict.PROVED,
                f"unrolled: the guard is decided at every iteration, so it runs exactly {iterations} times",
                str(iterations),
            )
        )
    return out


def _simple(an: Analyzer, body: tuple[ast.Stmt, ...]) -> bool:
    """No nested loop and no call of a module function anywhere in ``body``."""
    stmts: list[ast.Stmt] = list(body)
    exprs: list[ast.Expr] = []
    while stmts:
        s = stmts.pop()
        if isinstance(s, ast.While | ast.ForRange):
            return False
        if isinstance(s, ast.If):
            exprs.append(s.condition)
            stmts.extend((*s.then, *s.else_))
        elif isinstance(s, ast.Set | ast.ExprStmt | ast.Return):
            exprs.append(s.value)
    while exprs:
        e = exprs.pop()
        if isinstance(e, ast.Call):
            if an.plan.call_target(e).kind is CallKind.FUNCTION:
                return False
            exprs.extend(e.args)
        elif isinstance(e, ast.Unary):
            exprs.append(e.operand)
        elif isinstance(e, ast.Binary):
            exprs.extend((e.left, e.right))
    return True
