"""Compiled artifacts: generate -> verify the AST -> ``compile()`` -> verify the code -> bind.

An ``Artifact`` is the verified, executable form of one plan: the generated module (when kept), its
side tables and the Python functions obtained by executing the verified code object once in a fresh
namespace whose ``__builtins__`` is empty and which holds nothing but the stub table, ``_range``, the
artifact's own GUID constants and (after execution) its own functions. Every way to obtain an
artifact - fresh compilation or loading from the disk cache - goes through ``bind``, so nothing
reaches ``compile()`` or ``exec`` without passing the verifier.

The cold exact paths of fast bulk loops (``cold.py``) are the one part built later: ``ColdPaths``
generates, verifies, compiles and executes them the first time a run needs one, through the same
steps and checks, in a copy of the artifact's namespace.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import marshal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import CodeType, MappingProxyType
from typing import Any

from dotboxd.core.costs import CALL_DEPTH_STEP
from dotboxd.core.values import Value
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import SandboxError
from dotboxd.validator.plan import ExecutionPlan

from . import inline_reads
from .codegen import GenOptions, generate, generate_cold
from .cold import cold_name
from .errors import CompileFailure
from .proofs import proof_facts
from .stubs import RunState, namespace_base, sync
from .tables import Tables, function_name
from .verifier import VERIFIER_VERSION, allowed_globals, verify_code, verify_cold_module, verify_module
from .verify_projection import projected_functions

COMPILER_VERSION = (
    "dotboxd-py-opt-codegen-23"  # 23: a projected event's fused reads inline
    # (inline_reads.py, rule 29); 22: iteration blocks on by default (blocks.py);
    # 21: map.get / map.containsKey at a string literal fused (_s_lrget,
    # _s_lrhas: literal_reads.py); 20: ``k * x + c`` in a fast chunk tests ``x`` (scaled_steps.py);
    # 19: periodic arms counted in closed form (periodic_tally.py), checks the
    # operands' value ranges rule out dropped (value_ranges.py); 18: fast list chunks (list_chunks: adds and view reads
    # paid once per chunk, c<n> slots); 17: pre-checked fast chunks of owned-string loops; 16: pre-checked owned-map
    # chunks (mapchunk, mc<n> tallies); 15: slots numbered in sorted name order (same source in every process); 14:
    # inline list reads subscript a buffer view (g<n>), loop refunds
    # computed on failure paths, inline reads test one fuel slot; 13: owned maps use a containsKey
    # branch's answer; 12: sign-aware overflow tests, counter resets, branch fuel tallies; 11: owned
    # strings (parts lists); 10: owned maps (dict inside bulk loops); 9: owned lists (in-place
    # list.add); 8: counter-capped chunks (_s_capm), inline list reads; 7: in-place concat
)


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
    module: ast.Module | None
    """The verified module, when the artifact was built to keep it (``keep_module``: the disk cache
    writes its source); None otherwise (see ``compile_plan``)."""
    tables: Tables
    code: CodeType
    functions: Mapping[str, Callable[..., tuple[Value, int]]]
    sites: tuple[Any, ...]
    totals: tuple[int, ...]
    texts: tuple[Any, ...]
    bindings: tuple[str, ...]
    site_nodes: tuple[int, ...]
    ir_nodes: int
    build_seconds: float
    cold: ColdPaths
    size_bytes: int = 0
    """An estimate of the memory the artifact holds (``estimate_bytes``): what the artifact cache
    bounds in bytes."""
    projected: frozenset[str] = frozenset()
    """The entry functions (plan function ids) the verifier admitted to take a host event's checked
    snapshot instead of its map (rule 25, ``verify_projection``): the fast lane's projected events."""

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        run.executed_by = "optimized"  # the tier that really ran (auto mode reports this, not "auto")
        meter = run.meter
        depth = meter.call_depth + CALL_DEPTH_STEP
        max_depth = meter.limits.max_call_depth
        if depth > max_depth or meter._cancel.cancelled:
            meter.enter_call()  # the meter's own refusals, in its order (depth, then cancellation)
            meter.check_cancelled()
        else:
            meter.call_depth = depth  # ``Meter.enter_call`` when it cannot refuse
        state = RunState(run, self.sites, self.totals, self.texts, self.bindings, self.site_nodes)
        value, fuel = self.functions[function_id](
            state, meter.max_fuel - meter.fuel_used, max_depth - depth, 0, *args
        )
        meter.fuel_used = meter.max_fuel - fuel
        meter.exit_call()
        return value

    def source(self) -> str:
        """The generated module as Python text (for review and for the disk cache; user data is in
        the tables, never in this text). Only an artifact that kept its module has one."""
        if self.module is None:
            raise ValueError("this artifact was compiled without keep_module=True; it has no source")
        return ast.unparse(self.module)


