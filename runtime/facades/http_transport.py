"""One pinned, bounded HTTP GET over httpx, in a blocking and an asyncio flavour.

Why httpx: a maintained HTTP/1.1 client with TLS, chunked transfer, streaming reads and per-request
SNI (the ``sni_hostname`` extension), sync and async with one request model. Writing our own HTTP
parser would be a larger attack surface than the one this facade defends.

How the request is pinned: the caller has already resolved the name once and checked the address
(``http_resolve``). The URL handed to httpx names that *address*, so the client never looks the
name up again (a second lookup is how DNS rebinding swaps a public address for a private one), while
the ``Host`` header and the TLS server name (SNI, and so certificate verification) carry the
original name. The client is built fresh per call with ``trust_env=False`` (no proxy, netrc or
certificate settings from the environment), no redirects followed, no connection reuse, and
``Accept-Encoding: identity`` (a compressed body is refused rather than inflated: a small gzip can
expand a thousandfold past ``maxResponseBytes`` inside one read).

Limits: the request (request line and headers, as sent) must fit ``maxRequestBytes``; a declared
``Content-Length`` over ``maxResponseBytes`` is refused before the body is read; the body is read
as it arrives (each network read, at most 64 KiB) and refused as soon as it would pass ``maxResponseBytes``; every accepted chunk
is charged to the run (``networkBytesRead``) before the next is read. The time limit covers the
connection, the head and the whole body: the async flavour wraps everything in one
``asyncio.timeout``; the blocking one gives every socket operation the time that is left and checks
the deadline after every chunk, so a body trickled byte by byte still stops at the deadline (plus
at most one socket wait).
"""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import certifi
import httpx

from dotboxd.runtime.errors import BindingError, SandboxError
from dotboxd.runtime.facades.http_rules import HttpGrant, IpAddress, Target

_USER_AGENT = "dotboxd-http/1"


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful answer: the status and the body bytes (at most ``maxResponseBytes``)."""

    status: int
    body: bytes


class Budget:
    """The call's deadline: the smaller of the grant's ``timeoutMs`` and the run's wall time left;
    also where the host's cancellation of the run is noticed between network reads."""

    __slots__ = ("cancelled", "deadline")

    def __init__(self, seconds: float, cancelled: Callable[[], bool] = lambda: False) -> None:
        self.deadline = time.monotonic() + seconds
        self.cancelled = cancelled

    def left(self) -> float:
        """Seconds left; Cancelled (``R-CANCELLED``) when the host cancelled the run, Timeout
        (``R-BINDING-TIMEOUT``) when no time is left."""
        if self.cancelled():
            raise SandboxError("R-CANCELLED", "the run was cancelled")
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise timed_out()
        return remaining


def timed_out() -> SandboxError:
    return SandboxError("R-BINDING-TIMEOUT", "the HTTP request did not finish within its time limit")


def transport_failed() -> SandboxError:
    """Connection refused or reset, TLS or protocol errors: one message, no address, no exception text."""
    return SandboxError("R-BINDING-FAILED", "the HTTP request failed (connection, TLS or protocol error)")


def build_request(
    client: httpx.Client | httpx.AsyncClient, target: Target, address: IpAddress
) -> httpx.Request:
    """The GET for ``target`` addressed to ``address`` with the original name in Host and SNI."""
    url = httpx.URL(scheme=target.scheme, host=str(address), port=target.port, raw_path=target.path.encode())
    headers = [
        ("Host", target.authority),
        ("Accept", "*/*"),
        ("Accept-Encoding", "identity"),
        ("Connection", "close"),
        ("User-Agent", _USER_AGENT),
    ]
    extensions = {"sni_hostname": target.host} if target.ip_literal is None else {}
    return client.build_request("GET", url, headers=headers, extensions=extensions)


def request_bytes(request: httpx.Request) -> int:
    """Bytes of the request as HTTP/1.1 sends it: request line, header lines, blank line."""
    line = len(b"GET ") + len(request.url.raw_path) + len(b" HTTP/1.1\r\n")
    return line + sum(len(k) + 2 + len(v) + 2 for k, v in request.headers.raw) + 2


def check_request_size(size: int, grant: HttpGrant) -> None:
    if size > grant.max_request_bytes:
        raise BindingError("QuotaExceeded", "the request is larger than the grant's maxRequestBytes")


def check_head(response: httpx.Response, grant: HttpGrant) -> None:
    """Refuse by status and headers before any of the body is read."""
    status = response.status_code
    if 300 <= status < 400:
        raise BindingError(
            "PermissionDenied", f"the server answered with a redirect ({status}), which is not followed"
        )
    if status in (404, 410):
        raise BindingError("NotFound", f"the server answered HTTP {status}")
    if not 200 <= status < 300:
        raise SandboxError("R-BINDING-FAILED", f"the server answered HTTP {status}")
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise SandboxError("R-BINDING-FAILED", "the server sent a compressed body, which is not accepted")
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > grant.max_response_bytes:
        raise too_large()


