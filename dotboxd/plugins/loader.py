"""Load and unload trusted plugins explicitly. NOT A SECURITY BOUNDARY.

Loading a plugin imports and runs its code in this process with the process's full authority: it may
read any file, open sockets, read secrets from the environment. ``PluginManager`` only makes that
explicit and accountable (a name, a version, file hashes in the audit trail) and keeps the host's
binding catalogue, RPC methods and event contracts in step with what is loaded. ``unload`` removes a
plugin's contributions and calls its ``teardown``; it cannot take back anything the plugin already did
(threads it started, files it wrote, objects it patched), so it is never isolation.

A plugin is a module (a ``.py`` file, a package directory, or the target of an entry point in the
``dotboxd.plugins`` group) or an object exposing ``name: str``, ``version: str``,
``setup(registry)`` and ``teardown()``. A module may instead expose that object as ``PLUGIN``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from dotboxd.core.bindings import BindingRegistry
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.read_only import ReadOnlyDict
from dotboxd.host.sandbox_host import SandboxHost
from dotboxd.plugins.records import LoadedPlugin, PluginAuditRecord, PluginRegistry
from dotboxd.runtime.facades import attach_standard_facades

ENTRY_POINT_GROUP = "dotboxd.plugins"


def _file_hashes(paths: Iterable[Path]) -> dict[str, str]:
    """``path -> sha256`` of each file, sorted by path (what an auditor compares with a release)."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(set(paths))}


def _module_files(module: ModuleType) -> list[Path]:
    """The source files a loaded module came from: the file, or every ``.py`` of its package."""
    origin = getattr(module, "__file__", None)
    if not origin:
        return []
    path = Path(origin).resolve()
    if path.name == "__init__.py":
        return sorted(path.parent.rglob("*.py"))
    return [path]


def _contract(candidate: Any, where: str) -> Any:
    """The plugin object of ``candidate`` (its ``PLUGIN`` attribute when it has one), checked for
    the contract; E-PLUGIN-LOAD names what is missing."""
    plugin = getattr(candidate, "PLUGIN", candidate)
    missing = [
        attr
        for attr, ok in (
            ("name", isinstance(getattr(plugin, "name", None), str) and bool(getattr(plugin, "name", ""))),
            ("version", isinstance(getattr(plugin, "version", None), str)),
            ("setup", callable(getattr(plugin, "setup", None))),
            ("teardown", callable(getattr(plugin, "teardown", None))),
        )
        if not ok
    ]
    if missing:
        raise reject(
            "E-PLUGIN-LOAD",
            f"{where} is not a plugin: it lacks {', '.join(missing)}",
            hint="a plugin exposes name: str, version: str, setup(registry) and teardown()",
        )
    return plugin


