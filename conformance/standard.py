"""Standard bindings in a case: ``{"id": "log.info", "standard": true}``.

A case registers only the bindings it declares, and a declared entry is read as a binding-manifest
entry, which always carries a grant validator (``GrantParameters()`` when none is written) - so it
never has exactly the standard contract of ``standard_bindings()`` (which declares none: the policy
checks the parameters of built-in capabilities itself), and the host never attaches a standard
facade to it. The marker asks, explicitly, for the standard descriptor of a standard binding id,
registered without an invoker; ``SandboxHost`` then attaches the runtime's facade to it exactly as
it does for a host that registers ``standard_bindings()``.

Why a marker rather than matching a copied contract: the manifest loader, binding records and
manifest hashes stay untouched, so no manifest (and no existing case) changes meaning; the marker
carries no behaviour of its own, so it can only name the standard contract; and it competes with
other entries like any binding - a second entry with the same id is ``E-BINDING-DUP``, never a
silent replacement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dotboxd.core.bindings import BindingDescriptor, binding_from_json, standard_bindings

STANDARD_KEY = "standard"


def standard_ids() -> tuple[str, ...]:
    """The ids a case may mark ``standard`` (those of ``standard_bindings()``, in its order)."""
    return tuple(d.id for d in standard_bindings())


def is_standard_entry(entry: Any) -> bool:
    """True for a case ``bindings`` entry that asks for the standard contract."""
    return isinstance(entry, Mapping) and entry.get(STANDARD_KEY) is True


def case_descriptors(entries: Sequence[Any]) -> tuple[BindingDescriptor, ...]:
    """The descriptors of a case's ``bindings``, in order: a marked entry is the standard descriptor
    (no invoker); any other entry is read as a binding-manifest entry (so its registry problems are
    ``E-BINDING-*`` rejections, with the same pointers as ``load_binding_manifest``)."""
    standard = {d.id: d for d in standard_bindings()}
    out: list[BindingDescriptor] = []
    for index, entry in enumerate(entries):
        if is_standard_entry(entry):
            out.append(replace(standard[str(entry["id"])], origin=f"/{index}"))
        else:
            out.append(binding_from_json(entry, f"/{index}"))
    return tuple(out)


__all__ = ["STANDARD_KEY", "case_descriptors", "is_standard_entry", "standard_ids"]
