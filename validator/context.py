"""The state the validation passes share while one module is validated.

Each pass reads what earlier passes established and records its own findings here; the API runs
the passes in order and stops after the first pass that reported a diagnostic, so a later pass may
rely on every invariant of the earlier ones (that is how one root cause yields one diagnostic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dotboxd.core.ast import Call, Function, Literal, Module
from dotboxd.core.bindings import BindingCatalog
from dotboxd.core.builtins import Builtin
from dotboxd.core.diagnostics import Diagnostic, Span
from dotboxd.core.effects import Effect
from dotboxd.core.types import SandboxType

from .plan import CallTarget
from .policy import Policy


@dataclass(slots=True)
class FunctionFacts:
    """What the type pass learns about one function (consumed by later passes and the plan)."""

    function: Function
    parameter_types: tuple[SandboxType, ...] = ()
    return_type: SandboxType | None = None
    local_types: dict[str, SandboxType] = field(default_factory=dict)
    # loop node id -> names in scope at its head whose type differs from local_types (block scoping)
    loop_types: dict[int, dict[str, SandboxType]] = field(default_factory=dict)
    # Direct effects of live code, excluding callees (Cpu is always present).
    direct_effects: Effect = Effect.CPU
    # Module functions called from live code / from any code (dead code counts for recursion).
    live_callees: dict[str, Call] = field(default_factory=dict)
    all_callees: dict[str, Call] = field(default_factory=dict)
    # Host bindings called from live code, with the first call node (evidence pointers).
    live_bindings: dict[str, Call] = field(default_factory=dict)
    effects: Effect = Effect.CPU


@dataclass(slots=True)
class Context:
    module: Module
    policy: Policy
    catalog: BindingCatalog
    now_unix_ms: int
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # structure
    functions: dict[str, Function] = field(default_factory=dict)
    entrypoints: list[str] = field(default_factory=list)
    metadata_capabilities: list[str] = field(default_factory=list)
    # types
    facts: dict[str, FunctionFacts] = field(default_factory=dict)
    expr_types: dict[int, SandboxType] = field(default_factory=dict)
    call_targets: dict[int, CallTarget] = field(default_factory=dict)
    right_first: set[int] = field(default_factory=set)
    dead: set[int] = field(default_factory=set)
    literals: list[Literal] = field(default_factory=list)
    # call graph / capabilities
    reachable: dict[str, tuple[str, ...]] = field(default_factory=dict)  # fn -> call path from an entrypoint
    required_effects: Effect = Effect.NONE
    required_capabilities: dict[str, tuple[str, ...]] = field(default_factory=dict)  # cap -> evidence path
    capability_origins: dict[str, tuple[str, Span | None]] = field(
        default_factory=dict
    )  # cap -> call location
    effect_origins: dict[int, tuple[str, ...]] = field(default_factory=dict)  # effect bit -> path
    warnings: list[Diagnostic] = field(default_factory=list)
    builtins_seen: dict[str, Builtin] = field(default_factory=dict)

    def report(
        self,
        code: str,
        message: str,
        pointer: str = "",
        span: Span | None = None,
        hint: str = "",
        **evidence: Any,
    ) -> None:
        self.diagnostics.append(Diagnostic(code, message, pointer, span, evidence, hint))
