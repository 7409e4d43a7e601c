"""Serving the app with uvicorn: in the foreground (``dotboxd serve``) or on a thread (tests, embedding).

uvicorn is configured for hostile clients: a connection cap (``max_connections``: past it new
requests get 503 with an ``E-SERVER-BUSY`` diagnostic and ``Retry-After``, once connections idle
between requests have been closed to make room), an answer deadline (a
client that takes no byte of an answer for ``send_timeout_seconds`` is disconnected), a keep-alive timeout, bounded h11 header buffers, WebSocket frame size and queue
limits, and a header deadline (``header_timeout_seconds``) enforced by a small protocol subclass:
uvicorn itself waits forever for the headers of a request that trickles in one byte at a time. The
same subclass answers a client that half-closes after sending a whole request.
Body trickles are cut by the app (``httpio.read_body``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.server.config import ServerLimits

MAX_HEADER_BYTES = 64 * 1024
SEND_BUFFER_BYTES = 64 * 1024
"""Kernel send buffer per connection (inherited from the listening socket). A fixed size turns off
Linux's send-buffer autotuning, which would otherwise let a client that never reads park megabytes
of our messages in the kernel before the server notices it is not reading."""


def _diagnostics_body(error: DotBoxDError) -> bytes:
    """The JSON body every refusal has (``httpio.diagnostics_response``), for answers made here."""
    return json.dumps({"diagnostics": [d.to_json() for d in error.diagnostics]}).encode()


def _malformed_http_answer() -> bytes:
    error = reject(
        "E-SERVER-REQUEST",
        "the request is not valid HTTP/1.1 (its request line, a header or its framing)",
        hint="send one Content-Length or chunked body, and a request target without control characters",
        status=400,
    )
    body = _diagnostics_body(error)
    head = "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n"
    return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body


_MALFORMED_HTTP_ANSWER = _malformed_http_answer()

_BUSY_BODY = _diagnostics_body(
    reject(
        "E-SERVER-BUSY",
        "the server is at its connection limit; the request was not read",
        hint="retry after a short wait, or raise [limits] max_connections",
        status=503,
    )
)
_BUSY_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(_BUSY_BODY)).encode()),
    (b"retry-after", b"1"),
    (b"connection", b"close"),
]
_BUSY_HTTP_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    + b"".join(name + b": " + value + b"\r\n" for name, value in _BUSY_HEADERS)
    + b"\r\n"
    + _BUSY_BODY
)
"""The same answer written straight to the socket, for a WebSocket handshake (it has no ASGI
request cycle to answer through)."""


async def _busy(scope: Any, receive: Any, send: Any) -> None:
    """The answer past the connection cap: uvicorn's own is a plain-text 503 with no code."""
    await send({"type": "http.response.start", "status": 503, "headers": _BUSY_HEADERS})
    await send({"type": "http.response.body", "body": _BUSY_BODY, "more_body": False})


