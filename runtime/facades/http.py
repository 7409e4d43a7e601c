"""``net.http.get``: DotBoxD's HTTP facade, a GET confined by its grant and defended against SSRF.

One call, in order, each step failing closed (``spec/semantics.md`` section 13):

1. the grant (``allowedHosts``, ``allowedSchemes``, ``maxRequestBytes``, ``maxResponseBytes``,
   ``timeoutMs``, ``allowIpLiterals``, ``allowPrivateNetwork``) must be readable;
2. the uri is split by our own parser (``http_rules``) and checked against the grant: scheme, host,
   port, IP literals, no credentials;
3. the call's time limit is fixed: the smaller of ``timeoutMs`` and the run's remaining wall time;
4. the name is resolved once and every address checked (``http_resolve``); the request goes to that
   address (``http_transport``), with the name in ``Host`` and SNI - no second lookup;
5. the response must be 2xx (a redirect is refused, never followed), uncompressed, and no larger
   than ``maxResponseBytes``; the body is charged to ``networkBytesRead`` as it arrives and the
   request to ``networkBytesWritten``;
6. the body is decoded as UTF-8 (invalid sequences become U+FFFD) and returned; the runtime then
   charges the binding's ``perByteFuel`` for it, like any returned string.

Audit: the binding is PerResource. Once the uri's host is known, the facade writes one event,
success or failure, whose resource is ``http:<scheme>://<host>:<port>`` and whose fields hold the
status (when there was one) - never the path, the query, headers or the body. Failures before that
get the runtime's generic failure event. Kernel-visible errors are the facade's own sentences:
never an exception's text, an address or the uri.

``HttpFacade(resolver=...)`` lets a host (or a test) supply the name resolver; ``get`` is the
blocking implementation the standard facade table uses, ``get_async`` the same call as a coroutine
for hosts that await bindings on their own event loop (register it as the binding's invoker).
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from dotboxd.core.values import SandboxUri
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError, SandboxError
from dotboxd.runtime.facades.http_resolve import Resolver, pin, pin_async, system_resolver
from dotboxd.runtime.facades.http_rules import CAPABILITY, HttpGrant, Target, check_allowed, parse_target
from dotboxd.runtime.facades.http_transport import BodySink, Budget, Exchange, Reply, fetch, fetch_async


class HttpFacade:
    """The ``net.http.get`` implementation, with an injectable name resolver."""

    __slots__ = ("resolver", "tls")

    def __init__(self, resolver: Resolver | None = None, tls: ssl.SSLContext | None = None) -> None:
        """``resolver`` maps (name, port) to addresses (default: the operating system's);
        ``tls`` is the verifying TLS context for HTTPS (default: the system's CA bundle via certifi).
        A host that trusts a private CA passes its own context; it must keep verification on."""
        self.resolver: Resolver = resolver or system_resolver
        self.tls = tls

    def get(self, ctx: BindingContext, uri: SandboxUri) -> str:
        """The blocking GET."""
        grant, target = _prepare(ctx, uri)
        sink = _sink(ctx, grant)
        try:
            check_allowed(grant, target)
            budget = _budget(ctx, grant)
            address = pin(target, self.resolver, grant.allow_private_network, budget)
            reply = fetch(Exchange(target, address, grant, budget, ctx.charge_network_write, sink, self.tls))
        except (BindingError, SandboxError) as failure:
            _audit_failure(ctx, target, sink, failure)
            raise
        return _succeeded(ctx, target, reply)

    async def get_async(self, ctx: BindingContext, uri: SandboxUri) -> str:
        """The same GET as a coroutine (httpx's async client; the lookup on a worker thread)."""
        grant, target = _prepare(ctx, uri)
        sink = _sink(ctx, grant)
        try:
            check_allowed(grant, target)
            budget = _budget(ctx, grant)
            address = await pin_async(target, self.resolver, grant.allow_private_network, budget)
            reply = await fetch_async(
                Exchange(target, address, grant, budget, ctx.charge_network_write, sink, self.tls)
            )
        except (BindingError, SandboxError) as failure:
            _audit_failure(ctx, target, sink, failure)
            raise
        return _succeeded(ctx, target, reply)


def _prepare(ctx: BindingContext, uri: SandboxUri) -> tuple[HttpGrant, Target]:
    parameters = ctx.grant_parameters
    if not parameters:
        raise BindingError("PermissionDenied", f"capability '{CAPABILITY}' is not granted")
    grant = HttpGrant.parse(parameters)
    text = uri.text if isinstance(uri, SandboxUri) else None
    if not isinstance(text, str):
        raise BindingError("InvalidInput", "the argument is not a uri")
    return grant, parse_target(text)


def _budget(ctx: BindingContext, grant: HttpGrant) -> Budget:
    return Budget(min(grant.timeout_ms / 1000.0, ctx.remaining_seconds()), lambda: ctx.cancelled)


def _sink(ctx: BindingContext, grant: HttpGrant) -> BodySink:
    return BodySink(grant.max_response_bytes, ctx.charge_network_read)


def _succeeded(ctx: BindingContext, target: Target, reply: Reply) -> str:
    ctx.audit(target.resource, bytes=len(reply.body), fields={"status": reply.status})
    return reply.body.decode("utf-8", errors="replace")


def _audit_failure(
    ctx: BindingContext, target: Target, sink: BodySink, failure: BindingError | SandboxError
) -> None:
    fields = {"status": sink.status} if sink.status is not None else None
    ctx.audit(
        target.resource,
        success=False,
        error_code=failure.category,
        message=failure.safe_message,
        bytes=sink.size,
        fields=fields,
    )


STANDARD = HttpFacade()
"""The facade ``SandboxHost`` attaches to the standard ``net.http.get`` (the system resolver)."""

http_get: Callable[[BindingContext, SandboxUri], str] = STANDARD.get
http_get_async: Callable[[BindingContext, SandboxUri], Awaitable[Any]] = STANDARD.get_async

__all__ = ["CAPABILITY", "STANDARD", "HttpFacade", "Resolver", "http_get", "http_get_async"]
