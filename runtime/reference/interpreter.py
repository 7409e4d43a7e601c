"""The reference interpreter: a direct tree walk over the validated module of an ExecutionPlan.

It is the semantic oracle every other backend is compared with, so it is written to be read: one
method per statement and expression kind, charges exactly where ``spec/costs.md`` puts them, every
static fact (operand types, call targets, and/or operand order) taken from the plan rather than
re-derived. Operator semantics come from ``dotboxd.core.arith`` and ``dotboxd.core.values``,
built-ins from ``dotboxd.runtime.intrinsics``, host bindings from ``dotboxd.runtime.binding_call``.

Control flow inside a function uses three signals returned by statements (BREAK, CONTINUE, RETURN,
or None to fall through); a return value travels in the machine's ``_ret`` slot. Locals live in one
dict per call frame: the validator has already proved that every read follows a write of the same
type, so block scoping needs no run-time representation.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

from dotboxd.core import arith, ast, costs
from dotboxd.core.types import F64, I32, I64, ListType, MapType, RecordType, SandboxType
from dotboxd.core.values import (
    Guid,
    OpaqueId,
    SandboxFault,
    SandboxPath,
    SandboxUri,
    Shape,
    Value,
    shape_of,
    values_equal,
)
from dotboxd.runtime.binding_call import call_binding
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.intrinsics import CONCAT_CHARGES, INTRINSICS, text_append
from dotboxd.runtime.locations import locate
from dotboxd.runtime.stack import (
    REFERENCE_CALL_FRAMES,
    call_with_headroom,
    calls_between_stack_checks,
    has_headroom,
)
from dotboxd.validator.plan import CallKind, ExecutionPlan

BREAK: Final = object()
CONTINUE: Final = object()
RETURN: Final = object()

Env = dict[str, Value]
Signal = object | None

_LOOP_EXIT: Final[dict[object, Signal]] = {BREAK: None, RETURN: RETURN}
"""What a loop statement signals when its body's iteration ends with ``break`` (the loop is done:
nothing) or ``return`` (passed on to the enclosing block); ``continue`` just goes on looping."""

_ARITH: dict[SandboxType, dict[str, Callable[[Any, Any], Any]]] = {
    I32: dict(arith.ARITH_I32),
    I64: dict(arith.ARITH_I64),
    F64: dict(arith.ARITH_F64),
}
_NEGATE: dict[SandboxType, Callable[[Any], Any]] = {
    I32: arith.neg_i32,
    I64: arith.neg_i64,
    F64: arith.neg_f64,
}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "lt": lambda a, b: a < b,
    "lte": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b,
}
_COMPOSITES = (ListType, MapType, RecordType)


BinaryRule = Callable[["_Machine", ast.Binary, Env], Value]

_PLAN_CACHES = 1024
"""How many plans' resolved node rules a reference backend keeps (least recently used dropped):
as many as a host keeps dispatch records by default, so a host cycling through many tenants'
plans does not re-derive every literal and operator rule on each run."""


class _PlanCache:
    """Per-plan facts the walk derives from nodes on first visit and reuses in later runs: the value
    (and, for texts, the shape) of each literal and the evaluation rule of each binary node. They
    depend only on the plan (its nodes and their resolved types), never on a run."""

    __slots__ = ("binops", "literals", "plan", "stack_check_every")

    def __init__(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self.literals: dict[int, tuple[Value, Shape | None]] = {}
        self.binops: dict[int, BinaryRule] = {}
        self.stack_check_every = calls_between_stack_checks(plan)


class ReferenceBackend:
    """The ``reference`` backend: ``run`` executes one entrypoint call under a RunContext."""

    name: str = "reference"

    def __init__(self) -> None:
        self._plans: OrderedDict[int, _PlanCache] = OrderedDict()

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        run.executed_by = self.name  # also when another backend hands the run to this one
        return _Machine(run, self._cache(run.plan)).invoke(function_id, args)

    def release(self, plan: ExecutionPlan) -> None:
        """Drop ``plan``'s node cache (the host dropped the plan: an uninstalled kernel). Without
        this the LRU would hold up to ``_PLAN_CACHES`` dead plans alive until newer ones push them out."""
        cache = self._plans.get(id(plan))
        if cache is not None and cache.plan is plan:
            self._plans.pop(id(plan), None)

    def _cache(self, plan: ExecutionPlan) -> _PlanCache:
        """The plan's cache, by identity (the entry holds the plan, so its id cannot be reused)."""
        plans = self._plans
        cache = plans.get(id(plan))
        if cache is None or cache.plan is not plan:
            cache = _PlanCache(plan)
            plans.pop(id(plan), None)
            while len(plans) >= _PLAN_CACHES:
                try:
                    plans.popitem(last=False)  # least recently used
                except KeyError:
                    break  # emptied by a concurrent run
            plans[id(plan)] = cache
        else:
            with contextlib.suppress(KeyError):  # dropped by a concurrent run: this one keeps it
                plans.move_to_end(id(plan))
        return cache


