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

from .facts import live

State = frozenset[str] | None
"""Locals known >= 0, or None where the point is unreachable."""

_NONNEG_CALLS = frozenset({"math.abs", "string.length", "list.count"})


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
    record: bool = False
    nonneg: set[int] = field(default_factory=set)
    loops: list[_Loop] = field(default_factory=list)

    # --- expressions --------------------------------------------------------------------------

    def expr(self, node: ast.Expr, state: frozenset[str]) -> bool:
        result = self._expr(node, state)
        if result and self.record:
            self.nonneg.add(id(node))
        return result

    def _expr(self, node: ast.Expr, state: frozenset[str]) -> bool:
        if isinstance(node, ast.Literal):
            return isinstance(node.value, int) and not isinstance(node.value, bool) and node.value >= 0
        if isinstance(node, ast.Var):
            return node.name in state
        if isinstance(node, ast.Unary):
            self.expr(node.operand, state)
            return False
        if isinstance(node, ast.Binary):
            left = self.expr(node.left, state)
            right = self.expr(node.right, state)
            integer = self.plan.type_of(node) in (I32, I64)
            both = left and right
            return integer and both and node.op.value in ("add", "mul", "div", "rem")
        args = [self.expr(a, state) for a in node.args]
        target = self.plan.call_target(node)
        if target.kind is not CallKind.BUILTIN:
            return False
        name = target.name
        if name in _NONNEG_CALLS:
            return True
        if name == "math.max":
            return any(args)
        if name == "math.min":
            return all(args)
        if name == "math.clamp":
            return args[1]
        return False

    # --- statements ---------------------------------------------------------------------------

    def block(self, block: tuple[ast.Stmt, ...], state: State) -> State:
        for stmt in live(self.plan, block):
            if state is None:
                return None
            state = self.stmt(stmt, state)
        return state

    def stmt(self, stmt: ast.Stmt, state: frozenset[str]) -> State:
        if isinstance(stmt, ast.Set):
            if self.expr(stmt.value, state):
                return state | {stmt.name}
            return state - {stmt.name}
        if isinstance(stmt, ast.ExprStmt):
            self.expr(stmt.value, state)
            return state
        if isinstance(stmt, ast.Return):
            self.expr(stmt.value, state)
            return None
        if isinstance(stmt, ast.If):
            self.expr(stmt.condition, state)
            return _meet(self.block(stmt.then, state), self.block(stmt.else_, state))
        if isinstance(stmt, ast.Break):
            self.loops[-1].breaks = _meet(self.loops[-1].breaks, state)
            return None
        if isinstance(stmt, ast.Continue):
            self.loops[-1].continues = _meet(self.loops[-1].continues, state)
            return None
        if isinstance(stmt, ast.ForRange):
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
        its breaks."""
        recording, self.record = self.record, False
        head = entry
        while True:
            end, _ = self._iteration(body, head, condition, counter)
            new_head = head if end is None else head & end
            if new_head == head:
                break
            head = new_head
        self.record = recording
        _, breaks = self._iteration(body, head, condition, counter)
        return head, breaks

    def _iteration(
        self,
        body: tuple[ast.Stmt, ...],
        head: frozenset[str],
        condition: ast.Expr | None,
        counter: str | None,
    ) -> tuple[State, State]:
        if condition is not None:
            self.expr(condition, head)
        frame = _Loop()
        self.loops.append(frame)
        start = head | {counter} if counter is not None else head
        end = _meet(self.block(body, start), frame.continues)
        self.loops.pop()
        return end, frame.breaks


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
    analysis = _Analysis(plan, record=True)
    for info in plan.functions.values():
        if info.reachable:
            analysis.block(info.function.body, _entry_params(plan, info))
    return frozenset(analysis.nonneg)
