"""The canonical record of a binding and the manifest hash over a set of them.

A binding's record holds every field whose change needs a new version (not ``invoke``, which no
hash can identify across hosts: ``same_implementation`` compares that). Records use the one
encoder in ``dotboxd.core.records``."""

from __future__ import annotations

from collections.abc import Iterable

from dotboxd.core.binding_model import (
    AuditKind,
    AuditLevel,
    BindingDescriptor,
    Cost,
    GrantParameters,
    GrantValidator,
    Safety,
)
from dotboxd.core.records import canonical_record, hash_records

BINDINGS_HASH_ID = "dotboxd-py-bindings-1"


def _validator_text(v: GrantValidator | None) -> str | None:
    if v is None:
        return None
    if isinstance(v, GrantParameters):
        return v.describe()
    return f"custom:{getattr(v, '__module__', '?')}.{getattr(v, '__qualname__', type(v).__name__)}"


def binding_record(b: BindingDescriptor) -> str:
    """The canonical record of one binding: every field whose change needs a new version."""
    cost = b.cost or Cost(-1)
    return canonical_record(
        "binding",
        b.id,
        b.version,
        canonical_record(*(str(p) for p in b.parameters)),
        str(b.return_type),
        int(b.effects),
        b.capability,
        cost.base_fuel,
        cost.per_byte_fuel,
        cost.allocation_from_return_bytes,
        cost.max_calls_per_run,
        b.audit.value if isinstance(b.audit, AuditLevel) else str(b.audit),
        b.safety.value if isinstance(b.safety, Safety) else str(b.safety),
        b.is_async,
        b.audit_kind.value if isinstance(b.audit_kind, AuditKind) else str(b.audit_kind),
        b.compiled_stub,
        _validator_text(b.grant_validator),
    )


def same_implementation(a: BindingDescriptor, b: BindingDescriptor) -> bool:
    """True when ``a`` and ``b`` run the same host code: the same ``invoke`` callable (equal bound
    methods of one object count as the same), called the same way, with the same grant validator.
    ``binding_record`` compares contracts; this compares what a call would actually execute, which
    no hash can (a callable has no stable identity across hosts)."""
    return a is b or (
        a.invoke == b.invoke and a.takes_context == b.takes_context and a.grant_validator == b.grant_validator
    )


def binding_manifest_hash(bindings: Iterable[BindingDescriptor]) -> str:
    """SHA-256 over the sorted binding records, headed by ``dotboxd-py-bindings-1``. Our own
    identity string: the field list is not bit-identical to DotBoxD's ``bindings-v2``."""
    records = sorted(binding_record(b) for b in bindings)
    return hash_records([canonical_record(BINDINGS_HASH_ID), *records])


__all__ = [
    "BINDINGS_HASH_ID",
    "binding_manifest_hash",
    "binding_record",
    "same_implementation",
]
