"""One generated program: a module, the policy and fixtures it needs, an entrypoint and inputs.

``build_program(src)`` assembles the pieces in dependency order: declared brands, fixture bindings,
private functions (function ``k`` may call only functions ``0..k-1``, so the call graph is acyclic
by construction), then the entrypoint (which may call every private function). The policy grants
exactly the capabilities the module can reach (``liveness``), declares the brands, allows async only
when an async binding is reachable, keeps a generous wall-time budget (so outcomes never depend on
the machine's speed) and sometimes tightens one limit so that quota errors are exercised.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core import ast
from dotboxd.core.ast_walk import expressions
from dotboxd.core.types import SandboxType, resolve_type, to_type_ref
from dotboxd.validator.literals import utf16_length

from . import vocab
from .context import FunctionSig, FunctionState, ModuleEnv, Scope
from .fixtures import Fixture, draw_fixtures
from .liveness import reachable_bindings
from .owned import with_owned_list
from .source import Source
from .stmts import StmtGen

ENTRY_NAMES = ("main", "run", "entry", "score")
_FUNCTION_STEMS = ("helper", "calc", "build", "pick", "step")
_PARAM_NAMES = ("a", "b", "count", "label", "items", "limit", "key", "w")
#: Far above what any generated run needs: a generated expectation must not depend on machine speed.
WALL_TIME_MS = 60_000


@dataclass(frozen=True, slots=True)
class GeneratedProgram:
    """A well-typed, well-scoped module plus everything needed to run it as a conformance case.

    ``policy_json`` and ``bindings_json`` are in the case format; ``args_json`` holds one input per
    entrypoint parameter in the conformance typed encoding; ``param_types`` are the entrypoint's
    parameter types (to draw further inputs); ``tags`` name the features the program exercises."""

    module: ast.Module
    policy_json: dict[str, Any]
    bindings_json: list[dict[str, Any]]
    entry: str
    args_json: list[Any]
    tags: tuple[str, ...] = ()
    param_types: tuple[SandboxType, ...] = field(default=(), compare=False)


def build_program(src: Source) -> GeneratedProgram:
    """Draw one complete program from ``src``."""
    brands = _brands(src)
    fixtures = draw_fixtures(src, src.integer(1, 3) if src.chance(40) else 0)
    env = ModuleEnv(brands, tuple(f.sig for f in fixtures))
    gen = StmtGen(src)
    functions: list[ast.Function] = []
    for index in range(src.integer(0, 3)):
        sig = _signature(src, f"{src.choice(_FUNCTION_STEMS)}{index}", brands, src.integer(0, 3))
        functions.append(_function(gen, env, sig, ast.Visibility.PRIVATE))
        env.functions.append(sig)
    entry = _signature(src, src.choice(ENTRY_NAMES), brands, src.integer(0, 4))
    functions.append(_function(gen, env, entry, ast.Visibility.ENTRYPOINT))
    module = ast.Module("gen.module", "1.0.0", "1.0.0", (), tuple(functions))
    by_id = {f.sig.id: f for f in fixtures}
    reached = [by_id[bid] for bid in reachable_bindings(module, by_id)]
    capabilities = sorted({f.capability for f in reached if f.capability is not None})
    if capabilities and src.chance(25):
        requests = tuple(ast.CapabilityRequest(cap, "generated request") for cap in capabilities)
        module = ast.Module(
            module.id, module.version, module.target_sandbox_version, requests, module.functions
        )
    if src.chance(10):
        module = ast.Module(
            module.id,
            module.version,
            module.target_sandbox_version,
            module.capability_requests,
            module.functions,
            (("origin", "generator"),),
        )
    if brands:
        env.note("opaque-ids")
    if reached:
        env.note("fixtures")
    policy = _policy(src, module, brands, reached, capabilities, env)
    args = [vocab.canonical_json(src, t) for _, t in entry.params]
    if src.chance(OWNED_LIST_PERCENT):  # drawn last: a program without the block is unchanged
        module = _with_owned_entry(src, module, entry.name, brands)
        env.note("owned-list")
    return GeneratedProgram(
        module=module,
        policy_json=policy,
        bindings_json=[f.entry for f in fixtures],
        entry=entry.name,
        args_json=args,
        tags=tuple(env.features),
        param_types=tuple(t for _, t in entry.params),
    )


@dataclass(frozen=True, slots=True)
class ProgramWithInputs:
    """A program and several input vectors for its entrypoint (``inputs[0]`` is its own)."""

    program: GeneratedProgram
    inputs: tuple[list[Any], ...]


def draw_inputs(src: Source, program: GeneratedProgram, count: int) -> list[list[Any]]:
    """``count`` further input vectors for ``program``'s entrypoint (typed encoding)."""
    types = entry_param_types(program)
    return [[vocab.canonical_json(src, t) for t in types] for _ in range(count)]


