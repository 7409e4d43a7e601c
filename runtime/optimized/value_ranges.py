"""Integer value ranges: which ``+ - *`` can never overflow, and which values are never negative.

Why: an inline overflow check (one or two comparisons and a branch) is most of what a hot
arithmetic loop runs beyond its plain-Python twin (issue 16). Many results are small for a reason
no sign can tell: ``i % 100`` lies in ``[0, 99]`` for a non-negative ``i``, so ``x * x + 1`` of it
lies in ``[1, 9802]``, and an accumulator that only ever holds such a sum modulo ``1000003`` lies in
``[0, 1000002]``. Interval arithmetic finds these without a solver.

The analysis is flow-insensitive over the whole plan: an interval per (function, local), per
function result, and per parameter. A local's interval covers every value any of its definitions
can store (``set``, a forRange counter - ``[start, end - 1]`` -, a parameter: the argument of every
call site in a reachable function, and for an entrypoint also its policy ``inputBounds`` or its type's
range); a read of a local (its node typed I32 or I64) is that interval cut to the node's type. A local
(or a function result) no definition has reached yet has no value: an expression that reads it
contributes nothing in that round (the rounds ascend from nothing, so a loop's accumulator is not
taken for its type's whole range before its first definition is seen). An operation that overflows faults instead of producing a
value, so every result is cut to its type's range; an operation whose uncut interval fits is
*safe*. Fixpoint: rounds of joins, where a bound that still moves after ``_WIDEN_AFTER`` rounds jumps
to the I64 limit (so the rounds end), then ``_NARROW`` rounds that recompute every interval from the
previous one alone, each kept only if it is again closed under the rules (every definition's
interval inside its local's), which is what makes the result sound.

The result is for the code generator only, which drops a check for a safe node and treats a node
whose interval is non-negative as ``signs.py``'s facts; it never changes what the generated code
charges, reserves or counts, so the verifier, which holds the code to the plan's charges, has
nothing to recompute.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from dotboxd.core import ast
from dotboxd.core.types import I32, I64, SandboxType
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN
from dotboxd.validator.plan import CallKind, ExecutionPlan

Interval = tuple[int, int]
K = TypeVar("K")
_TYPES: dict[SandboxType, Interval] = {I32: (I32_MIN, I32_MAX), I64: (I64_MIN, I64_MAX)}
_WIDEST: Interval = (I64_MIN, I64_MAX)
_WIDEN_AFTER = 3
_NARROW = 3
_ADD, _SUB, _MUL = ast.BinaryOp.ADD, ast.BinaryOp.SUB, ast.BinaryOp.MUL
"""The operators that fault on overflow, whose nodes may be found safe."""
_NOT = ast.UnaryOp.NOT
_VAR, _LITERAL, _BINARY, _UNARY = ast.Var, ast.Literal, ast.Binary, ast.Unary


class _Unreached(Exception):
    """An expression reads a local (or a call's result) that no definition has given a value yet:
    it has no value to contribute in this round."""


@dataclass(frozen=True, slots=True)
class RangeFacts:
    """``safe``: ``id`` of each I32/I64 ``+ - *`` or negation that can never overflow;
    ``nonneg``: ``id`` of each I32/I64 expression node whose value is never negative."""

    safe: frozenset[int] = frozenset()
    nonneg: frozenset[int] = frozenset()


def _hull(a: Interval, b: Interval) -> Interval:
    return (min(a[0], b[0]), max(a[1], b[1]))


def _within(inner: Interval | None, outer: Interval | None) -> bool:
    if inner is None:
        return True
    return outer is not None and outer[0] <= inner[0] and inner[1] <= outer[1]


def _truncating_quotient(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _remainder(dividend: Interval, divisor: Interval) -> Interval:
    """The truncating remainder: its sign is the dividend's, its size below the divisor's and at
    most the dividend's."""
    most = max(abs(divisor[0]), abs(divisor[1])) - 1
    low = 0 if dividend[0] >= 0 else max(dividend[0], -most)
    high = 0 if dividend[1] <= 0 else min(dividend[1], most)
    return (low, high)


def _arith(op: ast.BinaryOp, a: Interval, b: Interval) -> Interval | None:
    """The uncut interval of ``a op b`` (None when unbounded by this rule)."""
    if op is ast.BinaryOp.ADD:
        return (a[0] + b[0], a[1] + b[1])
    if op is ast.BinaryOp.SUB:
        return (a[0] - b[1], a[1] - b[0])
    if op is ast.BinaryOp.MUL:
        corners = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
        return (min(corners), max(corners))
    if op is ast.BinaryOp.DIV:
        if b[0] != b[1] or b[0] == 0:
            return None  # a variable divisor: only the type's range
        low, high = _truncating_quotient(a[0], b[0]), _truncating_quotient(a[1], b[0])
        return (min(low, high), max(low, high))
    if op is ast.BinaryOp.REM:
        if b == (0, 0):
            return None  # always faults
        return _remainder(a, b)  # a zero divisor faults; the others bound the size
    return None


@dataclass(frozen=True, slots=True)
class _Outcome:
    """One round's inputs and everything it found (never mutated once the round is over)."""

    env: dict[tuple[str, str], Interval]
    results: dict[str, Interval]
    found: dict[tuple[str, str], Interval]
    returned: dict[str, Interval]
    safe: set[int]
    nonneg: set[int]


@dataclass(slots=True)
class _Analysis:
    plan: ExecutionPlan
    bounds: dict[int, Interval | None]  # each expression node's type range (None: not an integer)
    env: dict[tuple[str, str], Interval] = field(default_factory=dict)
    results: dict[str, Interval] = field(default_factory=dict)
    found: dict[tuple[str, str], Interval] = field(default_factory=dict)
    returned: dict[str, Interval] = field(default_factory=dict)
    safe: set[int] = field(default_factory=set)
    nonneg: set[int] = field(default_factory=set)
    fid: str = ""
    done: list[_Outcome] = field(default_factory=list)

    def interval(self, node: ast.Expr) -> Interval | None:
        """``node``'s interval under ``env`` (None for a non-integer node), recording definitions.

        Why written out flat (issue 16): this is the analysis's inner loop, run for every
        expression node in every round; the type dispatch is ordered by frequency (reads first),
        the cut to the node's type is inlined and the checked operators are compared by identity
        (``BinaryOp`` hashes through Python), which made the whole analysis about a third faster
        with the very same results."""
        bounds = self.bounds[id(node)]
        kind = type(node)  # IR node classes are final: dispatch on the exact class
        result: Interval | None
        if kind is _VAR:
            result = self.env.get((self.fid, node.name))  # type: ignore[union-attr]
            if result is None:
                if bounds is not None:
                    raise _Unreached  # no definition has stored a value yet
                return None
        elif kind is _LITERAL:
            value = node.value  # type: ignore[union-attr]
            result = (value, value) if type(value) is int else None
        elif kind is _BINARY:
            assert isinstance(node, ast.Binary)
            left, right = self.interval(node.left), self.interval(node.right)
            result = None
            if bounds is not None and left is not None and right is not None:
                op = node.op
                result = _arith(op, left, right)
                if (
                    result is not None
                    and (op is _ADD or op is _SUB or op is _MUL)
                    and bounds[0] <= result[0]
                    and result[1] <= bounds[1]
                ):
                    self.safe.add(id(node))
        elif kind is _UNARY:
            assert isinstance(node, ast.Unary)
            operand = self.interval(node.operand)
            result = None
            if bounds is not None and operand is not None and node.op is not _NOT:
                result = (-operand[1], -operand[0])
                if bounds[0] <= result[0] and result[1] <= bounds[1]:
                    self.safe.add(id(node))
        else:
            assert isinstance(node, ast.Call)
            interval = self.interval
            args = [interval(a) for a in node.args]
            target = self.plan.call_targets[id(node)]
            result = None
            if target.kind is CallKind.FUNCTION:
                callee = self.plan.functions[target.name]
                for param, arg in zip(callee.function.parameters, args, strict=True):
                    self.define((target.name, param.name), arg)
                result = self.results.get(target.name)
                if result is None and bounds is not None:
                    raise _Unreached  # the callee has returned no value yet
        if bounds is None:
            return None
        if result is None:
            result = bounds
        else:  # ``_cut(result, bounds)``, inline
            low = result[0] if result[0] > bounds[0] else bounds[0]
            high = result[1] if result[1] < bounds[1] else bounds[1]
            result = (low, high) if low <= high else bounds
        if result[0] >= 0:
            self.nonneg.add(id(node))
        return result

    def define(self, key: tuple[str, str], value: Interval | None) -> None:
        if value is not None:
            before = self.found.get(key)
            self.found[key] = value if before is None else _hull(before, value)

    def value(self, node: ast.Expr) -> Interval | None:
        """``interval``, or None when a read has no value yet (nothing to define from it)."""
        try:
            return self.interval(node)
        except _Unreached:
            return None

    def block(self, stmts: tuple[ast.Stmt, ...]) -> None:
        for stmt in stmts:
            kind = type(stmt)
            if kind is ast.Set:
                assert isinstance(stmt, ast.Set)
                self.define((self.fid, stmt.name), self.value(stmt.value))
            elif kind is ast.Return:
                assert isinstance(stmt, ast.Return)
                value = self.value(stmt.value)
                if value is not None:
                    before = self.returned.get(self.fid)
                    self.returned[self.fid] = value if before is None else _hull(before, value)
            elif kind is ast.ExprStmt:
                self.value(stmt.value)  # type: ignore[union-attr]
            elif kind is ast.If:
                assert isinstance(stmt, ast.If)
                self.value(stmt.condition)
                self.block(stmt.then)
                self.block(stmt.else_)
            elif kind is ast.While:
                assert isinstance(stmt, ast.While)
                self.value(stmt.condition)
                self.block(stmt.body)
            elif kind is ast.ForRange:
                assert isinstance(stmt, ast.ForRange)
                start, end = self.value(stmt.start), self.value(stmt.end)
                if start is not None and end is not None:
                    self.define((self.fid, stmt.local), (start[0], max(start[0], end[1] - 1)))
                self.block(stmt.body)

    def round(self) -> tuple[dict[tuple[str, str], Interval], dict[str, Interval]]:
        """Every definition's interval under the current ``env`` and ``results``, joined per local.

        A round is a pure function of ``env`` and ``results``, and the fixpoint asks for the same
        one again and again (the narrowing's first round is the previous round's input, and the
        facts of the final intervals were found by an earlier round), so an outcome already computed
        for equal inputs is handed back instead of re-interpreting every function (issue 16: the
        repeats were about two thirds of the rounds)."""
        for outcome in self.done:
            if outcome.env == self.env and outcome.results == self.results:
                self.found, self.returned = outcome.found, outcome.returned
                self.safe, self.nonneg = outcome.safe, outcome.nonneg
                return self.found, self.returned
        self.interpret()
        self.done.append(_Outcome(self.env, self.results, self.found, self.returned, self.safe, self.nonneg))
        return self.found, self.returned

    def interpret(self) -> None:
        """One round: interpret every reachable function under ``env`` and ``results``."""
        self.found, self.returned = {}, {}
        self.safe, self.nonneg = set(), set()
        for fid, info in self.plan.functions.items():
            if not info.reachable:
                continue
            if info.is_entrypoint:
                bounds = self.plan.policy.input_bounds.get(fid, {})
                for param, t in zip(info.function.parameters, info.parameter_types, strict=True):
                    if t in _TYPES:
                        given = bounds.get(param.name)
                        self.define((fid, param.name), _TYPES[t] if given is None else (given[0], given[1]))
            self.fid = fid
            self.block(info.function.body)


def _widen(old: dict[K, Interval], new: dict[K, Interval], wide: bool) -> dict[K, Interval]:
    """``old`` joined with ``new``; under ``wide``, a bound that moved jumps to the I64 limit."""
    out = dict(old)
    for key, value in new.items():
        before = old.get(key)
        low, high = value if before is None else _hull(before, value)
        if wide and before is not None:
            low = _WIDEST[0] if low < before[0] else low
            high = _WIDEST[1] if high > before[1] else high
        out[key] = (low, high)
    return out


def _closed(found: dict[K, Interval], env: dict[K, Interval]) -> bool:
    """Whether every definition's interval lies inside its key's interval of ``env``."""
    return all(_within(value, env.get(key)) for key, value in found.items())


def value_ranges(plan: ExecutionPlan) -> RangeFacts:
    """The safe and non-negative nodes of ``plan``'s reachable functions."""
    analysis = _Analysis(plan, _type_ranges(plan))
    for count in _rounds():
        found, returned = analysis.round()
        if _closed(found, analysis.env) and _closed(returned, analysis.results):
            break
        wide = count >= _WIDEN_AFTER
        analysis.env = _widen(analysis.env, found, wide)
        analysis.results = _widen(analysis.results, returned, wide)
    for _ in range(_NARROW):
        env, results = analysis.env, analysis.results
        analysis.env, analysis.results = analysis.round()  # every definition under the closed env
        found, returned = analysis.round()
        if not (_closed(found, analysis.env) and _closed(returned, analysis.results)):
            analysis.env, analysis.results = env, results  # not closed: keep the last closed one
            break
    analysis.round()  # the facts of the final intervals
    return RangeFacts(safe=frozenset(analysis.safe), nonneg=frozenset(analysis.nonneg))


def _type_ranges(plan: ExecutionPlan) -> dict[int, Interval | None]:
    """Each expression node's type range, looked up once, not once per node per round.

    Why by type object: a type hashes and compares through Python (a frozen dataclass), and a plan
    holds few distinct type objects for thousands of nodes (issue 16)."""
    by_object: dict[int, Interval | None] = {}
    out: dict[int, Interval | None] = {}
    for key, t in plan.expr_types.items():
        ident = id(t)
        if ident not in by_object:
            by_object[ident] = _TYPES.get(t)
        out[key] = by_object[ident]
    return out


def _rounds() -> Iterator[int]:
    count = 0
    while True:
        yield count
        count += 1


__all__ = ["RangeFacts", "value_ranges"]
