"""Pass 2, bindings: the host's binding catalogue is built and checked before any module pass runs.

Invariants established:

* the catalogue passed the twelve registry checks of spec/validation.md section 8 and has no duplicate or built-in
  ids (E-BINDING-*; a ``BindingRegistry`` is built here, a built ``BindingCatalog`` was checked when
  it was built);
* nothing about the module: a module function whose id equals a binding id shadows the binding
  inside that module (DotBoxD resolves module functions first). The type pass records every call's
  resolved target in the plan, both backends dispatch on that target, and capabilities and effects
  are derived from the targets actually called, so a shadowed binding is neither required nor
  reachable.

The calls that reference bindings are resolved and typed by the type pass.
"""

from __future__ import annotations

from collections.abc import Iterable

from dotboxd.core.bindings import EMPTY_CATALOG, BindingCatalog, BindingDescriptor, BindingRegistry

BindingSource = BindingRegistry | BindingCatalog | Iterable[BindingDescriptor] | None


def to_catalog(source: BindingSource) -> BindingCatalog:
    """Build (and so check) whatever the caller passed as bindings; raise DotBoxDError(E-BINDING-*)."""
    if source is None:
        return EMPTY_CATALOG
    if isinstance(source, BindingCatalog):
        return source
    if isinstance(source, BindingRegistry):
        return source.build()
    return BindingRegistry(source).build()
