"""Pass 2, bindings: the host's binding catalogue is checked, then checked against the module.

Invariants established:

* the catalogue passed the twelve registry checks of spec/validation.md section 8 and has no duplicate or built-in
  ids (E-BINDING-*; a ``BindingRegistry`` is built here, a built ``BindingCatalog`` was checked when
  it was built);
* no module function id equals a binding id (E-STRUCT-SHADOW): DotBoxD resolves module functions
  before bindings, so such a function would silently stand in for the host binding a reviewer sees
  in the call. Rejecting the collision keeps every call name unambiguous.

The calls that reference bindings are resolved and typed by the type pass.
"""

from __future__ import annotations

from collections.abc import Iterable

from dotboxd.core.bindings import EMPTY_CATALOG, BindingCatalog, BindingDescriptor, BindingRegistry

from .context import Context

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


def run(ctx: Context) -> None:
    for fid, fn in ctx.functions.items():
        if fid in ctx.catalog:
            ctx.report(
                "E-STRUCT-SHADOW",
                f"function '{fid}' has the id of the host binding '{fid}'",
                f"{fn.pointer}/id" if fn.pointer else "",
                fn.span,
                "a module function would stand in for the binding; rename the function",
                function=fid,
                binding=fid,
            )
