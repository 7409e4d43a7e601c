"""Compiled artifacts: generate -> verify the AST -> ``compile()`` -> verify the code -> bind.

An ``Artifact`` is the verified, executable form of one plan: the generated module, its side tables
and the Python functions obtained by executing the verified code object once in a fresh namespace
whose ``__builtins__`` is empty and which holds nothing but the stub table, ``_range``, the
artifact's own GUID constants and (after execution) its own functions. Every way to obtain an
artifact - fresh compilation or loading from the disk cache - goes through ``bind``, so nothing
reaches ``compile()`` or ``exec`` without passing the verifier.
"""

from __future__ import annotations

import ast
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import CodeType, MappingProxyType
from typing import Any

from dotboxd.core.values import Value
from dotboxd.runtime.context import RunContext
from dotboxd.validator.plan import ExecutionPlan

from .codegen import GenOptions, generate
from .errors import CompileFailure
from .stubs import RunState, namespace_base
from .tables import Tables, function_name
from .verifier import VERIFIER_VERSION, allowed_globals, verify_code, verify_module

COMPILER_VERSION = "dotboxd-py-opt-codegen-1"


@dataclass(frozen=True, slots=True)
class ArtifactKey:
    """What an artifact is valid for: the module, plan, policy and binding manifest it was compiled
    from, the compiler and verifier that produced and checked it, and the generation options."""

    module_hash: str
    plan_hash: str
    policy_hash: str
    binding_manifest_hash: str
    compiler: str = COMPILER_VERSION
    verifier: str = VERIFIER_VERSION
    options: str = ""

    @classmethod
    def for_plan(cls, plan: ExecutionPlan, options: GenOptions) -> ArtifactKey:
        return cls(
            plan.module_hash,
            plan.plan_hash,
            plan.policy_hash,
            plan.binding_manifest_hash,
            options=options.key(),
        )

    def digest(self) -> str:
        text = "\n".join(
            (
                "dotboxd-opt-artifact-key-1",
                self.module_hash,
                self.plan_hash,
                self.policy_hash,
                self.binding_manifest_hash,
                self.compiler,
                self.verifier,
                self.options,
            )
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def to_json(self) -> dict[str, str]:
        return {
            "moduleHash": self.module_hash,
            "planHash": self.plan_hash,
            "policyHash": self.policy_hash,
            "bindingManifestHash": self.binding_manifest_hash,
            "compiler": self.compiler,
            "verifier": self.verifier,
            "options": self.options,
        }


@dataclass(frozen=True, slots=True)
class Artifact:
    """A verified, bound artifact. ``run`` executes one entrypoint call of the plan."""

    key: ArtifactKey
    module: ast.Module
    tables: Tables
    code: CodeType
    functions: Mapping[str, Callable[..., tuple[Value, int]]]
    sites: tuple[Any, ...]
    totals: tuple[int, ...]
    texts: tuple[Any, ...]
    bindings: tuple[str, ...]
    ir_nodes: int
    build_seconds: float

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        run.executed_by = "optimized"  # the tier that really ran (auto mode reports this, not "auto")
        meter = run.meter
        meter.enter_call()
        meter.check_cancelled()
        state = RunState(run, self.sites, self.totals, self.texts, self.bindings)
        fuel = meter.max_fuel - meter.fuel_used
        frames = meter.limits.max_call_depth - meter.call_depth
        value, fuel = self.functions[function_id](state, fuel, frames, 0, *args)
        meter.fuel_used = meter.max_fuel - fuel
        meter.exit_call()
        return value

    def source(self) -> str:
        """The generated module as Python text (for review and for the disk cache; user data is in
        the tables, never in this text)."""
        return ast.unparse(self.module)


def compile_plan(plan: ExecutionPlan, options: GenOptions | None = None) -> Artifact:
    """Generate, verify and bind a fresh artifact for ``plan``.

    Raises ``VerifierFailure`` when the generated code fails verification and ``CompileFailure``
    when no code can be produced."""
    options = options or GenOptions()
    started = time.perf_counter()
    try:
        generated = generate(plan, options)
    except RecursionError:
        raise CompileFailure("the plan nests too deeply to compile") from None
    except Exception as exc:  # a generator bug must fail closed (and may fall back), never run
        raise CompileFailure(f"the code generator failed ({type(exc).__name__})") from None
    return bind(
        plan,
        ArtifactKey.for_plan(plan, options),
        generated.module,
        generated.tables,
        generated.ir_nodes,
        started,
    )


def bind(
    plan: ExecutionPlan,
    key: ArtifactKey,
    module: ast.Module,
    tables: Tables,
    ir_nodes: int,
    started: float | None = None,
) -> Artifact:
    """Verify ``module`` against ``plan``, compile it, verify the code objects and execute the
    module once in a fresh namespace to obtain its functions."""
    started = time.perf_counter() if started is None else started
    verify_module(module, tables, plan)
    try:
        code = compile(module, f"<dotboxd-opt:{plan.module_hash[:16]}>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        raise CompileFailure("generated code could not be compiled") from None
    globals_allowed = allowed_globals(tables)
    verify_code(code, globals_allowed)
    namespace = namespace_base()
    namespace.update(tables.guid_values())
    exec(code, namespace)  # the verified module only defines functions
    functions: dict[str, Callable[..., tuple[Value, int]]] = {}
    for index, fid in enumerate(tables.functions):
        functions[fid] = namespace[function_name(index)]
    unexpected = set(namespace) - globals_allowed - {"__builtins__"}
    if unexpected or namespace["__builtins__"] != {}:
        raise CompileFailure("generated module left unexpected names in its namespace")
    return Artifact(
        key=key,
        module=module,
        tables=tables,
        code=code,
        functions=MappingProxyType(functions),
        sites=tables.resolved_sites(),
        totals=tables.totals(),
        texts=tables.resolved_texts(),
        bindings=tuple(tables.bindings),
        ir_nodes=ir_nodes,
        build_seconds=time.perf_counter() - started,
    )