def too_large() -> BindingError:
    return BindingError("QuotaExceeded", "the response body is larger than the grant's maxResponseBytes")


class BodySink:
    """Collects body chunks up to the limit, charging each accepted chunk before keeping it; also
    remembers the response status once the head arrived (failure audit events carry it)."""

    __slots__ = ("_charge", "_limit", "_parts", "size", "status")

    def __init__(self, limit: int, charge: Callable[[int], None]) -> None:
        self._limit = limit
        self._charge = charge
        self._parts: list[bytes] = []
        self.size = 0
        self.status: int | None = None

    def add(self, chunk: bytes) -> None:
        if self.size + len(chunk) > self._limit:
            raise too_large()
        self._charge(len(chunk))
        self._parts.append(chunk)
        self.size += len(chunk)

    def body(self) -> bytes:
        return b"".join(self._parts)


_TLS: ssl.SSLContext | None = None
_TLS_LOCK = threading.Lock()


def _tls() -> ssl.SSLContext:
    """One verifying TLS context for every call (loading the CA bundle costs more than a small GET);
    certificate and host-name checks stay on, and SNI comes from each request."""
    global _TLS
    with _TLS_LOCK:
        if _TLS is None:
            _TLS = ssl.create_default_context(cafile=certifi.where())
        return _TLS


def _client_options(seconds: float, tls: ssl.SSLContext | None) -> dict[str, object]:
    return {
        "verify": tls or _tls(),
        "trust_env": False,
        "follow_redirects": False,
        "timeout": httpx.Timeout(seconds),
        "limits": httpx.Limits(max_connections=1, max_keepalive_connections=0),
    }


@dataclass(frozen=True, slots=True)
class Exchange:
    """One pinned GET, whichever client sends it: where it goes (``target`` at the resolved
    ``address``), what the grant allows, the call's time ``budget``, where the request's bytes are
    charged (``charge_write``) and the response's go (``sink``). The blocking and the asyncio forms
    (``fetch``, ``fetch_async``) differ only in how they wait, so everything else lives here once."""

    target: Target
    address: IpAddress
    grant: HttpGrant
    budget: Budget
    charge_write: Callable[[int], None]
    sink: BodySink
    tls: ssl.SSLContext | None = None

    def client_options(self) -> dict[str, object]:
        return _client_options(self.budget.left(), self.tls)

    def request(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The request, refused before it is sent when it is larger than the grant allows, and its
        bytes charged as network writes."""
        request = build_request(client, self.target, self.address)
        size = request_bytes(request)
        check_request_size(size, self.grant)
        self.charge_write(size)
        return request

    def head(self, response: httpx.Response) -> None:
        """Record the status (for the audit record) and check the headers against the grant."""
        self.sink.status = response.status_code
        check_head(response, self.grant)

    def chunk(self, data: bytes) -> None:
        """One piece of the body, taken only while time is left."""
        self.budget.left()
        self.sink.add(data)

    def reply(self, response: httpx.Response) -> Reply:
        return Reply(response.status_code, self.sink.body())


def fetch(exchange: Exchange) -> Reply:
    """The blocking GET (used by ``SandboxHost.execute``'s binding calls)."""
    try:
        with httpx.Client(**exchange.client_options()) as client:  # type: ignore[arg-type]
            response = client.send(exchange.request(client), stream=True)
            try:
                exchange.head(response)
                for chunk in response.iter_raw():
                    exchange.chunk(chunk)
                exchange.budget.left()
                return exchange.reply(response)
            finally:
                response.close()
    except (TimeoutError, httpx.TimeoutException):
        raise timed_out() from None
    except (httpx.HTTPError, OSError):
        raise transport_failed() from None


async def fetch_async(exchange: Exchange) -> Reply:
    """The asyncio GET (an async binding awaited on an event loop): one timeout covers it all."""
    try:
        async with asyncio.timeout(exchange.budget.left()):
            async with httpx.AsyncClient(**exchange.client_options()) as client:  # type: ignore[arg-type]
                response = await client.send(exchange.request(client), stream=True)
                try:
                    exchange.head(response)
                    async for chunk in response.aiter_raw():
                        exchange.chunk(chunk)
                    return exchange.reply(response)
                finally:
                    await response.aclose()
    except (TimeoutError, httpx.TimeoutException):
        raise timed_out() from None
    except (httpx.HTTPError, OSError):
        raise transport_failed() from None
