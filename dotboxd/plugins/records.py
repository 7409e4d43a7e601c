"""What a plugin contributes and what the host records about it. NOT A SECURITY BOUNDARY.

The :class:`PluginRegistry` handed to a plugin's ``setup(registry)`` only collects contributions; it
cannot stop a plugin from doing anything else, because a plugin runs with the full authority of the
process (see ``dotboxd.plugins``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.core.diagnostics import reject
from dotboxd.core.read_only import ReadOnlyDict


class PluginRegistry:
    """Collects one plugin's contributions during its ``setup``: host bindings (checked later by the
    binding registry like any other), service RPC methods and event contracts (plain name -> object
    tables the server consumes). It records; it does not contain the plugin."""

    def __init__(self, plugin: str) -> None:
        self.plugin = plugin
        self.bindings: list[BindingDescriptor] = []
        self.methods: dict[str, Callable[..., Any]] = {}
        self.events: dict[str, Mapping[str, Any]] = {}

    def add_binding(self, binding: BindingDescriptor) -> None:
        """Contribute a host binding; the host's binding registry checks it when the catalogue is rebuilt."""
        if not isinstance(binding, BindingDescriptor):
            raise reject(
                "E-PLUGIN-LOAD",
                f"plugin {self.plugin!r} added a binding that is not a BindingDescriptor",
                hint="declare bindings with dotboxd.host.host_binding",
            )
        self.bindings.append(binding)

    def add_method(self, name: str, handler: Callable[..., Any]) -> None:
        """Contribute a service RPC method ``name`` (a callable run in this process, with its authority)."""
        if not name or name in self.methods or not callable(handler):
            raise reject(
                "E-PLUGIN-CONFLICT",
                f"plugin {self.plugin!r}: method {name!r} is empty, repeated or not callable",
            )
        self.methods[name] = handler

    def add_event_contract(self, name: str, contract: Mapping[str, Any]) -> None:
        """Contribute an event contract (a name and its JSON-shaped description)."""
        if not name or name in self.events:
            raise reject("E-PLUGIN-CONFLICT", f"plugin {self.plugin!r}: event {name!r} is empty or repeated")
        self.events[name] = ReadOnlyDict(contract)


@dataclass(frozen=True)
class PluginAuditRecord:
    """One load or unload, for the audit trail: which plugin, which version, from where, and the
    SHA-256 of each file that was loaded (so an operator can tell later exactly what code ran)."""

    action: str  # "load" | "unload"
    name: str
    version: str
    source: str
    file_hashes: Mapping[str, str]
    bindings: tuple[str, ...]
    methods: tuple[str, ...]
    events: tuple[str, ...]


@dataclass
class LoadedPlugin:
    """A plugin that is loaded now: its object, its contributions and its load record."""

    name: str
    version: str
    instance: Any
    registry: PluginRegistry
    record: PluginAuditRecord
    module_names: tuple[str, ...] = field(default=())
