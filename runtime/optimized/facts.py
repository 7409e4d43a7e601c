"""Static facts the code generator needs about a plan, derived once per compilation.

Which loops may run in *bulk* (a chunk of iterations reserved at once) and with what worst-case
cost per iteration, which module functions are small enough to inline into a hot loop, and which
expression nodes are *fast*: constant-cost operations whose only failure points are checked inline
(arithmetic, comparisons, constant-cost built-ins). Costs come from ``dotboxd.core.costs``; nothing
here invents a charge. The numbers are upper bounds (an ``if`` counts its dearer arm, a block every
live statement), which is all bulk reservation needs: a reservation is only ever too large, never
too small, and a run whose fuel does not cover it takes the exact per-iteration path instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dotboxd.core import ast, costs
from dotboxd.core.types import ListType, MapType, RecordType
from dotboxd.validator.plan import CallKind, ExecutionPlan

TEXT_LITERALS = frozenset(
    {ast.LiteralKind.STRING, ast.LiteralKind.PATH, ast.LiteralKind.URI, ast.LiteralKind.OPAQUE_ID}
)
"""Literal kinds that are new values on every evaluation (charged through the meter's shape)."""

FAST_BUILTINS = frozenset({"numeric.toI64", "numeric.toF64"})
"""Built-ins whose charge is the constant base fuel of ``costs.BUILTIN_COSTS`` and that can neither
fail nor take a host call, so generated code runs them inline, inside a bulk reservation. The pure
functions (``math.*``, ``string.*``) count as host calls and go through the meter (``stubs``)."""

INLINE_MAX_NODES = 160
"""A module function is inlined into a bulk loop only when its body (with its own inlined callees)
has at most this many IR nodes: inlining removes call overhead but grows code."""

COMPOSITES = (ListType, MapType, RecordType)


@dataclass(slots=True)
class FunctionFacts:
    """What the generator knows about one module function."""

    fid: str
    has_loops: bool = False
    """The function (or anything it calls) contains a loop."""
    inlinable: bool = False
    max_cost: int = 0
    """Worst-case fuel of one call's body (valid when ``inlinable``)."""
    size: int = 0
    """IR nodes of the body with inlinable callees expanded."""
    inline_depth: int = 0
    """Deepest chain of inlined calls inside the body (0: calls nothing inlinable)."""


@dataclass(slots=True)
class LoopFacts:
    """What the generator knows about one loop statement."""

    leaf: bool
    """No loop and no call to a function with loops inside: its iterations may be reserved in bulk."""
    fast: bool
    """Leaf, and every node inside is fast: fuel may be reserved in bulk too."""
    worst: int = 0
    """Worst-case fuel of one iteration (fast loops): 5, the condition (while) and the body."""
    need_depth: int = 0
    """Call frames the inlined calls of the body need beyond the current one."""


@dataclass(slots=True)
class PlanFacts:
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    loops: dict[int, LoopFacts] = field(default_factory=dict)


def live(plan: ExecutionPlan, block: tuple[ast.Stmt, ...]) -> Iterator[ast.Stmt]:
    """The statements of ``block`` that can run (dead ones are never executed nor charged)."""
    for stmt in block:
        if not plan.is_dead(stmt):
            yield stmt


class _Analyzer:
    def __init__(self, plan: ExecutionPlan, inline: bool) -> None:
        self.plan = plan
        self.inline = inline
        self.facts = PlanFacts()

    # --- functions, callees first (the validator proved the call graph acyclic) ---------------

    def function(self, fid: str) -> FunctionFacts:
        known = self.facts.functions.get(fid)
        if known is not None:
            return known
        info = self.plan.functions[fid]
        facts = FunctionFacts(fid)
        self.facts.functions[fid] = facts  # no recursion exists, so this never returns a half-built entry
        body = info.function.body
        facts.has_loops = self._block_has_loops(body)
        fast = not facts.has_loops and self.block_fast(body)
        if fast:
            facts.size = self.block_size(body)
            facts.max_cost = self.block_cost(body)
            facts.inline_depth = self.block_depth(body)
            facts.inlinable = self.inline and facts.size <= INLINE_MAX_NODES
        return facts

    def _block_has_loops(self, block: tuple[ast.Stmt, ...]) -> bool:
        dead = self.plan.dead_statements
        for stmt in block:
            if id(stmt) in dead:
                continue
            kind = type(stmt)
            if kind is ast.While or kind is ast.ForRange:
                return True
            if kind is ast.If:
                assert isinstance(stmt, ast.If)
                if (
                    self._calls_looping(stmt.condition)
                    or self._block_has_loops(stmt.then)
                    or self._block_has_loops(stmt.else_)
                ):
                    return True
            elif kind is not ast.Break and kind is not ast.Continue and self._calls_looping(stmt.value):  # type: ignore[union-attr]
                return True
        return False

    def _calls_looping(self, expr: ast.Expr) -> bool:
        kind = type(expr)
        if kind is ast.Binary:
            return self._calls_looping(expr.left) or self._calls_looping(expr.right)  # type: ignore[union-attr]
        if kind is ast.Unary:
            return self._calls_looping(expr.operand)  # type: ignore[union-attr]
        if kind is not ast.Call:
            return False
        assert isinstance(expr, ast.Call)
        target = self.plan.call_target(expr)
        if target.kind is CallKind.FUNCTION and self.function(target.name).has_loops:
            return True
        return any(self._calls_looping(arg) for arg in expr.args)

    # --- loops -------------------------------------------------------------------------------

    def loop(self, stmt: ast.While | ast.ForRange) -> LoopFacts:
        leaf = not self._block_has_loops(stmt.body)
        if isinstance(stmt, ast.While):
            leaf = leaf and not self._calls_looping(stmt.condition)
        facts = LoopFacts(leaf=leaf, fast=False)
        if leaf:
            exprs_fast = isinstance(stmt, ast.ForRange) or self.expr_fast(stmt.condition)
            if exprs_fast and self.block_fast(stmt.body):
                cond = self.expr_cost(stmt.condition) if isinstance(stmt, ast.While) else 0
                cond_depth = self.expr_depth(stmt.condition) if isinstance(stmt, ast.While) else 0
                facts.fast = True
                facts.worst = costs.LOOP_ITERATION_FUEL + cond + self.block_cost(stmt.body)
                facts.need_depth = max(cond_depth, self.block_depth(stmt.body))
        self.facts.loops[id(stmt)] = facts
        return facts

    # --- fast eligibility --------------------------------------------------------------------

    def block_fast(self, block: tuple[ast.Stmt, ...]) -> bool:
        dead = self.plan.dead_statements
        return all(self.stmt_fast(s) for s in block if id(s) not in dead)

    def stmt_fast(self, stmt: ast.Stmt) -> bool:
        kind = type(stmt)
        if kind is ast.Break or kind is ast.Continue:
            return True
        if kind is ast.While or kind is ast.ForRange:
            return False
        if kind is ast.If:
            assert isinstance(stmt, ast.If)
            return (
                self.expr_fast(stmt.condition) and self.block_fast(stmt.then) and self.block_fast(stmt.else_)
            )
        return self.expr_fast(stmt.value)  # type: ignore[union-attr]

    def expr_fast(self, expr: ast.Expr) -> bool:
        kind = type(expr)
        if kind is ast.Var:
            return True
        if kind is ast.Literal:
            return expr.kind not in TEXT_LITERALS  # type: ignore[union-attr]
        if kind is ast.Unary:
            return self.expr_fast(expr.operand)  # type: ignore[union-attr]
        if kind is ast.Binary:
            assert isinstance(expr, ast.Binary)
            if expr.op in (ast.BinaryOp.EQ, ast.BinaryOp.NE) and isinstance(
                self.plan.type_of(expr.left), COMPOSITES
            ):
                return False
            return self.expr_fast(expr.left) and self.expr_fast(expr.right)
        assert isinstance(expr, ast.Call)
        target = self.plan.call_target(expr)
        if not all(self.expr_fast(a) for a in expr.args):
            return False
        if target.kind is CallKind.BUILTIN:
            return target.name in FAST_BUILTINS
        if target.kind is CallKind.FUNCTION:
            return self.function(target.name).inlinable
        return False

    # --- worst-case cost, size and inline depth (fast code only) -----------------------------

    def block_cost(self, block: tuple[ast.Stmt, ...]) -> int:
        dead = self.plan.dead_statements
        return sum(self.stmt_cost(s) for s in block if id(s) not in dead)

    def stmt_cost(self, stmt: ast.Stmt) -> int:
        own = costs.STATEMENT_FUEL
        kind = type(stmt)
        if kind is ast.If:
            assert isinstance(stmt, ast.If)
            return (
                own
                + self.expr_cost(stmt.condition)
                + max(self.block_cost(stmt.then), self.block_cost(stmt.else_))
            )
        if kind is ast.Break or kind is ast.Continue:
            return own
        return own + self.expr_cost(stmt.value)  # type: ignore[union-attr]

    def expr_cost(self, expr: ast.Expr) -> int:
        own = costs.EXPRESSION_FUEL
        kind = type(expr)
        if kind is ast.Var or kind is ast.Literal:
            return own
        if kind is ast.Unary:
            return own + self.expr_cost(expr.operand)  # type: ignore[union-attr]
        if kind is ast.Binary:
            return own + self.expr_cost(expr.left) + self.expr_cost(expr.right)  # type: ignore[union-attr]
        assert isinstance(expr, ast.Call)
        args = 0
        for arg in expr.args:
            args += self.expr_cost(arg)
        target = self.plan.call_target(expr)
        if target.kind is CallKind.BUILTIN:
            return own + args + costs.BUILTIN_COSTS[target.name].base
        return own + args + self.function(target.name).max_cost

    def block_size(self, block: tuple[ast.Stmt, ...]) -> int:
        total = 0
        dead = self.plan.dead_statements
        for stmt in block:
            if id(stmt) in dead:
                continue
            total += 1
            kind = type(stmt)
            if kind is ast.If:
                assert isinstance(stmt, ast.If)
                total += (
                    self.expr_size(stmt.condition) + self.block_size(stmt.then) + self.block_size(stmt.else_)
                )
            elif kind is not ast.Break and kind is not ast.Continue:
                total += self.expr_size(stmt.value)  # type: ignore[union-attr]
        return total

    def expr_size(self, expr: ast.Expr) -> int:
        kind = type(expr)
        if kind is ast.Binary:
            return 1 + self.expr_size(expr.left) + self.expr_size(expr.right)  # type: ignore[union-attr]
        if kind is ast.Unary:
            return 1 + self.expr_size(expr.operand)  # type: ignore[union-attr]
        if kind is not ast.Call:
            return 1
        assert isinstance(expr, ast.Call)
        total = 1
        for arg in expr.args:
            total += self.expr_size(arg)
        target = self.plan.call_target(expr)
        if target.kind is CallKind.FUNCTION:
            total += self.function(target.name).size
        return total

    def block_depth(self, block: tuple[ast.Stmt, ...]) -> int:
        deepest = 0
        dead = self.plan.dead_statements
        for stmt in block:
            if id(stmt) in dead:
                continue
            kind = type(stmt)
            if kind is ast.If:
                assert isinstance(stmt, ast.If)
                deepest = max(
                    deepest,
                    self.expr_depth(stmt.condition),
                    self.block_depth(stmt.then),
                    self.block_depth(stmt.else_),
                )
            elif kind is not ast.Break and kind is not ast.Continue:
                deepest = max(deepest, self.expr_depth(stmt.value))  # type: ignore[union-attr]
        return deepest

    def expr_depth(self, expr: ast.Expr) -> int:
        kind = type(expr)
        if kind is ast.Binary:
            return max(self.expr_depth(expr.left), self.expr_depth(expr.right))  # type: ignore[union-attr]
        if kind is ast.Unary:
            return self.expr_depth(expr.operand)  # type: ignore[union-attr]
        if kind is not ast.Call:
            return 0
        assert isinstance(expr, ast.Call)
        deepest = 0
        for arg in expr.args:
            deepest = max(deepest, self.expr_depth(arg))
        target = self.plan.call_target(expr)
        if target.kind is CallKind.FUNCTION:
            deepest = max(deepest, 1 + self.function(target.name).inline_depth)
        return deepest


def walk_loops(plan: ExecutionPlan, block: tuple[ast.Stmt, ...]) -> Iterator[ast.While | ast.ForRange]:
    for stmt in live(plan, block):
        if isinstance(stmt, ast.While | ast.ForRange):
            yield stmt
            yield from walk_loops(plan, stmt.body)
        elif isinstance(stmt, ast.If):
            yield from walk_loops(plan, stmt.then)
            yield from walk_loops(plan, stmt.else_)


def analyze(plan: ExecutionPlan, *, inline: bool = True) -> PlanFacts:
    """Facts for every loop of every reachable function.

    Function facts are derived on demand, only for the functions a loop calls (directly or through
    other calls): the code generator reads loop facts alone, so walking every function body for its
    inlining numbers would be compile latency spent for nothing."""
    analyzer = _Analyzer(plan, inline)
    for info in plan.functions.values():
        if not info.reachable:
            continue
        for loop in walk_loops(plan, info.function.body):
            analyzer.loop(loop)
    return analyzer.facts
