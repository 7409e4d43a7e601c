"""Purity of one entrypoint: the check an event hub applies to a ``shouldHandle`` filter.

A filter runs for every published event, before anything decides the event matters, so it must not
change or observe the world: its transitive effects (over live code, as the effect pass computed
them) must stay within Cpu and Alloc. The verdict is derived from the validated plan, never from
what the author declares, so a filter that reaches a state-writing binding through a private helper
is refused exactly like one that calls it directly. Living in the validator keeps one definition of
"pure" (``FunctionInfo.is_pure``) for every consumer.
"""

from __future__ import annotations

from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.effects import PURE, effect_names

from .plan import ExecutionPlan


def reached_bindings(plan: ExecutionPlan, function_id: str) -> frozenset[str] | None:
    """Every binding a call of ``function_id`` can reach: those its live code calls, directly or
    through any chain of module functions it can call (the validator's call graph over live code,
    the same facts the capability and effect passes use). None when that cannot be told - the
    function, or one it calls, is not in the plan - so a caller treats the answer as "maybe any"."""
    seen: set[str] = set()
    pending = [function_id]
    found: set[str] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        info = plan.functions.get(current)
        if info is None:
            return None
        seen.add(current)
        pending.extend(info.callees)
        found.update(info.bindings_called)
    return frozenset(found)


def impure_bindings(plan: ExecutionPlan, function_id: str) -> tuple[str, ...]:
    """The bindings with effects beyond Cpu|Alloc reachable from ``function_id`` (sorted): the
    evidence a reviewer needs to see why a function is not pure."""
    found = set()
    for binding_id in reached_bindings(plan, function_id) or ():
        binding = plan.bindings.get(binding_id)
        if binding is not None and binding.effects & ~PURE:
            found.add(binding_id)
    return tuple(sorted(found))


def require_pure(plan: ExecutionPlan, function_id: str, *, code: str, pointer: str = "") -> None:
    """Raise ``code`` (a DotBoxDError) unless ``function_id``'s transitive effects are within
    Cpu|Alloc. The evidence names the extra effects and the impure bindings it reaches."""
    info = plan.functions[function_id]
    if info.is_pure:
        return
    extra = info.effects & ~PURE
    error: DotBoxDError = reject(
        code,
        f"'{function_id}' must be pure (Cpu and Alloc only) but reaches {', '.join(effect_names(extra))}",
        pointer,
        info.function.span,
        hint="move every binding call into handle; a filter may only read its parameters and compute",
        function=function_id,
        effects=list(effect_names(extra)),
        bindings=list(impure_bindings(plan, function_id)),
    )
    raise error
