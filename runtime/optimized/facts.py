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

from .live import live as live  # also codegen's import of it, from here
from .work import WorkCounter, call_nodes

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

INLINE_BUDGET_FLOOR = 4_096
INLINE_BUDGET_PER_NODE = 2
"""Inlining may add at most ``max(INLINE_BUDGET_FLOOR, INLINE_BUDGET_PER_NODE * plan IR nodes)`` IR
nodes to the generated code, plan-wide. Why: every call inlined into a bulk loop copies the callee,
so a few kilobytes of calls to a large helper would otherwise expand into millions of generated
nodes (and seconds of compile time) before anything is metered. Loops are considered in plan order;
one whose inlining would overrun what is left runs its calls as real calls instead (a checked chunk)."""

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
    work: int = 0
    """Leaf loops: IR nodes one iteration may evaluate, callees included (``work.WorkCounter``)."""
    heavy: int = 0
    """Leaf loops: how many of those are text operations whose real cost grows with the text."""


@dataclass(slots=True)
class PlanFacts:
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    loops: dict[int, LoopFacts] = field(default_factory=dict)
    plan_nodes: int = 0
    """IR nodes of the reachable functions (dead statements included)."""
    inlined_nodes: int = 0
    """IR nodes inlining adds (within the plan-wide inline budget)."""
    work: WorkCounter | None = None
    """The work counter the loop facts were derived with. Why kept: its per-function numbers are
    what the generator's work ticks and the verifier's expected ticks need too; each side reuses the
    counter of its own ``analyze`` instead of walking every function body again."""

    @property
    def generated_nodes(self) -> int:
        """IR nodes the code generator emits code for: the plan's, plus its inlined copies."""
        return self.plan_nodes + self.inlined_nodes


class _Analyzer:
    def __init__(self, plan: ExecutionPlan, inline: bool) -> None:
        self.plan = plan
        self.inline = inline
        self.facts = PlanFacts()
        self.work = WorkCounter(plan)
        self.inlining = inline
        """Off while a loop over the inline budget is analyzed again without inlining."""
        self.inline_left = 0

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
        # a function's facts do not depend on which loop asked for them first: inlining stays on
        # while they are derived, even under a loop analyzed again without it
        saved, self.inlining = self.inlining, self.inline
        fast = not facts.has_loops and self.block_fast(body)
        self.inlining = saved
        if fast:
            facts.size = self.block_size(body)
            facts.max_cost = self.block_cost(body)
            facts.inline_depth = self.block_depth(body)
            facts.inlinable = self.inline and facts.size <= INLINE_MAX_NODES
        return facts

    def _block_has_loops(self, block: tuple[ast.Stmt, ...]) -> bool:
        for stmt in live(self.plan, block):
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
            facts.work, facts.heavy = self.work.loop(stmt)
            fast = self._loop_fast(stmt)
            if fast and self.inlining:
                extra = self._inlined(stmt)
                if extra > self.inline_left:
                    self.inlining = False  # over budget: real calls, so not fast if it has any
                    fast = self._loop_fast(stmt)
                    self.inlining = True
                else:
                    self.inline_left -= extra
                    self.facts.inlined_nodes += extra
            if fast:
                cond = self.expr_cost(stmt.condition) if isinstance(stmt, ast.While) else 0
                cond_depth = self.expr_depth(stmt.condition) if isinstance(stmt, ast.While) else 0
                facts.fast = True
                facts.worst = costs.LOOP_ITERATION_FUEL + cond + self.block_cost(stmt.body)
                facts.need_depth = max(cond_depth, self.block_depth(stmt.body))
        self.facts.loops[id(stmt)] = facts
        return facts

    def _loop_fast(self, stmt: ast.While | ast.ForRange) -> bool:
        exprs_fast = isinstance(stmt, ast.ForRange) or self.expr_fast(stmt.condition)
        return exprs_fast and self.block_fast(stmt.body)

    def _inlined(self, stmt: ast.While | ast.ForRange) -> int:
        """IR nodes inlining adds to a fast loop: the expanded size of every module function called
        in it (``expr_size`` counts it at each call site; nested callees are part of it)."""
        exprs = [stmt.condition] if isinstance(stmt, ast.While) else []
        exprs += self._exprs(stmt.body)
        total = 0
        for expr in exprs:
            for call in call_nodes(expr):
                target = self.plan.call_target(call)
                if target.kind is CallKind.FUNCTION:
                    total += self.function(target.name).size
        return total

    def _exprs(self, block: tuple[ast.Stmt, ...]) -> list[ast.Expr]:
        found: list[ast.Expr] = []
        for stmt in live(self.plan, block):
            if isinstance(stmt, ast.If):
                found.append(stmt.condition)
                found += self._exprs(stmt.then) + self._exprs(stmt.else_)
            elif not isinstance(stmt, ast.Break | ast.Continue | ast.While | ast.ForRange):
                found.append(stmt.value)
        return found

    # --- fast eligibility --------------------------------------------------------------------

    def block_fast(self, block: tuple[ast.Stmt, ...]) -> bool:
        return all(self.stmt_fast(s) for s in live(self.plan, block))

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
            return self.inlining and self.function(target.name).inlinable
        return False

    # --- worst-case cost, size and inline depth (fast code only) -----------------------------

    def block_cost(self, block: tuple[ast.Stmt, ...]) -> int:
        return sum(self.stmt_cost(s) for s in live(self.plan, block))

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
        args = sum(self.expr_cost(arg) for arg in expr.args)
        target = self.plan.call_target(expr)
        if target.kind is CallKind.BUILTIN:
            return own + args + costs.BUILTIN_COSTS[target.name].base
        return own + args + self.function(target.name).max_cost

    def block_size(self, block: tuple[ast.Stmt, ...]) -> int:
        total = 0
        for stmt in live(self.plan, block):
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
        total = 1 + sum(self.expr_size(arg) for arg in expr.args)
        target = self.plan.call_target(expr)
        if target.kind is CallKind.FUNCTION:
            total += self.function(target.name).size
        return total

    def block_depth(self, block: tuple[ast.Stmt, ...]) -> int:
        deepest = 0
        for stmt in live(self.plan, block):
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
        deepest = max((self.expr_depth(arg) for arg in expr.args), default=0)
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
    reachable = [info for info in plan.functions.values() if info.reachable]
    analyzer.facts.work = analyzer.work
    analyzer.facts.plan_nodes = sum(count_nodes(info.function.body) for info in reachable)
    analyzer.inline_left = max(INLINE_BUDGET_FLOOR, INLINE_BUDGET_PER_NODE * analyzer.facts.plan_nodes)
    for info in reachable:
        for loop in walk_loops(plan, info.function.body):
            analyzer.loop(loop)
    return analyzer.facts


