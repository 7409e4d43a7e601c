"""A server the client cannot talk to: one DotBoxD refusal instead of the HTTP library's errors.

Refused, reset or dropped connections, a host name that does not resolve, a connect or read
timeout, a proxy failure, a URL scheme httpx does not speak: each ends the call with an
``E-SERVER-UNREACHABLE`` ``DotBoxDError`` (HostFailure) naming what failed and where, with a hint, and
the library's own exception kept as ``__cause__`` for whoever debugs it. A caller then handles every
failure of a call as a ``DotBoxDError`` with a stable code, as it does for refusals and malformed
answers (``dotboxd.client.replies``), without importing httpx or websockets.
"""

from __future__ import annotations

import httpx
import websockets.exceptions

from dotboxd.core.diagnostics import DotBoxDError, reject

TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError, OSError, TimeoutError)
"""What a failed exchange raises below the answer: httpx's transport errors (connect, read, write,
protocol, proxy, timeouts) and, from the WebSocket library, the socket's own ``OSError`` and
``TimeoutError``."""


def unreachable(url: str, error: BaseException, timeout: float) -> DotBoxDError:
    """The refusal for ``error`` raised while talking to the server at ``url``."""
    timed_out = isinstance(error, httpx.TimeoutException | TimeoutError)
    what = f"no answer within {timeout:g} s" if timed_out else "the connection failed"
    return reject(
        "E-SERVER-UNREACHABLE",
        f"cannot talk to the server at {url}: {what} ({type(error).__name__})",
        hint="check that `dotboxd serve` runs at this URL and is reachable from here"
        + ("; raise the client's timeout for long runs" if timed_out else ""),
        transport=type(error).__name__,
    )


STREAM_CLOSED: tuple[type[BaseException], ...] = (websockets.exceptions.ConnectionClosed,)
"""What the WebSocket library raises on a read from an event stream that is closed: closed by the
server (cleanly, or torn down - a reset, a frame cut off), or by the client itself."""


def stream_closed(error: BaseException) -> DotBoxDError:
    """The refusal for a read from a closed event stream (``error``: the library's
    ``ConnectionClosed``): no message can come any more. The close code and reason, if the server
    sent any, are named (the reason clipped); the session's kernels are gone with it."""
    received = getattr(error, "rcvd", None)
    code = getattr(received, "code", None)
    reason = str(getattr(received, "reason", ""))[:80]
    how = (
        "without a close frame"
        if code is None
        else f"with code {code}" + (f" ({reason!r})" if reason else "")
    )
    return reject(
        "E-SERVER-UNREACHABLE",
        f"the event stream is closed ({how}; {type(error).__name__})",
        hint="subscribe again for a new session and reinstall its plugins; a closed stream delivers nothing",
        transport=type(error).__name__,
    )