class _Machine:
    """The state of one run's walk: plan facts, the meter, the plan's node caches and the return slot."""

    __slots__ = (
        "_binops",
        "_check_every",
        "_literals",
        "_ret",
        "call_targets",
        "expr_types",
        "fuel",
        "meter",
        "plan",
        "run",
    )

    def __init__(self, run: RunContext, cache: _PlanCache) -> None:
        self.run = run
        self.plan = run.plan
        self.meter = run.meter
        self.fuel = run.meter.fuel
        self.expr_types = run.plan.expr_types
        self.call_targets = run.plan.call_targets
        self._ret: Value = None
        self._binops = cache.binops
        self._literals = cache.literals
        self._check_every = cache.stack_check_every

    # --- functions ---------------------------------------------------------------------------

    def invoke(self, function_id: str, args: tuple[Value, ...]) -> Value:
        """Enter ``function_id`` one frame deeper, bind its parameters, run its body."""
        function = self.plan.functions[function_id].function
        self.meter.enter_call()
        env: Env = {p.name: a for p, a in zip(function.parameters, args, strict=True)}
        signal = self._block(function.body, env)
        self.meter.exit_call()
        if signal is not RETURN:  # the validator proves every path returns
            raise SandboxError("R-HOST-INTERNAL", "function ended without returning")
        value = self._ret
        self._ret = None
        return value

    # --- statements --------------------------------------------------------------------------

    def _block(self, statements: tuple[ast.Stmt, ...], env: Env) -> Signal:
        execute = _EXEC
        fuel = self.fuel
        for statement in statements:
            fuel(costs.STATEMENT_FUEL)
            signal = execute[statement.__class__](self, statement, env)
            if signal is not None:
                return signal
        return None

    def _set(self, node: ast.Set, env: Env) -> Signal:
        value = node.value
        if value.__class__ is ast.Call:
            first = value.args[0] if value.args else None
            if first.__class__ is ast.Var and first.name == node.name:
                target = self.call_targets[id(value)]
                if target.kind is CallKind.BUILTIN and target.name == "string.concatBudgeted":
                    self._append_text(node.name, value, env)
                    return None
        env[node.name] = self.eval(value, env)
        return None

    def _append_text(self, name: str, call: ast.Call, env: Env) -> None:
        """``s = string.concatBudgeted(s, x)``: exactly what ``eval`` of the call charges (the call
        node, both arguments in order, then the built-in's charges), then the text appended to the
        variable's own text, which CPython does in place when nothing else refers to it
        (``intrinsics.text_append``): building a string in a loop is then linear, not quadratic."""
        self.fuel(costs.EXPRESSION_FUEL)
        head, tail = call.args
        args = (self.eval(head, env), self.eval(tail, env))
        try:
            CONCAT_CHARGES(self.meter, args)
        except SandboxFault as fault:
            locate(fault, call)
            raise
        suffix = args[1]
        del args  # the variable must be the text's only owner when it is taken out
        env[name] = text_append(env.pop(name), suffix)  # type: ignore[arg-type]

    def _return(self, node: ast.Return, env: Env) -> Signal:
        self._ret = self.eval(node.value, env)
        return RETURN

    def _expr_stmt(self, node: ast.ExprStmt, env: Env) -> Signal:
        self.eval(node.value, env)
        return None

    def _if(self, node: ast.If, env: Env) -> Signal:
        if self.eval(node.condition, env):
            return self._block(node.then, env)
        return self._block(node.else_, env)

    def _while(self, node: ast.While, env: Env) -> Signal:
        loop_iteration = self.meter.loop_iteration
        while self.eval(node.condition, env):
            loop_iteration()
            signal = self._block(node.body, env)
            if signal is BREAK or signal is RETURN:
                return _LOOP_EXIT[signal]
        return None

    def _for_range(self, node: ast.ForRange, env: Env) -> Signal:
        start = self.eval(node.start, env)
        end = self.eval(node.end, env)
        assert isinstance(start, int) and isinstance(end, int)
        loop_iteration = self.meter.loop_iteration
        name = node.local
        for i in range(start, end):
            loop_iteration()
            env[name] = i
            signal = self._block(node.body, env)
            if signal is BREAK or signal is RETURN:
                return _LOOP_EXIT[signal]
        return None

    def _continue(self, node: ast.Continue, env: Env) -> Signal:
        return CONTINUE

    def _break(self, node: ast.Break, env: Env) -> Signal:
        return BREAK

    # --- expressions -------------------------------------------------------------------------

    def eval(self, node: ast.Expr, env: Env) -> Value:
        self.fuel(costs.EXPRESSION_FUEL)
        return _EVAL[node.__class__](self, node, env)

    def _var(self, node: ast.Var, env: Env) -> Value:
        return env[node.name]

    def _literal(self, node: ast.Literal, env: Env) -> Value:
        cached = self._literals.get(id(node))
        if cached is None:
            cached = _literal_value(node)
            self._literals[id(node)] = cached
        value, shape = cached
        if shape is not None:  # texts are new values each time they are evaluated
            self.meter.shape(shape)
        return value

    def _unary(self, node: ast.Unary, env: Env) -> Value:
        operand = self.eval(node.operand, env)
        if node.op is ast.UnaryOp.NOT:
            return not operand
        try:
            negated: Value = _NEGATE[self.expr_types[id(node)]](operand)
        except SandboxFault as fault:
            locate(fault, node)
            raise
        return negated

    def _binary(self, node: ast.Binary, env: Env) -> Value:
        rule = self._binops.get(id(node))
        if rule is None:
            rule = _resolve_binary(self.plan, node)
            self._binops[id(node)] = rule
        return rule(self, node, env)

    def _call(self, node: ast.Call, env: Env) -> Value:
        args = tuple(self.eval(arg, env) for arg in node.args)
        target = self.call_targets[id(node)]
        if target.kind is CallKind.FUNCTION:
            if self.meter.call_depth % self._check_every or has_headroom(REFERENCE_CALL_FRAMES):
                return self.invoke(target.name, args)
            # the thread's stack runs low: the call chain continues on a fresh helper thread, so
            # only ``maxCallDepth`` bounds it, never Python's stack (``runtime/stack.py``)
            return call_with_headroom(REFERENCE_CALL_FRAMES, self.invoke, target.name, args)
        try:
            if target.kind is CallKind.BUILTIN:
                return INTRINSICS[target.name](self.meter, args)
            return call_binding(self.run, target.name, args)
        except SandboxFault as fault:  # the built-in's or binding's own failure (runtime.locations)
            locate(fault, node)
            raise