def count_nodes(block: tuple[ast.Stmt, ...]) -> int:
    """IR nodes of a block (dead statements included): the unit compile latency is measured in."""
    total = 0
    for stmt in block:
        kind = type(stmt)
        total += 1
        if kind is ast.Set or kind is ast.Return or kind is ast.ExprStmt:
            total += _count_expr(stmt.value)  # type: ignore[union-attr]
        elif kind is ast.If:
            assert isinstance(stmt, ast.If)
            total += _count_expr(stmt.condition) + count_nodes(stmt.then) + count_nodes(stmt.else_)
        elif kind is ast.While:
            assert isinstance(stmt, ast.While)
            total += _count_expr(stmt.condition) + count_nodes(stmt.body)
        elif kind is ast.ForRange:
            assert isinstance(stmt, ast.ForRange)
            total += _count_expr(stmt.start) + _count_expr(stmt.end) + count_nodes(stmt.body)
    return total


def _count_expr(node: ast.Expr) -> int:
    kind = type(node)
    if kind is ast.Binary:
        return 1 + _count_expr(node.left) + _count_expr(node.right)  # type: ignore[union-attr]
    if kind is ast.Call:
        assert isinstance(node, ast.Call)
        return 1 + sum(_count_expr(arg) for arg in node.args)
    if kind is ast.Unary:
        return 1 + _count_expr(node.operand)  # type: ignore[union-attr]
    return 1


def function_facts(plan: ExecutionPlan, fid: str) -> FunctionFacts:
    """The facts of one function as the inlining generator sees it (``inline=True``): whether it is
    fast and loop-free, and then its worst-case fuel (``max_cost``). For readers outside the code
    generator (``small_fuel``) that need one function's numbers, not a whole plan's."""
    return _Analyzer(plan, True).function(fid)
