"""dotboxd.client against a server that answers garbage, too much, too slowly, or not at all.

Every answer the client cannot use must end as a DotBoxDError with a stable code (R-HOST-INTERNAL),
never a KeyError/TypeError from a body of the wrong shape, never unbounded memory, never a wait past
the client's ``timeout`` (a trickled body resets httpx's per-read timeout, so only the client's own
deadline bounds it).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from dotboxd.client import AsyncDotBoxDClient, DotBoxDClient, EventStream
from dotboxd.client.replies import checked
from dotboxd.core.diagnostics import DotBoxDError

Answer = tuple[int, bytes]

GARBAGE: dict[str, Answer] = {
    "a JSON array": (200, b"[1]"),
    "an empty object": (200, b"{}"),
    "not JSON": (200, b"\xff\x00garbage"),
    "nested 10^5 deep": (200, b"[" * 100_000 + b"]" * 100_000),
    "usage that is not an object": (200, b'{"outcome": "ok", "usage": 5, "id": 1}'),
    "members of the wrong type": (
        200,
        b'{"outcome": 1, "id": 7, "moduleHash": [], "planHash": "", "policyHash": "", "settings": []}',
    ),
    "a failed run without its code": (200, b'{"outcome": "error", "usage": {}}'),
    "diagnostics that are not objects": (400, b'{"diagnostics": [1, "x"]}'),
    "an empty diagnostics list": (422, b'{"diagnostics": []}'),
    "a redirect": (302, b""),
    "a bare 500": (500, b"Internal Server Error"),
}


class _Hostile(BaseHTTPRequestHandler):
    answer: Answer = (200, b"{}")
    trickle_seconds = 0.0

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        status, body = self.answer
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not self.trickle_seconds:
            self.wfile.write(body)
            return
        with contextlib.suppress(OSError):  # the client gives up and closes: expected
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.trickle_seconds)

    do_GET = do_POST = do_PATCH = do_DELETE = _answer


@contextlib.contextmanager
def hostile_server(answer: Answer, trickle_seconds: float = 0.0) -> Iterator[tuple[str, type[_Hostile]]]:
    """A loopback server giving every request ``answer`` (change it through the yielded class)."""
    handler = type("Handler", (_Hostile,), {"answer": answer, "trickle_seconds": trickle_seconds})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


CALLS: dict[str, Callable[[DotBoxDClient], object]] = {
    "install": lambda client: client.install("module"),
    "invoke": lambda client: client.invoke("e1", [1]),
    "rpc": lambda client: client.rpc("m", [1]),
    "update_settings": lambda client: client.update_settings("s", "p", {}),
}


def test_every_garbage_answer_is_a_dotboxd_error_never_a_traceback() -> None:
    refused = 0
    with hostile_server((200, b"{}")) as (url, handler), DotBoxDClient(url, "token", timeout=5) as client:
        for name, answer in GARBAGE.items():
            handler.answer = answer
            for call_name, call in CALLS.items():
                with pytest.raises(DotBoxDError) as error:
                    call(client)
                assert error.value.code == "R-HOST-INTERNAL", (name, call_name)
                refused += 1
    assert refused == len(GARBAGE) * len(CALLS)


def test_a_garbage_diagnostic_is_rebuilt_with_a_stable_code() -> None:
    body = b'{"diagnostics": [{"code": 5, "line": true, "column": 1, "message": ["x"], "hint": 3}]}'
    with pytest.raises(DotBoxDError) as error:
        checked(400, body)
    diagnostic = error.value.diagnostic
    assert (diagnostic.code, diagnostic.span, diagnostic.message, diagnostic.hint) == (
        "R-HOST-INTERNAL",
        None,
        "",
        "",
    )


def test_a_huge_answer_is_cut_at_the_response_cap() -> None:
    huge = b'{"value": "' + b"x" * 200_000 + b'"}'
    with hostile_server((200, huge)) as (url, _):
        with DotBoxDClient(url, "token", max_response_bytes=64 * 1024) as client:
            with pytest.raises(DotBoxDError) as error:
                client.rpc("m", [])
            assert (
                error.value.code == "R-HOST-INTERNAL"
                and "larger than 65536" in error.value.diagnostic.message
            )
        with DotBoxDClient(url, "token") as roomy:  # the default cap is far above it
            assert roomy.rpc("m", []) == "x" * 200_000


def test_a_trickled_answer_ends_at_the_client_timeout_sync_and_async() -> None:
    trickle = (200, b'{"value": "' + b"x" * 400 + b'"}')  # 20 s at one byte per 50 ms
    with hostile_server(trickle, trickle_seconds=0.05) as (url, _):
        started = time.monotonic()
        with DotBoxDClient(url, "token", timeout=0.6) as client, pytest.raises(DotBoxDError) as error:
            client.rpc("m", [])
        assert error.value.code == "R-HOST-INTERNAL" and "within 0.6 s" in error.value.diagnostic.message
        assert time.monotonic() - started < 3.0

        async def trickled() -> None:
            async with AsyncDotBoxDClient(url, "token", timeout=0.6) as client:
                await client.rpc("m", [])

        started = time.monotonic()
        with pytest.raises(DotBoxDError) as async_error:
            asyncio.run(trickled())
        assert async_error.value.code == "R-HOST-INTERNAL"
        assert time.monotonic() - started < 3.0


def test_a_server_that_never_answers_is_a_timeout_within_the_client_timeout() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with DotBoxDClient(url, "token", timeout=0.5) as client, pytest.raises(DotBoxDError) as error:
            client.invoke("e1", [1])
        assert time.monotonic() - started < 3.0
        # a DotBoxD error with a stable code and a hint; httpx's own timeout is kept as the cause
        assert error.value.code == "E-SERVER-UNREACHABLE" and "within 0.5 s" in error.value.diagnostic.message
        assert error.value.diagnostic.hint and isinstance(error.value.__cause__, httpx.TimeoutException)


class _Frames:
    """A stand-in WebSocket connection that hands out fixed frames."""

    def __init__(self, *frames: str) -> None:
        self.frames = list(frames)

        self.closed = False

    def recv(self, timeout: float | None = None) -> str:
        if not self.frames:
            raise TimeoutError
        return self.frames.pop(0)

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("frame", ["not json", "[1]", "[" * 100_000, '"text"'])
def test_an_event_frame_that_is_not_a_json_object_is_a_dotboxd_error(frame: str) -> None:
    stream = EventStream(_Frames('{"type": "session", "session": "s1"}', frame))  # type: ignore[arg-type]
    assert stream.session == "s1"
    with pytest.raises(DotBoxDError) as error:
        stream.receive()
    assert error.value.code == "R-HOST-INTERNAL"


@pytest.mark.parametrize("first", [None, "[1]", '{"type": "message"}', "not json"])
def test_a_server_that_opens_no_session_is_a_dotboxd_error_and_the_socket_is_closed(
    first: str | None,
) -> None:
    frames = _Frames() if first is None else _Frames(first)
    with pytest.raises(DotBoxDError) as error:
        EventStream(frames, timeout=0.1)  # type: ignore[arg-type]
    assert error.value.code == "R-HOST-INTERNAL" and frames.closed
