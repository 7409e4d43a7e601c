"""``validate(module, policy, registry) -> ExecutionPlan``: the validator's one public entry point.

The passes run in DotBoxD's order (structure, bindings, names and scopes, types, control flow,
call graph, literals, effects, capabilities, policy resolution, plan). The first pass that reports
anything ends validation, so every later pass may rely on the invariants of the earlier ones and a
single root cause never cascades into follow-on diagnostics. Whatever the input, the only exception
that leaves this function is DotBoxDError.
"""

from __future__ import annotations

from collections.abc import Callable

from dotboxd.core.ast import Module
from dotboxd.core.bindings import EMPTY_CATALOG
from dotboxd.core.diagnostics import DotBoxDError, reject

from . import (
    call_graph,
    capabilities,
    control_flow,
    effects,
    literals,
    planning,
    policy_resolution,
    scopes,
    structure,
    typecheck,
)
from .binding_catalogue import BindingSource, to_catalog
from .context import Context
from .plan import ExecutionPlan
from .policy import Policy, now_ms

#: The passes after the catalogue is built, in order (the plan pass runs last, separately).
PASSES: tuple[tuple[str, Callable[[Context], None]], ...] = (
    ("structure", structure.run),
    ("names", scopes.run),
    ("types", typecheck.run),
    ("control-flow", control_flow.run),
    ("call-graph", call_graph.run),
    ("literals", literals.run),
    ("effects", effects.run),
    ("capabilities", capabilities.run),
    ("policy", policy_resolution.run),
)


def validate(
    module: Module,
    policy: Policy | None = None,
    registry: BindingSource = None,
    *,
    now_unix_ms: int | None = None,
    prove: bool = True,
) -> ExecutionPlan:
    """Validate ``module`` against ``policy`` and the host bindings; return the ExecutionPlan.

    ``prove=False`` skips only the strict-mode proof (``requireStaticBound``): for a process that
    re-checks a plan its host already proved before installing it (an isolated kernel worker,
    which cannot run Z3's timer threads under seccomp); every budget is still metered at run time.

    ``registry`` may be a BindingRegistry (built and checked here), a BindingCatalog, an iterable of
    descriptors, or None. ``now_unix_ms`` fixes the instant used for grant expiry. Raises DotBoxDError
    carrying the root-cause diagnostics (in document order within the failing pass)."""
    if not isinstance(module, Module):
        raise reject("E-JSON-SCHEMA", f"validate() needs a Module, got {type(module).__name__}")
    policy = Policy.default() if policy is None else policy
    if not isinstance(policy, Policy):
        raise reject("E-POLICY-SCHEMA", f"validate() needs a Policy, got {type(policy).__name__}")
    try:
        catalog = to_catalog(registry)
        ctx = Context(module, policy, catalog, now_ms() if now_unix_ms is None else now_unix_ms)
        for _name, run in PASSES:
            run(ctx)
            if ctx.diagnostics:
                raise DotBoxDError(ctx.diagnostics)
        plan = planning.run(ctx)
    except DotBoxDError:
        raise
    except RecursionError:
        raise reject(
            "E-STRUCT-DEPTH",
            "the module nests too deeply to validate",
            hint="flatten nested expressions with locals",
        ) from None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        # Only a hand-built tree with wrongly typed fields gets here (the importers build
        # well-typed trees); fail closed with a diagnostic rather than a traceback.
        raise reject(
            "E-JSON-SCHEMA",
            f"the module is not a well-formed AST ({type(exc).__name__})",
            hint="build modules with dotboxd.grammar.wire.import_module or the text parser",
        ) from None
    if policy.require_static_bound and prove:
        # Strict mode: install only what the prover PROVES within every budget. Imported lazily so
        # that Z3 loads only for policies that ask for proofs.
        from dotboxd.validator.prover.hook import require_static_bound

        require_static_bound(plan)
    return plan


__all__ = ["EMPTY_CATALOG", "ExecutionPlan", "validate"]
