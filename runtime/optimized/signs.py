"""Which integer expressions are never negative: a small, sound, flow-sensitive analysis.

Why: truncating ``div``/``rem`` equal Python's ``//``/``%`` only for non-negative operands, and an
overflow check needs one comparison instead of two when both operands are non-negative. Knowing
signs removes a comparison or two from many hot loops without any solver.

The analysis is a must-analysis over one function: the state is the set of locals that hold a value
>= 0 at a point. Rules (every produced value is in range, because an overflowing operation faults
instead of producing one):

* an integer literal >= 0; a forRange counter whose start is >= 0 (it cannot be assigned); an
  entrypoint parameter whose policy ``inputBounds`` lower bound is >= 0, when no function calls
  the entrypoint (inputs are checked only at the run boundary);
* ``a + b``, ``a * b``, ``a / b``, ``a % b`` of non-negative operands; ``math.abs``; ``math.max``
  with one non-negative operand, ``math.min`` with two; ``math.clamp`` with a non-negative lower
  bound; ``string.length`` and ``list.count``;
* ``set x = e`` makes ``x`` non-negative exactly when ``e`` is; after an ``if`` the state is the
  intersection of the arms that fall through; a loop head holds the greatest fixpoint of (entry
  state) intersected with (state at the end of the body and at each ``continue``), and after the
  loop the intersection of the head state and the states at each ``break``.

The result is the set of expression nodes (``id``) whose value is >= 0 whenever they are evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dotboxd.core import ast
from dotboxd.core.types import I32, I64
from dotboxd.validator.plan import CallKind, ExecutionPlan, FunctionInfo

from .live import live

State = frozenset[str] | None
"""Locals known >= 0, or None where the point is unreachable."""

_NONNEG_CALLS = frozenset({"math.abs", "string.length", "list.count"})
_BY_ARGUMENTS = frozenset({"math.max", "math.min", "math.clamp"})
_ADD, _MUL, _DIV, _REM = ast.BinaryOp.ADD, ast.BinaryOp.MUL, ast.BinaryOp.DIV, ast.BinaryOp.REM
"""The operators whose result is never negative when both operands are not."""
_INTEGERS = (I32, I64)


def _meet(a: State, b: State) -> State:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


@dataclass(slots=True)
class _Loop:
    breaks: State = None
    continues: State = None


@dataclass(slots=True)
class _Analysis:
    plan: ExecutionPlan
    nonneg: set[int] = field(default_factory=set)
    """Nodes found >= 0 by the pass under way (a loop swaps in a fresh set for each of its passes)."""
    loops: list[_Loop] = field(default_factory=list)

    # --- expressions --------------------------------------------------------------------------

    def expr(self, node: ast.Expr, state: frozenset[str]) -> bool:
        kind = type(node)  # IR node classes are final: dispatch on the exact class
        if kind is ast.Var:
            result = node.name in state  # type: ignore[union-attr]
        elif kind is ast.Literal:
            value = node.value  # type: ignore[union-attr]
            result = type(value) is int and value >= 0  # bool is not int here
        elif kind is ast.Binary:
            assert isinstance(node, ast.Binary)
            left = self.expr(node.left, state)
            right = self.expr(node.right, state)
            op = node.op  # by identity: an operator enum hashes through Python (issue 16)
            nonneg_op = op is _ADD or op is _MUL or op is _DIV or op is _REM
            result = left and right and nonneg_op and self.plan.type_of(node) in _INTEGERS
        elif kind is ast.Unary:
            self.expr(node.operand, state)  # type: ignore[union-attr]
            return False
        else:
            assert isinstance(node, ast.Call)
            target = self.plan.call_target(node)
            name = target.name if target.kind is CallKind.BUILTIN else ""
            if name in _BY_ARGUMENTS:
                args = [self.expr(a, state) for a in node.args]
                result = any(args) if name == "math.max" else all(args) if name == "math.min" else args[1]
            else:
                for arg in node.args:
                    self.expr(arg, state)
                result = name in _NONNEG_CALLS
        if result:
            self.nonneg.add(id(node))
        return result

    # --- statements ---------------------------------------------------------------------------

    def block(self, block: tuple[ast.Stmt, ...], state: State) -> State:
        for stmt in live(self.plan, block):
            if state is None:
                return None
            state = self.stmt(stmt, state)
        return state

    def stmt(self, stmt: ast.Stmt, state: frozenset[str]) -> State:
        kind = type(stmt)
        if kind is ast.Set:
            assert isinstance(stmt, ast.Set)
            name = stmt.name
            if self.expr(stmt.value, state):
                return state if name in state else state | {name}
            return state - {name} if name in state else state
        if kind is ast.ExprStmt:
            self.expr(stmt.value, state)  # type: ignore[union-attr]
            return state
        if kind is ast.Return:
            self.expr(stmt.value, state)  # type: ignore[union-attr]
            return None
        if kind is ast.If:
            assert isinstance(stmt, ast.If)
            self.expr(stmt.condition, state)
            return _meet(self.block(stmt.then, state), self.block(stmt.else_, state))
        if kind is ast.Break:
            self.loops[-1].breaks = _meet(self.loops[-1].breaks, state)
            return None
        if kind is ast.Continue:
            self.loops[-1].continues = _meet(self.loops[-1].continues, state)
            return None
        if kind is ast.ForRange:
            assert isinstance(stmt, ast.ForRange)
            start = self.expr(stmt.start, state)
            self.expr(stmt.end, state)
            counter = stmt.local
            entry = (state | {counter}) if start else (state - {counter})
            head, breaks = self.loop(stmt.body, entry, None, counter if start else None)
            after = _meet(head, breaks)
            if after is None:
                return None
            return after if start and counter in state else after - {counter}
        assert isinstance(stmt, ast.While)
        head, breaks = self.loop(stmt.body, state, stmt.condition, None)
        return _meet(head, breaks)

    def loop(
        self,
        body: tuple[ast.Stmt, ...],
        entry: frozenset[str],
        condition: ast.Expr | None,
        counter: str | None,
    ) -> tuple[frozenset[str], State]:
        """The loop-head fixpoint (locals >= 0 at the start of every iteration) and the state at
        its breaks.

        Each pass over the body records into a set of its own; only the pass that confirms the
        fixpoint (it ran from the final head, so it is the pass a separate recording pass would
        repeat) adds its nodes to the enclosing set. A pass from a larger, not yet confirmed head
        may have assumed too much, so its findings are dropped."""
        outer = self.nonneg
        head = entry
        while True:  # one pass over the loop per round, from the head found so far
            self.nonneg = set()
            if condition is not None:
                self.expr(condition, head)
            frame = _Loop()
            self.loops.append(frame)
            start = head | {counter} if counter is not None else head
            end = _meet(self.block(body, start), frame.continues)
            self.loops.pop()
            new_head = head if end is None else head & end
            if new_head == head:
                break
            head = new_head
        outer |= self.nonneg
        self.nonneg = outer
        return head, frame.breaks


def _entry_params(plan: ExecutionPlan, info: FunctionInfo) -> frozenset[str]:
    """Parameters the run boundary guarantees >= 0 (policy ``inputBounds`` with lower bound >= 0)."""
    if not info.is_entrypoint:
        return frozenset()
    if any(info.id in other.callees for other in plan.functions.values()):
        return frozenset()
    bounds = plan.policy.input_bounds.get(info.id, {})
    out = set()
    for param, t in zip(info.function.parameters, info.parameter_types, strict=True):
        bound = bounds.get(param.name)
        if bound is not None and t in (I32, I64) and bound[0] >= 0:
            out.add(param.name)
    return frozenset(out)


def nonnegative_nodes(plan: ExecutionPlan) -> frozenset[int]:
    """Expression nodes (by ``id``) of reachable functions whose value is never negative."""
    analysis = _Analysis(plan)
    for info in plan.functions.values():
        if info.reachable:
            analysis.block(info.function.body, _entry_params(plan, info))
    return frozenset(analysis.nonneg)