OWNED_LIST_PERCENT = 15
"""How often the entrypoint starts with an owned-list block (``owned``)."""


def _with_owned_entry(src: Source, module: ast.Module, entry: str, brands: tuple[str, ...]) -> ast.Module:
    functions = tuple(with_owned_list(src, fn, brands) if fn.id == entry else fn for fn in module.functions)
    return dataclasses.replace(module, functions=functions)


def entry_param_types(program: GeneratedProgram) -> tuple[SandboxType, ...]:
    """The entrypoint's parameter types, re-read from the module (brands from the policy)."""
    fn = program.module.function(program.entry)
    assert fn is not None
    brands = tuple(program.policy_json.get("declaredOpaqueIdTypes", ()))
    return tuple(resolve_type(p.type, brands) for p in fn.parameters)


def _brands(src: Source) -> tuple[str, ...]:
    if src.chance(70):
        return ()
    count = src.integer(1, 2)
    pool = list(vocab.BRAND_POOL)
    chosen: list[str] = []
    for _ in range(count):
        chosen.append(pool.pop(src.integer(0, len(pool) - 1)))
    return tuple(chosen)


def _signature(src: Source, name: str, brands: tuple[str, ...], arity: int) -> FunctionSig:
    names = list(_PARAM_NAMES)
    params: list[tuple[str, SandboxType]] = []
    for _ in range(arity):
        pname = names.pop(src.integer(0, len(names) - 1))
        params.append((pname, vocab.draw_type(src, brands, 2)))
    return FunctionSig(name, tuple(params), vocab.draw_type(src, brands, 2))


def _function(gen: StmtGen, env: ModuleEnv, sig: FunctionSig, visibility: ast.Visibility) -> ast.Function:
    state = FunctionState(sig, dict(sig.params), gen.src.integer(40, 120))
    scope = Scope(env, state, dict(sig.params))
    body = gen.function_body(scope, sig.ret)
    params = tuple(ast.Param(n, to_type_ref(t)) for n, t in sig.params)
    return ast.Function(sig.name, visibility, params, to_type_ref(sig.ret), body)


def _policy(
    src: Source,
    module: ast.Module,
    brands: tuple[str, ...],
    reached: list[Fixture],
    capabilities: list[str],
    env: ModuleEnv,
) -> dict[str, Any]:
    limits: dict[str, int] = {"maxWallTimeMs": WALL_TIME_MS}
    tight = src.weighted(
        ((80, ""), (5, "fuel"), (4, "loops"), (3, "calls"), (2, "list"), (3, "string"), (3, "hosts"))
    )
    if tight == "fuel":
        limits["maxFuel"] = src.integer(50, 3000)
    elif tight == "loops":
        limits["maxLoopIterations"] = src.integer(0, 12)
    elif tight == "calls":
        limits["maxCallDepth"] = src.integer(1, 3)
    elif tight == "list":
        limits["maxListLength"] = src.integer(1, 4)
    elif tight == "string":
        limits["maxStringLength"] = _longest_literal(module) + src.integer(0, 6)
    elif tight == "hosts" and reached:
        limits["maxHostCalls"] = src.integer(0, 2)
    if len(limits) > 1:
        env.note("tight-limits")
    policy: dict[str, Any] = {"policyId": "generated", "limits": limits}
    if capabilities:
        policy["grants"] = [{"id": cap, "parameters": {}} for cap in capabilities]
    if any(f.is_async for f in reached):
        policy["allowRuntimeAsync"] = True
        env.note("async")
    if brands:
        policy["declaredOpaqueIdTypes"] = list(brands)
    if not capabilities and "allowRuntimeAsync" not in policy and src.chance(15):
        policy["deterministic"] = {"logicalNowUnixMillis": 1_700_000_000_000, "randomSeed": 7}
        env.note("deterministic")
    return policy


def _longest_literal(module: ast.Module) -> int:
    """The longest string literal in UTF-16 units (a smaller maxStringLength rejects the module)."""
    return max(
        (
            utf16_length(e.value)
            for fn in module.functions
            for e in expressions(fn.body)
            if isinstance(e, ast.Literal) and e.kind is ast.LiteralKind.STRING and isinstance(e.value, str)
        ),
        default=0,
    )
