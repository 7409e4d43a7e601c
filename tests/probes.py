"""Probe bindings: the small read-only host bindings many runtime and validator tests declare.

Why one helper: a probe that reads host state at one fuel a call, guarded by a capability named
like the binding, is the usual test double for "some host call"; spelling its decorator once keeps
the probes alike, so a test's own arguments (its cost, its capability) stand out where they differ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dotboxd.core.binding_decorator import host_binding
from dotboxd.core.bindings import BindingDescriptor, Cost
from dotboxd.core.effects import Effect

READ = Effect.CPU | Effect.HOST_STATE_READ
AUDIT = Effect.CPU | Effect.AUDIT


def read_probe(
    id: str, *, capability: str | None = None, cost: Cost | None = None, **options: Any
) -> Callable[[Callable[..., Any]], BindingDescriptor]:
    """``host_binding`` for a read-only probe: ``capability`` defaults to ``id``, ``cost`` to one fuel
    a call; ``options`` go to ``host_binding`` as they are."""
    return _probe(id, READ, capability, cost, options)


def audit_probe(
    id: str, *, capability: str | None = None, cost: Cost | None = None, **options: Any
) -> Callable[[Callable[..., Any]], BindingDescriptor]:
    """``host_binding`` for a probe that writes through its context (audit records, log events): it
    takes the context as first parameter; defaults as for ``read_probe``."""
    return _probe(id, AUDIT, capability, cost, {"context": True, **options})


def _probe(
    id: str, effects: Effect, capability: str | None, cost: Cost | None, options: dict[str, Any]
) -> Callable[[Callable[..., Any]], BindingDescriptor]:
    return host_binding(
        id=id, capability=capability or id, effects=effects, cost=cost or Cost(base_fuel=1), **options
    )
