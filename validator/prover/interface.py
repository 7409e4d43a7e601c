"""What the prover's helper modules may use of the analyzer: a Protocol, not the class.

``analyzer.Analyzer`` walks a function and calls out to helpers for the parts with their own rules:
built-in calls (``builtin_rules``), fault facts (``safety``) and loops (``termination``). Those
helpers call back into the walk (charge fuel, evaluate a subexpression, end the must prefix), so they
need its type; importing the class back would make each helper depend on the whole analyzer and
form an import cycle (hidden behind ``TYPE_CHECKING``). They depend on this interface instead, which
names exactly the state and operations they use; ``Analyzer`` satisfies it (checked by mypy where
the analyzer hands itself to a helper). A helper that needs more adds it here, visibly.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from dotboxd.core import ast
from dotboxd.core.types import SandboxType
from dotboxd.validator.plan import ExecutionPlan

from .domain import AInt, AVal, Domain
from .obligations import ObligationLog
from .report import LoopFact, SafetyFact, Witness
from .state import Flow, State
from .sym import Cond, Poly, Sym
from .text import Namer


class AnalyzerView(Protocol):
    """The analyzer as its helpers see it (one proof run's walk; not thread-safe)."""

    plan: ExecutionPlan
    sym: Sym
    dom: Domain
    log: ObligationLog
    namer: Namer
    probe: int
    """Above zero while a side-effect-free look (``peek``, ``probing``) runs: nothing is charged."""
    facts: dict[int, list[Cond]]
    loop_facts: list[LoopFact]
    safety: dict[str, SafetyFact]
    safe_nodes: set[int]
    unsafe_nodes: set[int]
    refute_arith: Callable[[State, dict[int, int], Cond], Witness | None] | None

    @property
    def function(self) -> str:
        """The id of the function being walked (the innermost frame)."""
        ...

    def charge(self, st: State, resource: str, up: Poly | None, low: Poly | None = None) -> None: ...

    def fuel(self, st: State, amount: int | Poly, low: int | Poly | None = None) -> None: ...

    def stop(self, st: State) -> None: ...

    def add_pc(self, st: State, c: Cond) -> bool: ...

    def block(self, statements: tuple[ast.Stmt, ...], st: State) -> Flow: ...

    def eval(self, e: ast.Expr, st: State) -> AVal: ...

    def peek(self, expr: ast.Expr, st: State) -> AVal: ...

    def refine(self, st: State, cond: ast.Expr, truth: bool) -> None: ...

    def local_type_at(self, loop: ast.Stmt, name: str) -> SandboxType | None: ...

    def safety_check(
        self, st: State, node: ast.Node, op: str, fault: Cond, words: str, exact: bool
    ) -> None: ...

    def fresh_tag(self) -> int: ...

    def probing(self) -> AbstractContextManager[None]: ...

    def _clip(self, v: AInt) -> AInt: ...

    def _shape_charge(self, st: State, v: AVal) -> None: ...
