"""``server.toml``: where the server listens, who may talk to it, and under which policy and limits.

The file is read with the standard library's ``tomllib`` and checked strictly: an unknown key, a
value of the wrong kind or range, a tenant without a token, a policy that does not load - each is one
``E-SERVER-CONFIG`` diagnostic with the JSON pointer of the key (``/tenants/alice/token_env``) and,
for a TOML syntax error, its line:column. The CLI turns that into exit status 2.

Tokens are never stored: a tenant names either ``token_sha256`` (the hex SHA-256 of its bearer
token) or ``token_env`` (an environment variable holding the token, hashed as soon as it is read).
Only the hash is kept, so no token can reach a log line, an audit event or a diagnostic.

    [server]
    host = "127.0.0.1"
    port = 8765
    plugins = ["game_plugin.py"]        # relative to this file, or "entry-point:NAME"
    host_module = "game_host.py"        # trusted: build_host() -> HostParts (host, RPC methods, event hub)

    [limits]                            # server-wide defaults
    max_body_bytes = 1048576
    max_installed_kernels = 16          # per tenant (a tenant may lower or raise it)
    runs_per_second = 50.0              # per tenant, token bucket
    ws_queue_size = 256                 # messages buffered per WebSocket client
    ws_send_timeout_seconds = 10.0      # a client that takes no frame for this long is disconnected
    body_timeout_seconds = 10.0         # a request body must arrive within this
    header_timeout_seconds = 10.0       # request headers must arrive within this
    send_timeout_seconds = 10.0         # a client that takes no byte of an answer for this long is dropped
    max_connections = 256
    run_threads = 4                     # kernel runs and RPC calls execute on this many threads

    [tenants.alice]
    token_env = "DOTBOXD_ALICE_TOKEN"
    policy_file = "alice.policy.json"   # or an inline [tenants.alice.policy] table (policy JSON form)
    max_installed_kernels = 4
    runs_per_second = 10.0
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_document_bytes
from dotboxd.validator.policy import Policy

MAX_CONFIG_BYTES = 1024 * 1024
"""A server.toml larger than this is refused before parsing (no real configuration comes close)."""

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_TENANT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_TOML_WHERE = re.compile(r"\(at line (\d+), column (\d+)\)")


@dataclass(frozen=True)
class ServerLimits:
    """Server-wide limits; a tenant may override ``max_installed_kernels`` and ``runs_per_second``."""

    max_body_bytes: int = 1024 * 1024
    max_installed_kernels: int = 16
    runs_per_second: float = 50.0
    ws_queue_size: int = 256
    ws_send_timeout_seconds: float = 10.0
    body_timeout_seconds: float = 10.0
    header_timeout_seconds: float = 10.0
    send_timeout_seconds: float = 10.0
    max_connections: int = 256
    run_threads: int = 4


@dataclass(frozen=True)
class TenantConfig:
    """One tenant: the SHA-256 of its token (never the token), its policy and its quotas."""

    name: str
    token_sha256: str = field(repr=False)
    policy: Policy
    max_installed_kernels: int
    runs_per_second: float


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    limits: ServerLimits = field(default_factory=ServerLimits)
    tenants: tuple[TenantConfig, ...] = ()
    plugins: tuple[str, ...] = ()
    host_module: str | None = None

    def with_address(self, host: str | None, port: int | None) -> ServerConfig:
        """This config with ``--host``/``--port`` applied (None keeps the file's value)."""
        return ServerConfig(
            self.host if host is None else host,
            self.port if port is None else port,
            self.limits,
            self.tenants,
            self.plugins,
            self.host_module,
        )


def token_hash(token: str) -> str:
    """The hex SHA-256 of a bearer token: what the config stores and what auth compares."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _bad(pointer: str, message: str, hint: str = "", span: Span | None = None) -> DotBoxDError:
    return reject("E-SERVER-CONFIG", message, pointer, span, hint)


def _table(value: object, pointer: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _bad(pointer, f"{pointer or 'the file'} must be a table")
    return value


def _no_unknown(table: Mapping[str, Any], allowed: set[str], pointer: str) -> None:
    for key in table:
        if key not in allowed:
            raise _bad(
                f"{pointer}/{key}", f"unknown key {key!r}", hint=f"allowed here: {', '.join(sorted(allowed))}"
            )


def _int(table: Mapping[str, Any], key: str, pointer: str, default: int, low: int, high: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _bad(f"{pointer}/{key}", f"{key} must be an integer in [{low}, {high}]")
    return value


def _float(
    table: Mapping[str, Any], key: str, pointer: str, default: float, low: float, high: float
) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise _bad(f"{pointer}/{key}", f"{key} must be a number in [{low}, {high}]")
    return float(value)


def _str(table: Mapping[str, Any], key: str, pointer: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise _bad(f"{pointer}/{key}", f"{key} must be a non-empty string")
    return value


def _limits(table: Mapping[str, Any]) -> ServerLimits:
    _no_unknown(table, set(ServerLimits.__dataclass_fields__), "/limits")
    d = ServerLimits()
    p = "/limits"
    return ServerLimits(
        max_body_bytes=_int(
            table, "max_body_bytes", p, d.max_body_bytes, 64, HOST_DOCUMENT_BUDGETS.max_document_bytes
        ),
        max_installed_kernels=_int(table, "max_installed_kernels", p, d.max_installed_kernels, 0, 100_000),
        runs_per_second=_float(table, "runs_per_second", p, d.runs_per_second, 0.001, 1e6),
        ws_queue_size=_int(table, "ws_queue_size", p, d.ws_queue_size, 1, 1_000_000),
        ws_send_timeout_seconds=_float(
            table, "ws_send_timeout_seconds", p, d.ws_send_timeout_seconds, 0.01, 3600
        ),
        body_timeout_seconds=_float(table, "body_timeout_seconds", p, d.body_timeout_seconds, 0.01, 3600),
        header_timeout_seconds=_float(
            table, "header_timeout_seconds", p, d.header_timeout_seconds, 0.01, 3600
        ),
        send_timeout_seconds=_float(table, "send_timeout_seconds", p, d.send_timeout_seconds, 0.01, 3600),
        max_connections=_int(table, "max_connections", p, d.max_connections, 1, 1_000_000),
        run_threads=_int(table, "run_threads", p, d.run_threads, 1, 256),
    )


def _token(table: Mapping[str, Any], pointer: str, env: Mapping[str, str]) -> str:
    if ("token_sha256" in table) == ("token_env" in table):
        raise _bad(pointer, "a tenant needs exactly one of token_sha256 and token_env")
    if "token_sha256" in table:
        value = table["token_sha256"]
        if not isinstance(value, str) or not _HEX64.match(value):
            raise _bad(f"{pointer}/token_sha256", "token_sha256 must be 64 lowercase hex digits")
        return value
    name = _str(table, "token_env", pointer, "")
    token = env.get(name)
    if not token:
        # the variable's name is safe to show; its value (when set) never is
        raise _bad(f"{pointer}/token_env", f"environment variable {name} is not set or empty")
    return token_hash(token)


def _policy(table: Mapping[str, Any], pointer: str, base: Path) -> Policy:
    if "policy_file" in table and "policy" in table:
        raise _bad(pointer, "a tenant has policy_file or an inline policy, not both")
    where = f"{pointer}/policy"
    try:
        if "policy_file" in table:
            where = f"{pointer}/policy_file"
            path = base / _str(table, "policy_file", pointer, "")
            return Policy.from_json(read_document_bytes(path, HOST_DOCUMENT_BUDGETS))
        if "policy" in table:
            return Policy.from_json(dict(_table(table["policy"], where)))
    except OSError as error:
        raise _bad(where, f"cannot read the policy file: {error.strerror or type(error).__name__}") from None
    except DotBoxDError as error:
        inner = error.diagnostic
        raise _bad(
            where + inner.pointer, f"the tenant policy is refused: {inner.code}: {inner.message}", inner.hint
        ) from None
    return Policy.default()


def _tenants(
    value: object, limits: ServerLimits, base: Path, env: Mapping[str, str]
) -> tuple[TenantConfig, ...]:
    tenants = _table(value, "/tenants")
    found: list[TenantConfig] = []
    hashes: set[str] = set()
    for name, raw in tenants.items():
        pointer = f"/tenants/{name}"
        if not _TENANT_NAME.match(name):
            raise _bad(pointer, "a tenant name is 1-64 letters, digits, '_', '.' or '-'")
        table = _table(raw, pointer)
        _no_unknown(
            table,
            {
                "token_sha256",
                "token_env",
                "policy_file",
                "policy",
                "max_installed_kernels",
                "runs_per_second",
            },
            pointer,
        )
        digest = _token(table, pointer, env)
        if digest in hashes:
            raise _bad(pointer, "two tenants share one token", hint="give every tenant its own token")
        hashes.add(digest)
        found.append(
            TenantConfig(
                name,
                digest,
                _policy(table, pointer, base),
                _int(table, "max_installed_kernels", pointer, limits.max_installed_kernels, 0, 100_000),
                _float(table, "runs_per_second", pointer, limits.runs_per_second, 0.001, 1e6),
            )
        )
    return tuple(found)


def _plugins(value: object, base: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad("/server/plugins", "plugins must be a list of paths or 'entry-point:NAME' strings")
    return tuple(v if v.startswith("entry-point:") else str(base / v) for v in value)


def parse_config(text: str, base: Path, env: Mapping[str, str] | None = None) -> ServerConfig:
    """The config in ``text`` (relative paths resolve against ``base``); E-SERVER-CONFIG if bad."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = _TOML_WHERE.search(str(error))
        span = Span(int(match.group(1)), int(match.group(2))) if match else None
        raise _bad("", f"not valid TOML: {_TOML_WHERE.sub('', str(error)).strip()}", span=span) from None
    _no_unknown(document, {"server", "limits", "tenants"}, "")
    server = _table(document.get("server", {}), "/server")
    _no_unknown(server, {"host", "port", "plugins", "host_module"}, "/server")
    limits = _limits(_table(document.get("limits", {}), "/limits"))
    tenants = _tenants(document.get("tenants", {}), limits, base, os.environ if env is None else env)
    if not tenants:
        raise _bad("/tenants", "no tenant is configured", hint="add a [tenants.NAME] table with a token")
    return ServerConfig(
        _str(server, "host", "/server", "127.0.0.1"),
        _int(server, "port", "/server", 8765, 0, 65535),
        limits,
        tenants,
        _plugins(server.get("plugins", []), base),
        str(base / _str(server, "host_module", "/server", "")) if "host_module" in server else None,
    )


def load_config(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> ServerConfig:
    """Read and check ``path``. OSError propagates (the CLI reports it as an I/O error)."""
    source = Path(path)
    with open(source, "rb") as stream:
        data = stream.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise _bad("", f"the config file is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad("", "the config file is not UTF-8") from None
    return parse_config(text, source.resolve().parent, env)