def compile_plan(
    plan: ExecutionPlan, options: GenOptions | None = None, *, keep_module: bool = False
) -> Artifact:
    """Generate, verify and bind a fresh artifact for ``plan``.

    The generated AST is dropped once it is compiled unless ``keep_module`` is set (for ``source``).
    Why: it is tens of thousands of objects the collector tracks; released while the collector is
    still paused they are freed by reference counting alone, whereas kept alive they are all walked
    by the young-generation collection that follows the build (about a fifteenth of the compile
    latency of a typical plan), and they would stay in memory as long as the artifact is cached.

    Raises ``VerifierFailure`` when the generated code fails verification and ``CompileFailure``
    when no code can be produced."""
    options = options or GenOptions()
    started = time.perf_counter()
    with _collector_paused():
        try:
            generated = generate(plan, options, proof_facts(plan, options))
        except CompileFailure:
            raise  # a refusal with its own reason (the compile budget)
        except RecursionError:
            raise CompileFailure("the plan nests too deeply to compile") from None
        except Exception as exc:  # a generator bug must fail closed (and may fall back), never run
            raise CompileFailure(f"the code generator failed ({type(exc).__name__})") from None
        module, tables, ir_nodes = generated.module, generated.tables, generated.ir_nodes
        del generated
        artifact = bind(
            plan,
            ArtifactKey.for_plan(plan, options),
            module,
            tables,
            ir_nodes,
            started,
            keep_module=keep_module,
        )
        del module  # unless the artifact keeps it, the tree is freed here, before the collector resumes
        return artifact


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one artifact is built.

    Why: building allocates tens of thousands of short-lived AST nodes, which would trigger many
    collections, each walking the whole heap of the host process - a fifth of the compile latency
    when measured. The nodes form no reference cycles, so pausing frees nothing later than it would
    have been freed anyway. The collector is only re-enabled if it was enabled on entry (a host that
    runs with it disabled keeps it so); concurrent builds at worst re-enable it early."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def bind(
    plan: ExecutionPlan,
    key: ArtifactKey,
    module: ast.Module,
    tables: Tables,
    ir_nodes: int,
    started: float | None = None,
    *,
    keep_module: bool = True,
) -> Artifact:
    """Verify ``module`` against ``plan``, compile it, verify the code objects and execute the
    module once in a fresh namespace to obtain its functions. The artifact holds ``module`` when
    ``keep_module`` is set."""
    started = time.perf_counter() if started is None else started
    globals_allowed = allowed_globals(tables)
    verify_module(module, tables, plan, globals_allowed, key.options)
    code = _compile_verified(module, plan, globals_allowed)
    namespace = namespace_base()
    namespace.update(tables.guid_values())
    namespace.update(inline_reads.HELPERS)  # rule 29's inline reads: their helpers and key constants
    namespace.update(inline_reads.key_values(tables.texts))
    cold = ColdPaths(plan, tables, namespace)
    namespace.update(cold.entries())
    _execute(code, namespace, globals_allowed)
    functions: dict[str, Callable[..., tuple[Value, int]]] = {}
    for index, fid in enumerate(tables.functions):
        functions[fid] = namespace[function_name(index)]
    return Artifact(
        key=key,
        module=module if keep_module else None,
        tables=tables,
        code=code,
        functions=MappingProxyType(functions),
        sites=tables.resolved_sites(),
        totals=tables.totals(),
        texts=tables.resolved_texts(),
        bindings=tuple(tables.bindings),
        site_nodes=tables.resolved_site_nodes(),
        ir_nodes=ir_nodes,
        build_seconds=time.perf_counter() - started,
        cold=cold,
        size_bytes=estimate_bytes(code, tables, module if keep_module else None),
        projected=projected_functions(module, tables, plan),
    )


