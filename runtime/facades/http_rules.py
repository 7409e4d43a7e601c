"""The ``net.http.get`` rules that need no network: the grant, the uri, and which addresses are safe.

Everything here is a pure function of trusted grant parameters and the kernel's uri, so it is
decided before any name is looked up or any socket is opened:

* the grant's parameters (validated by the policy layer already; a grant this module cannot read is
  a denial, never a crash);
* the uri is split once, here, by our own parser, and the request is later built from the parts it
  returns - so the client library never gets a chance to read the authority differently (no
  userinfo, an ASCII host name or an IPv4 literal, a decimal port, a printable-ASCII path);
* scheme, host and port must be allowed by the grant; an IP literal also needs ``allowIpLiterals``;
* an address is *special* when it is private, loopback, link-local, carrier-grade NAT, unique-local,
  reserved, not globally routable, or an IPv6 form that embeds an IPv4 address (mapped, 6to4,
  Teredo): those need ``allowPrivateNetwork``. The unspecified address and multicast are never
  allowed (``0.0.0.0`` reaches the local host on Linux; multicast is not a server).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from dotboxd.runtime.errors import BindingError

CAPABILITY = "net.http.get"
DEFAULT_PORTS: Mapping[str, int] = {"http": 80, "https": 443}
DEFAULT_TIMEOUT_MS = 2000
DEFAULT_MAX_REQUEST_BYTES = 1_048_576

_NAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")
_PORT = re.compile(r"[0-9]{1,5}")
_PATH = re.compile(r"[/?][\x21-\x7e]*")
_URI = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)([/?][^#]*)?(#.*)?", re.DOTALL)

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class HttpGrant:
    """The parsed, trusted parameters of a ``net.http.get`` grant."""

    hosts: frozenset[tuple[str, int | None]]
    schemes: frozenset[str]
    max_request_bytes: int
    max_response_bytes: int
    timeout_ms: int
    allow_ip_literals: bool
    allow_private_network: bool

    @classmethod
    def parse(cls, parameters: Mapping[str, str]) -> HttpGrant:
        """The grant, or PermissionDenied when it cannot be read (the validator checks grants; a
        grant that still reaches here unreadable is a denial)."""
        try:
            hosts = frozenset(_host_entry(h) for h in parameters["allowedHosts"].split(","))
            schemes = frozenset(s.strip() for s in parameters.get("allowedSchemes", "https").split(","))
            grant = cls(
                hosts=hosts,
                schemes=schemes & set(DEFAULT_PORTS),
                max_request_bytes=int(parameters.get("maxRequestBytes", DEFAULT_MAX_REQUEST_BYTES)),
                max_response_bytes=int(parameters["maxResponseBytes"]),
                timeout_ms=int(parameters.get("timeoutMs", DEFAULT_TIMEOUT_MS)),
                allow_ip_literals=parameters.get("allowIpLiterals") == "true",
                allow_private_network=parameters.get("allowPrivateNetwork") == "true",
            )
        except (KeyError, ValueError):
            raise _denied() from None
        if grant.max_request_bytes < 0 or grant.max_response_bytes < 0 or grant.timeout_ms < 1:
            raise _denied()
        return grant


@dataclass(frozen=True, slots=True)
class Target:
    """What the kernel asked for, split once: the request is built from these parts only."""

    scheme: str
    host: str  # lower-case ASCII name or canonical IPv4 text
    port: int
    path: str  # path and query, as sent ("/" when the uri had none); the fragment is dropped
    ip_literal: IpAddress | None

    @property
    def authority(self) -> str:
        """The ``Host`` header: the name, with the port only when it is not the scheme's default."""
        return self.host if DEFAULT_PORTS[self.scheme] == self.port else f"{self.host}:{self.port}"

    @property
    def resource(self) -> str:
        """The audit resource: scheme, host and port - never the path or query (secrets live there)."""
        return f"http:{self.scheme}://{self.host}:{self.port}"


def _denied() -> BindingError:
    return BindingError("PermissionDenied", f"capability '{CAPABILITY}' is not granted")


def _host_entry(entry: str) -> tuple[str, int | None]:
    name, _, port = entry.strip().lower().partition(":")
    if not name:
        raise ValueError("empty host")
    return name, int(port) if port else None


def parse_target(uri: str) -> Target:
    """Split a kernel's uri (InvalidInput for anything this facade will not send)."""
    match = _URI.fullmatch(uri)
    if match is None:
        raise _invalid("the uri is not an absolute http(s) uri")
    scheme, authority, path = match.group(1).lower(), match.group(2), match.group(3) or "/"
    if "@" in authority:
        raise _invalid("the uri carries credentials, which are never sent")
    if scheme not in DEFAULT_PORTS:
        raise BindingError("PermissionDenied", "the uri's scheme is not allowed by the grant")
    host, sep, port_text = authority.rpartition(":") if ":" in authority else (authority, "", "")
    if sep and _PORT.fullmatch(port_text) is None:
        raise _invalid("the uri's port is not a decimal number")
    port = int(port_text) if sep else DEFAULT_PORTS[scheme]
    if not 1 <= port <= 65535:
        raise _invalid("the uri's port is out of range")
    host = host.lower()
    if _NAME.fullmatch(host) is None:
        raise _invalid("the uri's host must be an ASCII name or an IPv4 address")
    if _PATH.fullmatch(path) is None:
        raise _invalid("the uri's path and query must be printable ASCII without spaces")
    literal = ip_literal(host)
    if literal is not None:
        host = str(literal)
    return Target(scheme, host, port, path if path.startswith("/") else "/" + path, literal)


def _invalid(message: str) -> BindingError:
    return BindingError("InvalidInput", message)


def ip_literal(host: str) -> IpAddress | None:
    """The address a host name *is* rather than names: dotted IPv4, and the legacy forms the C
    resolver also accepts (``127.1``, ``0x7f.1``, ``2130706433``), which must not slip past the
    IP-literal rule by looking like names."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if all(c in "0123456789abcdefx." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def check_allowed(grant: HttpGrant, target: Target) -> None:
    """Scheme, host and port against the grant; IP literals against ``allowIpLiterals``."""
    if target.scheme not in grant.schemes:
        raise BindingError("PermissionDenied", "the uri's scheme is not allowed by the grant")
    if target.ip_literal is not None and not grant.allow_ip_literals:
        raise BindingError("PermissionDenied", "the grant does not allow IP-address hosts")
    default = DEFAULT_PORTS[target.scheme]
    allowed = (target.host, target.port) in grant.hosts or (
        target.port == default and (target.host, None) in grant.hosts
    )
    if not allowed:
        raise BindingError("PermissionDenied", "the uri's host or port is not allowed by the grant")


def address_problem(address: IpAddress, allow_private: bool) -> str | None:
    """Why a (resolved or literal) address may not be connected to, or None."""
    if address.is_unspecified or address.is_multicast:
        return "an unspecified or multicast address"
    if allow_private:
        return None
    if isinstance(address, ipaddress.IPv6Address) and (
        address.ipv4_mapped is not None or address.sixtofour is not None or address.teredo is not None
    ):
        return "an IPv6 address that embeds an IPv4 address"
    if (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address in _CGNAT
        or not address.is_global
    ):
        return "a private, loopback, link-local or otherwise non-public address"
    return None


_CGNAT = ipaddress.ip_network("100.64.0.0/10")