class PluginManager:
    """The host's loaded trusted plugins. NOT A SECURITY BOUNDARY: every plugin runs with the full
    authority of this process. Keeps ``host.catalog`` equal to the host's own bindings plus every
    loaded plugin's, and ``methods``/``events`` equal to the union of the plugins' contributions."""

    def __init__(
        self, host: SandboxHost, *, audit: Callable[[PluginAuditRecord], None] | None = None
    ) -> None:
        self._host = host
        self._base = [host.catalog[binding_id] for binding_id in host.catalog]
        self._loaded: dict[str, LoadedPlugin] = {}
        self._audit_sink = audit
        self.audit_trail: list[PluginAuditRecord] = []

    # --- what is loaded ------------------------------------------------------------------------

    @property
    def plugins(self) -> Mapping[str, LoadedPlugin]:
        return MappingProxyType(self._loaded)

    @property
    def methods(self) -> Mapping[str, Callable[..., Any]]:
        """Every RPC method of every loaded plugin (the service layer dispatches from this)."""
        return MappingProxyType({n: h for p in self._loaded.values() for n, h in p.registry.methods.items()})

    @property
    def events(self) -> Mapping[str, Mapping[str, Any]]:
        """Every event contract of every loaded plugin."""
        return MappingProxyType({n: c for p in self._loaded.values() for n, c in p.registry.events.items()})

    # --- load ----------------------------------------------------------------------------------

    def load_path(self, path: str | os.PathLike[str]) -> LoadedPlugin:
        """Import the plugin at ``path`` (a ``.py`` file or a package directory) and set it up. The
        code runs now, in this process, with its full authority."""
        target = Path(path).resolve()
        init = target / "__init__.py" if target.is_dir() else target
        if not init.is_file():
            raise reject("E-PLUGIN-LOAD", f"no plugin file at {target}", hint="give a .py file or a package")
        tag = hashlib.sha256(str(target).encode()).hexdigest()[:12]
        module_name = f"dotboxd_plugin_{tag}_{target.stem}"
        locations = [str(target)] if target.is_dir() else None
        spec = importlib.util.spec_from_file_location(module_name, init, submodule_search_locations=locations)
        if spec is None or spec.loader is None:
            raise reject("E-PLUGIN-LOAD", f"cannot import {target}")
        module = importlib.util.module_from_spec(spec)
        before = set(sys.modules)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            for name in set(sys.modules) - before:
                sys.modules.pop(name, None)
            raise reject(
                "E-PLUGIN-LOAD", f"importing {target.name} raised {type(error).__name__}: {error}"
            ) from error
        names = tuple(sorted(set(sys.modules) - before))
        return self._install(_contract(module, str(target)), str(target), _module_files(module), names)

    def load_entry_point(self, name: str) -> LoadedPlugin:
        """Load the installed plugin whose entry point in the ``dotboxd.plugins`` group is ``name``.
        Only the named entry point is loaded: installing a package never loads its plugin."""
        found = [ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
        if not found:
            raise reject("E-PLUGIN-LOAD", f"no entry point {name!r} in group {ENTRY_POINT_GROUP}")
        try:
            candidate = found[0].load()
        except Exception as error:
            raise reject(
                "E-PLUGIN-LOAD", f"loading entry point {name!r} raised {type(error).__name__}"
            ) from error
        module = sys.modules.get(found[0].module)
        files = _module_files(module) if module is not None else []
        return self._install(_contract(candidate, f"entry point {name!r}"), f"entry-point:{name}", files, ())

    def _install(
        self, plugin: Any, source: str, files: list[Path], module_names: tuple[str, ...]
    ) -> LoadedPlugin:
        name, version = str(plugin.name), str(plugin.version)
        if name in self._loaded:
            raise reject("E-PLUGIN-CONFLICT", f"a plugin named {name!r} is already loaded")
        registry = PluginRegistry(name)
        plugin.setup(registry)
        try:
            self._check_names(registry)
            record = PluginAuditRecord(
                "load",
                name,
                version,
                source,
                ReadOnlyDict(_file_hashes(files)),
                tuple(b.id for b in registry.bindings),
                tuple(registry.methods),
                tuple(registry.events),
            )
            loaded = LoadedPlugin(name, version, plugin, registry, record, module_names)
            self._loaded[name] = loaded
            try:
                self._rebuild()
            except DotBoxDError:
                del self._loaded[name]
                raise
        except DotBoxDError:
            plugin.teardown()  # nothing half-applied: the host is as it was before the load
            for module_name in module_names:
                sys.modules.pop(module_name, None)
            raise
        self._emit(record)
        return loaded

    def _check_names(self, registry: PluginRegistry) -> None:
        taken_methods, taken_events = set(self.methods), set(self.events)
        clash = sorted(set(registry.methods) & taken_methods) + sorted(set(registry.events) & taken_events)
        if clash:
            raise reject("E-PLUGIN-CONFLICT", f"plugin {registry.plugin!r} reuses {', '.join(clash)}")

    # --- unload --------------------------------------------------------------------------------

    def unload(self, name: str) -> PluginAuditRecord:
        """Remove ``name``'s bindings, methods and event contracts from the host, then call its
        ``teardown``. Plans prepared while it was loaded no longer run (their binding descriptors
        are not this host's any more: E-PLAN-BINDINGS). This is bookkeeping, not isolation."""
        loaded = self._loaded.pop(name, None)
        if loaded is None:
            raise reject("E-PLUGIN-UNKNOWN", f"no plugin named {name!r} is loaded")
        self._rebuild()
        try:
            loaded.instance.teardown()
        finally:
            for module_name in loaded.module_names:
                sys.modules.pop(module_name, None)
            record = PluginAuditRecord(
                "unload",
                loaded.name,
                loaded.version,
                loaded.record.source,
                loaded.record.file_hashes,
                loaded.record.bindings,
                loaded.record.methods,
                loaded.record.events,
            )
            self._emit(record)
        return record

    # --- internals -----------------------------------------------------------------------------

    def _rebuild(self) -> None:
        """Rebuild the host's catalogue through the binding registry checks (E-BINDING-* for a bad
        plugin binding, E-BINDING-DUP when a plugin reuses an id)."""
        registry = BindingRegistry(self._base)
        for loaded in self._loaded.values():
            registry.extend(loaded.registry.bindings)
        self._host.catalog = attach_standard_facades(registry.build())

    def _emit(self, record: PluginAuditRecord) -> None:
        self.audit_trail.append(record)
        if self._audit_sink is not None:
            self._audit_sink(record)