_EVAL: dict[type, Callable[[_Machine, Any, Env], Value]] = {
    ast.Literal: _Machine._literal,
    ast.Var: _Machine._var,
    ast.Unary: _Machine._unary,
    ast.Binary: _Machine._binary,
    ast.Call: _Machine._call,
}
_EXEC: dict[type, Callable[[_Machine, Any, Env], Signal]] = {
    ast.Set: _Machine._set,
    ast.Return: _Machine._return,
    ast.ExprStmt: _Machine._expr_stmt,
    ast.If: _Machine._if,
    ast.While: _Machine._while,
    ast.ForRange: _Machine._for_range,
    ast.Continue: _Machine._continue,
    ast.Break: _Machine._break,
}


def _resolve_binary(plan: ExecutionPlan, node: ast.Binary) -> BinaryRule:
    """Pick the evaluation rule of a binary node once, from the plan's operand type."""
    kind = node.op.value
    if kind in ("and", "or"):
        return _short_circuit(node, right_first=id(node) in plan.right_first)
    operand_type = plan.expr_types[id(node.left)]
    if kind in ("eq", "ne"):
        composite = isinstance(operand_type, _COMPOSITES)
        negate = kind == "ne"

        def equality(m: _Machine, n: ast.Binary, env: Env) -> Value:
            left = m.eval(n.left, env)
            right = m.eval(n.right, env)
            if composite:
                m.fuel(costs.composite_equality_fuel(shape_of(left).nodes, shape_of(right).nodes))
            return values_equal(left, right) != negate

        return equality
    fn = _COMPARE.get(kind) or _ARITH[operand_type][kind]

    if kind in _COMPARE:

        def compare(m: _Machine, n: ast.Binary, env: Env) -> Value:
            left = m.eval(n.left, env)
            result: Value = fn(left, m.eval(n.right, env))
            return result

        return compare

    def apply(m: _Machine, n: ast.Binary, env: Env) -> Value:
        left = m.eval(n.left, env)
        right = m.eval(n.right, env)
        try:
            result: Value = fn(left, right)
        except SandboxFault as fault:  # the operator's own failure (runtime.locations)
            locate(fault, n)
            raise
        return result

    return apply


def _short_circuit(node: ast.Binary, right_first: bool) -> BinaryRule:
    decides = node.op is ast.BinaryOp.OR  # `or` is decided by a true operand, `and` by a false one

    def evaluate(m: _Machine, n: ast.Binary, env: Env) -> Value:
        first, second = (n.right, n.left) if right_first else (n.left, n.right)
        if bool(m.eval(first, env)) is decides:
            return decides
        return m.eval(second, env)

    return evaluate


def _literal_value(node: ast.Literal) -> tuple[Value, Shape | None]:
    """The sandbox value of a literal and, for texts, the shape charged on each evaluation."""
    kind = node.kind
    raw = node.value
    value: Value
    if kind is ast.LiteralKind.STRING:
        assert isinstance(raw, str)
        value = raw
    elif kind is ast.LiteralKind.PATH:
        assert isinstance(raw, str)
        value = SandboxPath(raw)
    elif kind is ast.LiteralKind.URI:
        assert isinstance(raw, str)
        value = SandboxUri(raw)
    elif kind is ast.LiteralKind.OPAQUE_ID:
        assert isinstance(raw, str) and node.brand is not None
        value = OpaqueId(node.brand, raw)
    elif kind is ast.LiteralKind.GUID:
        assert isinstance(raw, str)
        return Guid(raw.lower()), None
    elif kind is ast.LiteralKind.F64:
        assert isinstance(raw, int | float) and not isinstance(raw, bool)
        return float(raw), None
    else:
        return raw, None
    return value, shape_of(value)
