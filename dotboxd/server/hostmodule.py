"""The host program behind a server: a trusted Python file named by ``[server] host_module``.

A server needs the host's own objects - its ``SandboxHost`` with the bindings kernels may call, the
trusted methods it serves over RPC, and (for event kernels) its ``EventHub`` - and these are code,
not configuration. The config names one file; the server imports it and calls its
``build_host()``, which returns a :class:`HostParts`. NOT A SECURITY BOUNDARY: like a trusted plugin
(``dotboxd.plugins``), the file runs with the server's full authority; the SHA-256 of the file is
written to the audit log so an operator can tell which code ran.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotboxd.core.diagnostics import reject
from dotboxd.events.hub import EventHub
from dotboxd.host.sandbox_host import SandboxHost


@dataclass
class HostParts:
    """What a host program hands the server: the host, its RPC methods and optionally its event hub
    (whose ``host`` must be this ``host``)."""

    host: SandboxHost
    methods: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    hub: EventHub | None = None


def load_host_module(path: str) -> tuple[HostParts, str]:
    """Import ``path`` and call its ``build_host()``; returns the parts and the file's SHA-256.
    E-SERVER-CONFIG when the file is missing, raises, or does not return HostParts."""
    target = Path(path).resolve()
    pointer = "/server/host_module"
    if not target.is_file():
        raise reject("E-SERVER-CONFIG", f"no host module at {target}", pointer)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    name = f"dotboxd_host_{digest[:12]}_{target.stem}"
    spec = importlib.util.spec_from_file_location(name, target)
    if spec is None or spec.loader is None:
        raise reject("E-SERVER-CONFIG", f"cannot import {target}", pointer)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        build = getattr(module, "build_host", None)
        if not callable(build):
            raise reject("E-SERVER-CONFIG", f"{target.name} has no build_host()", pointer)
        parts = build()
    except Exception as error:
        sys.modules.pop(name, None)
        if hasattr(error, "diagnostics"):
            raise
        raise reject(
            "E-SERVER-CONFIG", f"the host module raised {type(error).__name__}: {error}", pointer
        ) from None
    if not isinstance(parts, HostParts):
        raise reject("E-SERVER-CONFIG", "build_host() must return dotboxd.server.HostParts", pointer)
    if parts.hub is not None and parts.hub.host is not parts.host:
        raise reject("E-SERVER-CONFIG", "the event hub must run on the host module's own host", pointer)
    return parts, digest
