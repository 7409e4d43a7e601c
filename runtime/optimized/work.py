"""A static bound on the real work of one loop iteration, so bulk chunks stay short in real time.

Why: the deadline is checked once per bulk chunk (``stubs.reserve``), and fuel says nothing about
real time: an inline operation whose charge is constant can take time that grows with its input
(``string.length`` re-encodes non-ASCII text, ``==`` on two texts compares them unit by unit). A
chunk sized by fuel alone could therefore spend the whole fuel budget between two deadline checks.

The bound counts, for one iteration of a leaf loop, every IR node that may be evaluated (both arms
of an ``if``; a module function called from the body counts its whole body at every call site, the
call graph being acyclic) as ``nodes``, and separately the nodes whose real cost grows with the
length of a text (``heavy``). ``stubs.reserve`` weighs ``heavy`` by the run's ``maxStringLength``
(``heavy_weight``) and reserves no more iterations than ``CHUNK_WORK`` units allow. Built-in calls
that go through a stub count one node: their real cost is charged through the meter, whose fuel
charges check the deadline themselves (every ``DEADLINE_EVERY_FUEL_CHARGES``-th). An inline
``list.get`` (``codegen.list_read``) also counts one node: its real cost is one bounded item read.
"""

from __future__ import annotations

from typing import Final

from dotboxd.core import ast, costs
from dotboxd.core.types import BOOL, F64, GUID, I32, I64, UNIT
from dotboxd.validator.plan import CallKind, ExecutionPlan

from .live import live

CHUNK_WORK: Final = 65_536
"""Work units one bulk chunk may hold (about 2 ms of generated code on the reference machine: an
IR node of fast code takes tens of nanoseconds)."""

TEXT_UNITS_PER_WORK: Final = 256
"""UTF-16 units of text an O(length) inline operation handles in the time of one work unit."""

SATURATE: Final = 1 << 40
"""Counts stop growing here (a call tree can multiply them); any such loop gets 1-iteration chunks."""

_METER_CADENCE: Final = costs.DEADLINE_EVERY_FUEL_CHARGES
"""Iterations charged through the meter between two of its deadline checks, at most (each iteration
is one fuel charge of ``Meter.loop_iteration``)."""

_HEAVY_BUILTINS: Final = frozenset({"string.length"})
"""Inline built-ins (``codegen._INLINE_BUILTINS``) whose real cost grows with a text's length."""

_CONSTANT_COMPARE: Final = frozenset({UNIT, BOOL, I32, I64, F64, GUID})
"""Operand types whose comparison takes constant time; every other one handled inline is text."""


def heavy_weight(max_string_length: int) -> int:
    """Work units of one O(length) text operation when texts hold at most ``max_string_length``
    UTF-16 units."""
    return 1 + max_string_length // TEXT_UNITS_PER_WORK


def iteration_units(nodes: int, heavy: int, max_string_length: int) -> int:
    """Work units of one iteration of a body of ``nodes`` nodes, ``heavy`` of them text operations
    (at least 1)."""
    return max(nodes + heavy * heavy_weight(max_string_length), 1)


