"""The registry that checks bindings and the immutable catalogue it builds.

A :class:`BindingRegistry` collects descriptors; :meth:`BindingRegistry.build` runs the registry
checks on each, refuses duplicate ids (and ids that are built-in call names) and returns a
:class:`BindingCatalog`: ``id -> descriptor`` plus the manifest hash, fixed at construction."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from dotboxd.core.binding_checks import binding_problem, check_binding
from dotboxd.core.binding_hash import binding_manifest_hash
from dotboxd.core.binding_manifest import manifest_to_json
from dotboxd.core.binding_model import (
    BindingDescriptor,
)
from dotboxd.core.builtins import BUILTINS
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError

# ---------------------------------------------------------------------------------------------
# Registry and catalogue


class BindingCatalog(Mapping[str, BindingDescriptor]):
    """The immutable, checked set of bindings a host exposes: ``id -> descriptor`` plus the manifest hash."""

    __slots__ = ("_by_id", "_hash")

    def __init__(self, bindings: Iterable[BindingDescriptor] = ()) -> None:
        self._by_id: dict[str, BindingDescriptor] = {b.id: b for b in bindings}
        self._hash = binding_manifest_hash(self._by_id.values())

    def __getitem__(self, binding_id: str) -> BindingDescriptor:
        return self._by_id[binding_id]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._by_id))

    def __len__(self) -> int:
        return len(self._by_id)

    @property
    def manifest_hash(self) -> str:
        return self._hash

    def to_manifest(self) -> dict[str, Any]:
        """The JSON binding manifest (DotBoxD's manifest form) of every binding, sorted by id."""
        return manifest_to_json(self._by_id[k] for k in sorted(self._by_id))

    def with_invokers(self, invokers: Mapping[str, Callable[..., Any]]) -> BindingCatalog:
        """A copy whose descriptors call ``invokers[id]`` (the conformance runner's fixtures); the
        manifest hash is unchanged because the callable is not part of it. An invoker with a true
        ``takes_context`` attribute is called with the binding context first (a fixture that keeps
        per-run state, such as a ``sequence``, reads it there)."""
        return BindingCatalog(
            replace(
                b,
                invoke=invokers[b.id],
                takes_context=bool(getattr(invokers[b.id], "takes_context", b.takes_context)),
            )
            if b.id in invokers
            else b
            for b in self._by_id.values()
        )


class BindingRegistry:
    """A mutable collection of descriptors; :meth:`build` checks them and freezes a catalogue."""

    def __init__(self, bindings: Iterable[BindingDescriptor] = ()) -> None:
        self._bindings: list[BindingDescriptor] = list(bindings)

    def add(self, binding: BindingDescriptor) -> BindingRegistry:
        self._bindings.append(binding)
        return self

    def extend(self, bindings: Iterable[BindingDescriptor]) -> BindingRegistry:
        self._bindings.extend(bindings)
        return self

    def __len__(self) -> int:
        return len(self._bindings)

    def build(self, *, require_invoke: bool = False) -> BindingCatalog:
        """Run the registry checks on every descriptor (each reports its first failure) and detect
        duplicate ids (also against built-in call names); raise DotBoxDError with all failures."""
        diagnostics: list[Diagnostic] = []
        seen: dict[str, BindingDescriptor] = {}
        for b in self._bindings:
            problem = check_binding(b, require_invoke=require_invoke)
            if problem is not None:
                diagnostics.append(problem)
                continue
            if b.id in BUILTINS:
                diagnostics.append(
                    binding_problem(
                        "E-BINDING-DUP", b, "the id is a built-in call name", hint="choose another id"
                    )
                )
            elif b.id in seen:
                diagnostics.append(
                    binding_problem(
                        "E-BINDING-DUP",
                        b,
                        f"the id is registered twice (versions {seen[b.id].version} and {b.version})",
                        first=seen[b.id].origin,
                    )
                )
            else:
                seen[b.id] = b
        if diagnostics:
            raise DotBoxDError(diagnostics)
        return BindingCatalog(seen.values())


#: A catalogue with no host bindings (pure kernels).
EMPTY_CATALOG = BindingCatalog()


__all__ = [
    "EMPTY_CATALOG",
    "BindingCatalog",
    "BindingRegistry",
]