def estimate_bytes(code: CodeType, tables: Tables, module: ast.Module | None) -> int:
    """The memory an artifact holds, estimated in proportion to its parts: a fixed part (its
    namespace, a copy of the stub table), its code objects (twice their marshalled size: in memory
    they carry more than the serialized form), its side tables (the texts twice, once raw and once as
    values, plus a fixed amount per entry), and the kept AST, when there is one (many times its
    bytecode). An estimate, not an accounting (measured with tracemalloc it came within a factor of
    two of what an artifact retains): what matters is that it grows with everything that grows
    with the plan."""
    code_bytes = len(marshal.dumps(code))
    entries = len(tables.sites) + len(tables.texts) + len(tables.guids) + len(tables.bindings)
    text_bytes = sum(len(raw) for _, raw, _ in tables.texts)
    total = _FIXED_BYTES + 2 * code_bytes + 2 * text_bytes + 64 * entries
    if module is not None:
        total += _AST_PER_CODE_BYTE * code_bytes
    return total


_FIXED_BYTES = 8 * 1024
_AST_PER_CODE_BYTE = 24


def _compile_verified(module: ast.Module, plan: ExecutionPlan, globals_allowed: frozenset[str]) -> CodeType:
    """``compile()`` a module the AST verifier accepted, then check its code objects."""
    try:
        code = compile(module, f"<dotboxd-opt:{plan.module_hash[:16]}>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        raise CompileFailure("generated code could not be compiled") from None
    verify_code(code, globals_allowed)
    return code


def _execute(code: CodeType, namespace: dict[str, Any], globals_allowed: frozenset[str]) -> None:
    """Execute a verified module (it only defines functions) and check what it left behind."""
    exec(code, namespace)
    unexpected = set(namespace) - globals_allowed - {"__builtins__"}
    if unexpected or namespace["__builtins__"] != {}:
        raise CompileFailure("generated module left unexpected names in its namespace")


_Built = tuple[
    list[Callable[..., Any]],
    tuple[Any, ...],
    tuple[int, ...],
    tuple[Any, ...],
    tuple[str, ...],
    tuple[int, ...],
]


class ColdPaths:
    """The cold exact paths of one artifact (``cold.py``), built the first time a run needs one.

    ``entries()`` are what the artifact's namespace binds as ``_x<i>``: each builds all cold paths
    on its first call (generate from the plan into a copy of the tables, verify the AST, compile,
    verify the code objects, execute in a copy of the namespace), then calls its cold function with
    a run state whose tables include the sites the cold code added. If building fails - a generator
    or verifier bug, never the kernel's doing - the run fails closed with ``R-HOST-INTERNAL``."""

    def __init__(self, plan: ExecutionPlan, tables: Tables, namespace: dict[str, Any]) -> None:
        self._plan = plan
        self._tables = tables
        self._namespace = namespace
        self._lock = threading.Lock()
        self._built: _Built | None = None
        self._failure: str | None = None

    @property
    def count(self) -> int:
        return len(self._tables.colds)

    @property
    def built(self) -> bool:
        return self._built is not None

    def entries(self) -> dict[str, Callable[..., Any]]:
        return {cold_name(index): self._entry(index) for index in range(self.count)}

    def _entry(self, index: int) -> Callable[..., Any]:
        def enter(state: RunState, f: int, d: int, lr: int, *args: Any) -> Any:
            built = self._built or self._build(state, f, lr)
            functions, sites, totals, texts, bindings, nodes = built
            return functions[index](
                RunState(state.run, sites, totals, texts, bindings, nodes), f, d, lr, *args
            )

        return enter

    def _build(self, state: RunState, f: int, lr: int) -> _Built:
        with self._lock:
            if self._built is None and self._failure is None:
                try:
                    with _collector_paused():
                        self._built = self._compile()
                except Exception as exc:  # fail closed: the run ends, nothing unverified runs
                    self._failure = type(exc).__name__
        if self._built is None:
            sync(state, f, lr)
            raise SandboxError("R-HOST-INTERNAL", f"a loop's exact path could not be built ({self._failure})")
        return self._built

    def _compile(self) -> _Built:
        tables = self._tables.copy()
        module = generate_cold(self._plan, tables)
        globals_allowed = allowed_globals(tables)
        verify_cold_module(module, tables, self._plan, globals_allowed)
        code = _compile_verified(module, self._plan, globals_allowed)
        namespace = dict(self._namespace)  # the stubs and the artifact's own functions
        namespace["__builtins__"] = {}
        namespace.update(tables.guid_values())
        _execute(code, namespace, globals_allowed)
        functions = [namespace[cold_name(index)] for index in range(self.count)]
        return (
            functions,
            tables.resolved_sites(),
            tables.totals(),
            tables.resolved_texts(),
            tuple(tables.bindings),
            tables.resolved_site_nodes(),
        )
