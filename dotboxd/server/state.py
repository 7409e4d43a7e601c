"""What a running server holds: one ``SandboxHost``, its RPC table, and each tenant's runtime state.

All tenants share the host's binding catalogue (the host's own bindings plus those of the trusted
plugins in ``server.plugins``), but each installs its kernels against its *own* policy, has its own
quota of installed kernels and its own run-rate bucket. A tenant's extensions are keyed by an id
the server draws at random, and looked up only inside that tenant's table: one tenant can neither
see, invoke nor uninstall another's kernels.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.core.diagnostics import reject
from dotboxd.core.visible import clipped
from dotboxd.events.hub import EventHub
from dotboxd.host.sandbox_host import SandboxHost
from dotboxd.plugins.loader import PluginManager
from dotboxd.server.audit import AuditLog
from dotboxd.server.config import ServerConfig, TenantConfig, token_hash
from dotboxd.server.hostmodule import load_host_module
from dotboxd.server.ratelimit import TokenBucket
from dotboxd.server.rpc import RpcTable
from dotboxd.validator.plan import ExecutionPlan


@dataclass
class Extension:
    """An installed pushdown kernel: its plan, validated against the tenant's policy."""

    id: str
    plan: ExecutionPlan

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "moduleHash": self.plan.module_hash,
            "planHash": self.plan.plan_hash,
            "policyHash": self.plan.policy_hash,
            "entrypoints": sorted(self.plan.entrypoints),
        }


@dataclass
class Tenant:
    config: TenantConfig
    bucket: TokenBucket
    extensions: dict[str, Extension] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return self.config.name

    def _full(self) -> None:
        quota = self.config.max_installed_kernels
        if len(self.extensions) >= quota:
            raise reject(
                "E-SERVER-QUOTA",
                f"tenant {self.name} already has {quota} installed kernels (its quota)",
                hint="uninstall one (DELETE /v1/extensions/{id}) first",
                quota=quota,
            )

    def check_room(self) -> None:
        """E-SERVER-QUOTA when the tenant's installed-kernel quota is full."""
        with self.lock:
            self._full()

    def add_extension(self, plan: ExecutionPlan) -> Extension:
        """Keep ``plan`` under a fresh id, unless the quota is full (E-SERVER-QUOTA)."""
        with self.lock:
            self._full()
            extension = Extension(secrets.token_hex(8), plan)
            self.extensions[extension.id] = extension
            return extension

    def extension(self, extension_id: str) -> Extension:
        with self.lock:
            found = self.extensions.get(extension_id)
        if found is None:
            raise reject("E-SERVER-NOT-FOUND", f"no installed extension {clipped(extension_id)!r}", "/id")
        return found

    def remove_extension(self, extension_id: str) -> Extension:
        with self.lock:
            found = self.extensions.pop(extension_id, None)
        if found is None:
            raise reject("E-SERVER-NOT-FOUND", f"no installed extension {clipped(extension_id)!r}", "/id")
        return found

    def take_run(self) -> None:
        """Spend one token of the rate bucket, for a kernel invocation, an RPC call or an install
        (E-SERVER-QUOTA, HTTP 429, when it is empty)."""
        if not self.bucket.take():
            raise reject(
                "E-SERVER-QUOTA",
                f"tenant {self.name} is over its run rate ({self.config.runs_per_second:g} runs/s)",
                hint="slow down and retry",
                runsPerSecond=self.config.runs_per_second,
            )


class ServerState:
    """The host, the RPC table and the tenants of one server; built once at start-up.

    ``methods`` and ``bindings`` are what the embedding program registers in code; the plugins named
    in the config are loaded into the host (their bindings join the catalogue, their methods join the
    RPC table). A plugin or method that does not load stops start-up with its diagnostic."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        bindings: Iterable[BindingDescriptor] = (),
        methods: Mapping[str, Callable[..., Any]] | None = None,
        host: SandboxHost | None = None,
        hub: EventHub | None = None,
    ) -> None:
        self.config = config
        self.audit = AuditLog()
        self.hub: EventHub | None = hub
        own = dict(methods or {})
        if config.host_module is not None:
            parts, digest = load_host_module(config.host_module)
            host, self.hub = parts.host, parts.hub
            own.update(parts.methods)
            self.audit.record("host-module", "", config.host_module, sha256=digest)
        self.host = host if host is not None else SandboxHost(list(bindings))
        if self.hub is not None and self.hub.host is not self.host:
            raise reject("E-SERVER-CONFIG", "the event hub must run on the server's host")
        self.plugins = PluginManager(self.host)
        for source in config.plugins:
            if source.startswith("entry-point:"):
                self.plugins.load_entry_point(source.removeprefix("entry-point:"))
            else:
                self.plugins.load_path(source)
        self.rpc = RpcTable([*own.items(), *self.plugins.methods.items()])
        self.tenants = {t.name: Tenant(t, TokenBucket(t.runs_per_second)) for t in config.tenants}

    def tenant_for_token(self, token: str) -> Tenant | None:
        """The tenant whose token hash matches (every tenant is compared, in constant time each)."""
        digest = token_hash(token)
        found: Tenant | None = None
        for tenant in self.tenants.values():
            if hmac.compare_digest(digest, tenant.config.token_sha256):
                found = tenant
        return found
