"""The ExecutionPlan: the immutable result of validation, and the only thing backends execute.

A plan binds one module to one policy and one binding catalogue and records every fact the passes
established, so that backends and the prover never re-derive (and never disagree on) them:

* the resolved type of every expression node, and every parameter's and local's type;
* what every call resolves to (built-in, module function or host binding);
* for each ``and``/``or`` node, whether the right operand runs first (spec/validation.md section 11);
* per-function effects, callees, reached bindings and reachability from entrypoints;
* statically dead statements (still type-checked, never executed, adding no effects);
* the module's required effects and capabilities, with the call path that needs each capability;
* the module, policy, binding-manifest and plan hashes.

Lookups by node use object identity (``id(node)``): pass the very node objects of ``plan.module``.
Structurally equal nodes elsewhere (AST equality ignores locations) are deliberately not found, so
two ``{"var": "x"}`` nodes in different functions never share an entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from dotboxd.core.ast import Binary, Call, Expr, Function, Module, Stmt
from dotboxd.core.bindings import (
    BindingCatalog,
    BindingDescriptor,
    binding_record,
    canonical_record,
    same_implementation,
    sha256_lines,
)
from dotboxd.core.builtins import Builtin, surface_needed
from dotboxd.core.costs import COST_TABLE_VERSION
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, reject
from dotboxd.core.effects import PURE, Effect, effect_names, effects_text
from dotboxd.core.read_only import EMPTY
from dotboxd.core.types import SandboxType
from dotboxd.grammar import canonical

from .policy import Policy, now_ms

PLAN_HASH_ID = "dotboxd-py-plan-1"
TYPE_SYSTEM_VERSION = "dotboxd-py-type-system-1"
EFFECT_ANALYSIS_VERSION = "dotboxd-py-effect-analysis-1"


class CallKind(StrEnum):
    BUILTIN = "builtin"
    FUNCTION = "function"
    BINDING = "binding"


@dataclass(frozen=True, slots=True)
class CallTarget:
    """What a call node resolves to. Exactly one of ``builtin`` / ``binding`` is set for those kinds;
    for ``FUNCTION`` look the callee up with ``plan.functions[target.name]``."""

    kind: CallKind
    name: str
    builtin: Builtin | None = None
    binding: BindingDescriptor | None = None


class OperandOrder(StrEnum):
    AUTHORED = "authored"  # left operand first (the default)
    RIGHT_FIRST = "right-first"  # neither operand can fail and the right one is strictly cheaper


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    """Per-function facts.

    ``local_types`` maps every parameter and every local (including ``forRange`` locals) to the type
    of its first binding. Sibling blocks may bind one name with different types (block scoping), so
    ``loop_types`` gives, per loop node id, the names in scope at the loop head whose type differs
    from ``local_types`` (a value left by an ended block is never read: every read follows a binding
    in scope, which the names and type passes check). ``effects`` is the transitive total over live code and
    always includes Cpu; ``direct_effects`` excludes callees. ``callees`` and ``bindings_called`` are
    those of live (non-dead) code; ``reachable`` says whether an entrypoint can reach the function."""

    id: str
    function: Function
    is_entrypoint: bool
    parameter_types: tuple[SandboxType, ...]
    return_type: SandboxType
    local_types: Mapping[str, SandboxType]
    direct_effects: Effect
    effects: Effect
    callees: frozenset[str]
    bindings_called: frozenset[str]
    reachable: bool
    loop_types: Mapping[int, Mapping[str, SandboxType]] = field(default_factory=lambda: EMPTY)

    def type_at_loop(self, loop: Stmt, name: str) -> SandboxType | None:
        """The type of local ``name`` at the head of ``loop`` (a node of this function)."""
        rebound = self.loop_types.get(id(loop))
        if rebound is not None and name in rebound:
            return rebound[name]
        return self.local_types.get(name)

    @property
    def is_pure(self) -> bool:
        """Effects within Cpu|Alloc (no binding with other effects is reachable from it)."""
        return not (self.effects & ~PURE)


@dataclass(frozen=True, slots=True)
class ExecutionPlan:
    """An immutable, validated plan. Build it with ``dotboxd.validator.api.validate``."""

    module: Module
    policy: Policy
    catalog: BindingCatalog
    bindings: Mapping[str, BindingDescriptor]
    functions: Mapping[str, FunctionInfo]
    entrypoints: tuple[str, ...]
    required_effects: Effect
    required_capabilities: tuple[str, ...]
    requested_capabilities: tuple[str, ...]
    capability_paths: Mapping[str, tuple[str, ...]]
    expr_types: Mapping[int, SandboxType] = field(repr=False)
    call_targets: Mapping[int, CallTarget] = field(repr=False)
    right_first: frozenset[int] = field(repr=False)
    dead_statements: frozenset[int] = field(repr=False)
    module_hash: str = ""
    policy_hash: str = ""
    binding_manifest_hash: str = ""
    plan_hash: str = ""
    warnings: tuple[Diagnostic, ...] = ()

    def __deepcopy__(self, memo: dict[int, object]) -> ExecutionPlan:
        """Itself, not a copy of its parts: the node tables are keyed by the identity of ``module``'s
        nodes, which a copied module would not have (a deep-copied plan failed every run
        ``R-HOST-INTERNAL``), and the policy's revocations and the catalogue's bindings are shared
        handles anyway. Objects holding a plan deep-copy with it shared; ``dataclasses.asdict(plan)``
        still converts its fields (a data snapshot, not a plan). ``copy.copy`` keeps making a new
        plan object with the same parts (hosts use it for identity-distinct plans)."""
        return self

    # -- node facts -----------------------------------------------------------------------------

    def type_of(self, node: Expr) -> SandboxType:
        """The resolved type of an expression node of ``self.module`` (KeyError for foreign nodes)."""
        return self.expr_types[id(node)]

    def call_target(self, node: Call) -> CallTarget:
        return self.call_targets[id(node)]

    def operand_order(self, node: Binary) -> OperandOrder:
        """For ``and``/``or``: which operand runs first. Both backends must follow it."""
        return OperandOrder.RIGHT_FIRST if id(node) in self.right_first else OperandOrder.AUTHORED

    def is_dead(self, stmt: Stmt) -> bool:
        """True for statements that can never run (after return/break/continue in their block)."""
        return id(stmt) in self.dead_statements

    def function(self, function_id: str) -> FunctionInfo:
        return self.functions[function_id]

    def local_type(self, function_id: str, name: str) -> SandboxType:
        return self.functions[function_id].local_types[name]

    def binding(self, binding_id: str) -> BindingDescriptor | None:
        """A binding the plan allows calling (reachable from an entrypoint), or None (the runtime
        must then refuse the call with ValidationError, step 2 of the binding call sequence)."""
        return self.bindings.get(binding_id)

    # -- run-time gates -------------------------------------------------------------------------

    def ensure_usable(self, now_unix_ms: int | None = None) -> None:
        """Refuse a plan whose policy no longer covers it: a requested or required capability was
        revoked (E-POLICY-REVOKED) or its grant expired (E-POLICY-CAP). Call before every run."""
        now = now_ms() if now_unix_ms is None else now_unix_ms
        for cap in sorted(set(self.required_capabilities) | set(self.requested_capabilities)):
            pattern = self.policy.revocations.revoked(cap)
            if pattern is not None:
                raise reject(
                    "E-POLICY-REVOKED",
                    f"capability '{cap}' was revoked",
                    hint="prepare the kernel again against the current policy",
                    capability=cap,
                    revoked=pattern,
                )
            if self.policy.grant_for(cap, now) is None:
                raise reject(
                    "E-POLICY-CAP",
                    f"capability '{cap}' is no longer granted (its grant expired)",
                    capability=cap,
                    path=list(self.capability_paths.get(cap, ())),
                )

    def verify_integrity(self) -> None:
        """Recompute the plan hash from its parts (E-PLAN-INTEGRITY on a mismatch)."""
        expected = compute_plan_hash(self)
        if expected != self.plan_hash:
            raise reject(
                "E-PLAN-INTEGRITY",
                "the plan's hash does not match its contents",
                expected=expected,
                actual=self.plan_hash,
            )

    def check_bindings(self, catalog: BindingCatalog) -> None:
        """Refuse to run against a catalogue whose descriptors for the plan's bindings differ from
        the ones validated (E-PLAN-BINDINGS): a changed signature, effect or capability needs a new plan."""
        for bid, desc in sorted(self.bindings.items()):
            other = catalog.get(bid)
            if other is None or binding_record(other) != binding_record(desc):
                raise reject(
                    "E-PLAN-BINDINGS",
                    f"binding '{bid}' is missing or changed since the plan was validated",
                    binding=bid,
                    hint="validate the module again against the current bindings",
                )

    def check_implementations(self, catalog: BindingCatalog) -> None:
        """Refuse to run against a catalogue whose implementations of the plan's bindings are not
        the ones the plan was validated with (E-PLAN-BINDINGS). A plan keeps the descriptors of
        the catalogue it was prepared against, callables included: run on another host, it would
        call the preparing host's code and touch its state while the executing host's catalogue
        was only compared. So a plan runs only where its bindings are the executing host's own
        (the same host, or hosts sharing the binding objects); anywhere else it is prepared again."""
        for bid, desc in sorted(self.bindings.items()):
            other = catalog.get(bid)
            if other is None or not same_implementation(other, desc):
                raise reject(
                    "E-PLAN-BINDINGS",
                    f"binding '{bid}' of this host is not the implementation the plan was prepared with",
                    binding=bid,
                    hint="prepare the module on the host that executes it",
                )

    # -- reporting ------------------------------------------------------------------------------

    @property
    def language_surface(self) -> str:
        """The smallest language surface (``dotboxd.core.builtins.SURFACES``) holding every built-in
        the module calls: ``dotboxd-1`` unless it uses an extension built-in."""
        return surface_needed(t.name for t in self.call_targets.values() if t.kind is CallKind.BUILTIN)

    def summary(self) -> dict[str, Any]:
        """A stable JSON view (the ``dotboxd check --format json`` payload)."""
        return {
            "module": self.module.id,
            "entrypoints": list(self.entrypoints),
            "requiredEffects": effect_names(self.required_effects),
            "requiredCapabilities": list(self.required_capabilities),
            "requestedCapabilities": list(self.requested_capabilities),
            "capabilityPaths": {k: list(v) for k, v in sorted(self.capability_paths.items())},
            "bindings": sorted(self.bindings),
            "languageSurface": self.language_surface,
            "functions": {
                fid: {
                    "entrypoint": info.is_entrypoint,
                    "reachable": info.reachable,
                    "effects": effect_names(info.effects),
                }
                for fid, info in sorted(self.functions.items())
            },
            "moduleHash": self.module_hash,
            "policyHash": self.policy_hash,
            "bindingManifestHash": self.binding_manifest_hash,
            "planHash": self.plan_hash,
            "warnings": [w.to_json() for w in self.warnings],
        }


def compute_plan_hash(plan: ExecutionPlan) -> str:
    """SHA-256 over the three input hashes, the analysis and cost-table versions and the derived
    facts (the cost table decides fuel verdicts and proofs, so a plan is tied to the table it was
    validated under)."""
    lines = [
        canonical_record(PLAN_HASH_ID),
        canonical_record("inputs", plan.module_hash, plan.policy_hash, plan.binding_manifest_hash),
        canonical_record("versions", TYPE_SYSTEM_VERSION, EFFECT_ANALYSIS_VERSION, COST_TABLE_VERSION),
        canonical_record("required-effects", int(plan.required_effects), effects_text(plan.required_effects)),
    ]
    lines.extend(canonical_record("capability", c) for c in plan.required_capabilities)
    lines.extend(canonical_record("binding", b) for b in sorted(plan.bindings))
    lines.extend(
        canonical_record("function", fid, int(info.effects), info.reachable)
        for fid, info in sorted(plan.functions.items())
    )
    return sha256_lines(lines)


def module_hash(module: Module) -> str:
    """The module's canonical hash (``dotboxd-canonicalizer-1`` form, from the grammar layer)."""
    return canonical.module_hash(module)


def plan_error(message: str, **evidence: Any) -> DotBoxDError:
    return reject("E-PLAN-INTEGRITY", message, **evidence)
