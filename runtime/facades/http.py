"""``net.http.get`` without a transport: a clear refusal instead of an anonymous failure.

DotBoxD's HTTP facade (allowlists, DNS pinning, redirect and size checks) is not built
here; a host that grants ``net.http.get`` must register the binding with its own invoker (a pinned
transport, or a test double), which ``attach_standard_facades`` never replaces. When the host
registers the standard contract without one, this stand-in answers every call with BindingFailure
``R-BINDING-FAILED`` and a message that says why, after the runtime's usual checks (capability,
host-call and fuel charges, the async grant) - so nothing about a run changes but the message.
"""

from __future__ import annotations

from dotboxd.core.values import SandboxUri
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import SandboxError

CAPABILITY = "net.http.get"

UNAVAILABLE_MESSAGE = (
    "binding 'net.http.get' has no HTTP transport in this host (the host must supply an invoker)"
)


def http_get_unavailable(ctx: BindingContext, uri: SandboxUri) -> str:
    """Always refuses: no request is made and the uri is not looked at."""
    raise SandboxError("R-BINDING-FAILED", UNAVAILABLE_MESSAGE)
