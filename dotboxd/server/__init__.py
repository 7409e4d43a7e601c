"""The networked DotBoxD server: service RPC and pushdown extensions over HTTP, per-tenant policies.

    state = ServerState(load_config("server.toml"), bindings=[...], methods={"game.spawn": spawn})
    app = build_app(state)                     # an ASGI app (Starlette)
    with ServerThread(app, state.config.limits) as server: ...     # or: dotboxd serve --config ...

Clients are untrusted: each authenticates with a bearer token that maps to a tenant, every kernel a
tenant installs is imported and validated against that tenant's policy and runs metered on the
host's bindings only; RPC methods are trusted host code, schema-checked at the boundary and not
reachable from kernels. See ``threat-model/server.md``.
"""

from dotboxd.server.app import ServerApp, build_app
from dotboxd.server.config import (
    ServerConfig,
    ServerLimits,
    TenantConfig,
    load_config,
    parse_config,
    token_hash,
)
from dotboxd.server.hostmodule import HostParts
from dotboxd.server.runner import ServerThread, serve_forever
from dotboxd.server.state import ServerState

__all__ = [
    "HostParts",
    "ServerApp",
    "ServerConfig",
    "ServerLimits",
    "ServerState",
    "ServerThread",
    "TenantConfig",
    "build_app",
    "load_config",
    "parse_config",
    "serve_forever",
    "token_hash",
]