def chunk_limit(nodes: int, heavy: int, max_string_length: int) -> int:
    """Most iterations of a body of ``nodes`` work units (``heavy`` of them text operations) that
    one chunk may run: at least 1, so a loop always progresses."""
    return max(1, CHUNK_WORK // iteration_units(nodes, heavy, max_string_length))


class WorkCounter:
    """Counts ``(nodes, heavy)`` for loop bodies of one plan, remembering each function's."""

    def __init__(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self._functions: dict[str, tuple[int, int]] = {}
        self._entries: dict[str, tuple[int, int] | None] = {}
        self._locals: dict[int, tuple[int, int, tuple[str, ...]]] = {}
        """``id`` of an expression of the plan -> ``_local`` of it."""
        for fid in _callees_first(plan):
            self.entry(fid)
            self.function(fid)

    def entry(self, fid: str) -> tuple[int, int] | None:
        """What a call of ``fid`` does itself, for the work tick at its entry (``stubs.tick``): its
        body with the bodies of the callees that tick nothing of their own; None when it makes no
        real call and holds no text operation (its whole body is then counted by its callers).

        Why ticks: straight-line code checks no deadline, and a tree of calls (the call graph is
        acyclic, but each function may call the next several times) multiplies the work between two
        checks; with a tick at the entry of every function that calls, the work between two checks
        is bounded by ``CHUNK_WORK`` plus one function body."""
        if fid in self._entries:
            return self._entries[fid]
        self._entries[fid] = None  # acyclic: never read before it is set below
        nodes, heavy, calls = self._own_block(self.plan.functions[fid].function.body)
        entry = (nodes, heavy) if calls or heavy else None
        self._entries[fid] = entry
        return entry

    def iteration(self, stmt: ast.While | ast.ForRange) -> tuple[int, int] | None:
        """What one iteration of a loop run iteration by iteration does itself (as ``entry``; inner
        loops check the deadline on their own), for a work tick after its iteration charge; None when
        it holds no text operation and is small: the meter's own cadence (a deadline check every 64
        iteration charges) then bounds the work between two checks by ``CHUNK_WORK``."""
        nodes, heavy, _ = self._own_block(stmt.body)
        if isinstance(stmt, ast.While):
            cond_nodes, cond_heavy, _ = self._own_expr(stmt.condition)
            nodes, heavy = nodes + cond_nodes, heavy + cond_heavy
        if not heavy and nodes * _METER_CADENCE <= CHUNK_WORK:
            return None
        return min(nodes + 1, SATURATE), min(heavy, SATURATE)

    def _own_block(self, block: tuple[ast.Stmt, ...]) -> tuple[int, int, bool]:
        nodes = heavy = 0
        calls = False
        for stmt in live(self.plan, block):
            nodes += 1
            kind = type(stmt)
            parts: list[tuple[int, int, bool]] = []
            if kind is ast.If:
                assert isinstance(stmt, ast.If)
                parts = [
                    self._own_expr(stmt.condition),
                    self._own_block(stmt.then),
                    self._own_block(stmt.else_),
                ]
            elif kind is ast.While or kind is ast.ForRange:
                assert isinstance(stmt, ast.While | ast.ForRange)
                parts = [self._own_block(stmt.body)]  # a loop's chunks check the deadline themselves
                if isinstance(stmt, ast.While):
                    parts.append(self._own_expr(stmt.condition))
                else:
                    parts += [self._own_expr(stmt.start), self._own_expr(stmt.end)]
            elif kind is not ast.Break and kind is not ast.Continue:
                parts = [self._own_expr(stmt.value)]  # type: ignore[union-attr]
            for more_nodes, more_heavy, more_calls in parts:
                nodes, heavy, calls = nodes + more_nodes, heavy + more_heavy, calls or more_calls
        return min(nodes, SATURATE), min(heavy, SATURATE), calls

    def _own_expr(self, node: ast.Expr) -> tuple[int, int, bool]:
        nodes, heavy, callees = self._local(node)
        for callee in callees:
            if self.entry(callee) is None:  # it ticks nothing itself: its body is ours
                callee_nodes, callee_heavy = self.function(callee)
                nodes, heavy = nodes + callee_nodes, heavy + callee_heavy
        return min(nodes, SATURATE), min(heavy, SATURATE), bool(callees)

    def loop(self, stmt: ast.While | ast.ForRange) -> tuple[int, int]:
        """One iteration: the body, and a while loop's condition."""
        nodes, heavy = self.block(stmt.body)
        if isinstance(stmt, ast.While):
            cond_nodes, cond_heavy = self.expr(stmt.condition)
            nodes, heavy = nodes + cond_nodes, heavy + cond_heavy
        return min(nodes + 1, SATURATE), min(heavy, SATURATE)

    def function(self, fid: str) -> tuple[int, int]:
        known = self._functions.get(fid)
        if known is None:
            known = self._functions[fid] = self.block(self.plan.functions[fid].function.body)
        return known

    def block(self, block: tuple[ast.Stmt, ...]) -> tuple[int, int]:
        nodes = heavy = 0
        for stmt in live(self.plan, block):
            nodes += 1
            kind = type(stmt)
            parts: tuple[tuple[int, int], ...]
            if kind is ast.If:
                assert isinstance(stmt, ast.If)
                parts = (self.expr(stmt.condition), self.block(stmt.then), self.block(stmt.else_))
            elif kind is ast.While or kind is ast.ForRange:
                assert isinstance(stmt, ast.While | ast.ForRange)
                parts = (self.loop(stmt),)  # not in a leaf loop's body; counted for completeness
            elif kind is ast.Break or kind is ast.Continue:
                parts = ()
            else:
                parts = (self.expr(stmt.value),)  # type: ignore[union-attr]
            for more_nodes, more_heavy in parts:
                nodes += more_nodes
                heavy += more_heavy
        return min(nodes, SATURATE), min(heavy, SATURATE)

    def expr(self, node: ast.Expr) -> tuple[int, int]:
        """The expression's nodes with the bodies of the module functions it calls."""
        nodes, heavy, callees = self._local(node)
        for callee in callees:
            callee_nodes, callee_heavy = self.function(callee)
            nodes, heavy = nodes + callee_nodes, heavy + callee_heavy
        return min(nodes, SATURATE), min(heavy, SATURATE)

    def _local(self, node: ast.Expr) -> tuple[int, int, tuple[str, ...]]:
        """``(nodes, heavy, callees)`` of the expression itself: its own nodes and text operations,
        and the module functions it calls (once per call site), whose bodies the caller adds.

        Why one remembered walk: every expression is counted for its function's entry, for the
        function's whole body and again for each loop around it; the walk happens once."""
        known = self._locals.get(id(node))
        if known is not None:
            return known
        nodes = heavy = 0
        callees: list[str] = []
        stack = [node]
        while stack:
            current = stack.pop()
            nodes += 1
            kind = type(current)
            if kind is ast.Binary:
                assert isinstance(current, ast.Binary)
                if self.plan.type_of(current.left) not in _CONSTANT_COMPARE:
                    heavy += 1
                stack += (current.left, current.right)
            elif kind is ast.Unary:
                assert isinstance(current, ast.Unary)
                stack.append(current.operand)
            elif kind is ast.Call:
                assert isinstance(current, ast.Call)
                stack += current.args
                target = self.plan.call_target(current)
                if target.kind is CallKind.FUNCTION:
                    callees.append(target.name)
                elif target.kind is CallKind.BUILTIN and target.name in _HEAVY_BUILTINS:
                    heavy += 1
        known = self._locals[id(node)] = (nodes, heavy, tuple(callees))
        return known


def call_nodes(node: ast.Expr) -> list[ast.Call]:
    """The call nodes of an expression."""
    found: list[ast.Call] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Binary):
            stack += (current.left, current.right)
        elif isinstance(current, ast.Unary):
            stack.append(current.operand)
        elif isinstance(current, ast.Call):
            found.append(current)
            stack += current.args
    return found


def _callees_first(plan: ExecutionPlan) -> list[str]:
    """Every reachable function of the plan, each after all the functions it calls (the call graph
    is acyclic).

    Why: ``entry`` and ``function`` recurse into callees and remember what they computed. Filled in
    this order, each step finds its callees already known, so the Python stack stays shallow however
    long a call chain the policy allows (a chain of ``maxCallDepth`` functions would otherwise need
    three Python frames per function and fail the compilation). Why only the reachable ones: nothing
    asks about the others (code is generated and ticks are expected for reachable functions alone,
    and the callees of a reachable function are reachable), and in generated programs they were a
    quarter of the functions, each walked twice by the generator's and again by the verifier's
    counter (issue 16)."""
    order: list[str] = []
    seen: set[str] = set()
    for root in sorted(fid for fid, info in plan.functions.items() if info.reachable):
        if root in seen:
            continue
        seen.add(root)
        stack: list[tuple[str, list[str]]] = [(root, _module_callees(plan, root))]
        while stack:
            fid, pending = stack[-1]
            while pending and pending[-1] in seen:
                pending.pop()
            if pending:
                callee = pending.pop()
                seen.add(callee)
                stack.append((callee, _module_callees(plan, callee)))
            else:
                order.append(fid)
                stack.pop()
    return order


def _module_callees(plan: ExecutionPlan, fid: str) -> list[str]:
    return sorted(c for c in plan.functions[fid].callees if c in plan.functions)