def _header_deadline_protocol(seconds: float, send_seconds: float) -> type[H11Protocol]:
    class HeaderDeadlineProtocol(H11Protocol):
        """h11 with a deadline for each request's headers: a client that has not finished sending
        them ``seconds`` after its first byte (or after connecting) is disconnected. And one for
        each answer: a client that takes none of its bytes for ``send_seconds`` (the send buffer
        stays full) is disconnected too; uvicorn would wait for it forever, a connection slot held
        by a client that never reads (``max_connections`` of them lock everyone else out)."""

        _deadline: asyncio.TimerHandle | None = None
        _stalled: asyncio.TimerHandle | None = None
        _half_closed = False
        _idle_since: float | None = None
        """When this connection's last answer was complete and it went idle between requests (keep-
        alive); None while a request is under way, before the first one, or once closing."""

        def __init__(
            self,
            config: uvicorn.Config,
            server_state: ServerState,
            app_state: dict[str, Any],
            _loop: asyncio.AbstractEventLoop | None = None,
        ) -> None:
            super().__init__(config, server_state, app_state, _loop)
            # uvicorn's connection cap swaps the app for a plain-text 503; keep the cap, answer it
            # with the diagnostics shape instead (the same test, made when the request's task runs)
            self._cap = self.limit_concurrency
            self.limit_concurrency = None
            self._inner_app = self.app
            self.app = self._capped_app

        def _at_cap(self, own_tasks: int) -> bool:
            """uvicorn's test of the cap (``own_tasks`` of ``tasks`` are this request's own), after
            idle keep-alive connections made room: a request that finds the cap reached closes as
            many connections idle between requests as it needs, longest idle first, instead of
            being refused because of them (``_reclaim_idle``)."""
            cap = self._cap
            if cap is None:
                return False
            connections = len(self.connections)
            if connections >= cap:  # closing ones (reclaimed, not gone yet) hold no slot
                connections = sum(1 for c in self.connections if not _closing(c))
            if connections >= cap:
                connections -= self._reclaim_idle(connections - cap + 1)
            busy = connections >= cap or len(self.tasks) - own_tasks >= cap
            if busy:
                self.logger.warning("Exceeded concurrency limit.")
            return busy

        def _reclaim_idle(self, wanted: int) -> int:
            """Close up to ``wanted`` other connections that sit idle between requests (keep-alive:
            their last answer complete, no byte of a next request yet), longest idle first; how many.
            Why: an idle keep-alive connection holds a slot of ``max_connections`` for up to the
            keep-alive timeout, so a few clients' connection pools could lock out every active client
            (E-SERVER-BUSY) while doing nothing; RFC 9112 lets a server close an idle persistent
            connection at any time, and clients retry on a new one. A connection that has sent none
            of its first request is not reclaimed (it may be about to; the header deadline bounds
            it), nor one in the middle of a request, nor an event WebSocket."""
            idle = sorted(
                (
                    c
                    for c in self.connections
                    if c is not self and isinstance(c, HeaderDeadlineProtocol) and c._idle()
                ),
                key=lambda c: c._idle_since or 0.0,
            )
            for connection in idle[:wanted]:
                connection._idle_since = None
                # the FIN leaves now, before this request's answer: a client that reads that answer
                # and reuses its pooled connection sees it closed (asyncio closes on a later turn)
                sock = connection.transport.get_extra_info("socket")
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_WR)
                connection.transport.close()
            return min(wanted, len(idle))

        def _idle(self) -> bool:
            """Idle between requests: answered, nothing of a next request received, not closing."""
            return (
                self._idle_since is not None
                and not self.transport.is_closing()
                and (self.cycle is None or self.cycle.response_complete)
                and not self.conn.trailing_data[0]
            )

        async def _capped_app(self, scope: Any, receive: Any, send: Any) -> None:
            # uvicorn tests before adding the request's task to ``tasks``; here it is already in
            if self._at_cap(own_tasks=1):
                await _busy(scope, receive, send)
                return
            await self._inner_app(scope, receive, send)

        def handle_websocket_upgrade(self, event: Any) -> None:  # an h11.Request
            """uvicorn upgrades without looking at the cap, so WebSocket sessions were unlimited
            (and each counted against the cap of HTTP requests): past it, the handshake gets the
            same 503 ``E-SERVER-BUSY`` answer and the connection is closed."""
            if self._at_cap(own_tasks=0):
                self.transport.write(_BUSY_HTTP_ANSWER)
                self.transport.close()
                return
            super().handle_websocket_upgrade(event)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            upgraded = self.transport.get_protocol() is not self  # now a WebSocket: not ours to time
            if not upgraded and (self.cycle is None or self.cycle.response_complete):
                self.transport.close()  # still waiting for a request's headers

        def data_received(self, data: bytes) -> None:
            self._idle_since = None  # a byte of a next request: no longer idle
            if self.cycle is None or self.cycle.response_complete:
                self._arm()  # bytes of a new request's head
            super().data_received(data)
            upgraded = self.transport.get_protocol() is not self
            if upgraded or (self.cycle is not None and not self.cycle.response_complete):
                self._disarm()  # the headers are in: the body has its own deadline in the app

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._unstall()
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._stalled is None:
                self._stalled = self.loop.call_later(send_seconds, self._give_up)

        def resume_writing(self) -> None:
            self._unstall()
            super().resume_writing()

        def _unstall(self) -> None:
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None

        def _give_up(self) -> None:
            """The client took no byte of the answer for ``send_seconds``: drop the connection
            (abort: a close would wait for the buffer to drain, which is what never happens)."""
            self._stalled = None
            self.transport.abort()

        def eof_received(self) -> bool | None:  # type: ignore[override]  # asyncio's own signature
            """A client that half-closes after a whole request (``shutdown(SHUT_WR)``) still gets
            its answer: uvicorn would let asyncio close the socket at once, after the app had
            already acted (an install kept, its id never sent). Any other EOF closes as before."""
            cycle = self.cycle
            if cycle is not None and not cycle.more_body and not cycle.response_complete:
                self._half_closed = True
                return True  # keep our side open until the answer is written
            return None

        def send_400_response(self, msg: str) -> None:
            """A request h11 cannot parse (a bad Content-Length, a NUL in the target, ...) gets the
            JSON diagnostics every other refusal has, not uvicorn's plain-text 400."""
            self.transport.write(_MALFORMED_HTTP_ANSWER)
            self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._half_closed:
                self.transport.close()  # the client can send no further request
            elif self.cycle is None or self.cycle.response_complete:  # no pipelined request began
                self._idle_since = self.loop.time()

    return HeaderDeadlineProtocol


def _closing(connection: Any) -> bool:
    """Whether a connection of the server's set is closing (closed by us, not yet gone from it)."""
    transport = getattr(connection, "transport", None)
    return transport is not None and transport.is_closing()


def uvicorn_config(app: Any, host: str, port: int, limits: ServerLimits, **extra: Any) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=_header_deadline_protocol(limits.header_timeout_seconds, limits.send_timeout_seconds),
        ws="websockets-sansio",
        limit_concurrency=limits.max_connections,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        ws_max_size=limits.max_body_bytes,
        ws_max_queue=8,
        server_header=False,
        **extra,
    )


class ServerThread:
    """uvicorn on a daemon thread, bound before ``start`` returns (port 0 picks a free port).

    with ServerThread(app, limits) as server:
        httpx.get(server.url + "/health")
    """

    def __init__(self, app: Any, limits: ServerLimits, host: str = "127.0.0.1", port: int = 0) -> None:
        # proto IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say
        # they are TCP, and with Nagle on every response waits ~40 ms for a delayed ACK
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        self._socket.bind((host, port))
        self.host, self.port = self._socket.getsockname()[:2]
        self.url = f"http://{self.host}:{self.port}"
        config = uvicorn_config(app, host, self.port, limits, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="dotboxd-server", daemon=True)

    def _run(self) -> None:
        self._server.run(sockets=[self._socket])

    def start(self, timeout: float = 10.0) -> ServerThread:
        self._thread.start()
        for _ in range(int(timeout / 0.01)):
            if self._server.started:
                return self
            if not self._thread.is_alive():
                break
            threading.Event().wait(0.01)
        self.stop()
        raise RuntimeError("the server did not start")

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(app: Any, host: str, port: int, limits: ServerLimits) -> None:
    """Run in the foreground until interrupted (SIGINT/SIGTERM stop it gracefully)."""
    uvicorn.Server(uvicorn_config(app, host, port, limits, log_level="info")).run()
