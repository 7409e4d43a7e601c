"""An event stream the server closes is a DotBoxDError, never the WebSocket library's exception.

``EventStream.receive`` (sync and asyncio), iteration over a stream and ``subscribe`` meet a server
that closes cleanly, with an error code, without a close frame (a reset), in the middle of a frame,
or before it opened a session: each read that can get no message any more raises an
``E-SERVER-UNREACHABLE`` DotBoxDError with the library's ``ConnectionClosed`` as ``__cause__``;
iteration ends quietly only at a clean close. The server is a loopback WebSocket server that plays
each ending after its session frame; it stops by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import websockets.exceptions
import websockets.sync.server

from dotboxd.client import AsyncDotBoxDClient, DotBoxDClient
from dotboxd.core.diagnostics import DotBoxDError

SESSION = '{"type": "session", "session": "s1"}'
MESSAGE = '{"type": "message", "text": "hello"}'
Ending = Callable[[websockets.sync.server.ServerConnection], None]


def _reset(connection: websockets.sync.server.ServerConnection) -> None:
    connection.socket.shutdown(socket.SHUT_RDWR)  # no close frame: the TCP connection just ends


def _cut_frame(connection: websockets.sync.server.ServerConnection) -> None:
    connection.socket.sendall(b"\x81\x0a" + b"abc")  # a text frame of 10 bytes, 3 of them sent
    _reset(connection)


ENDINGS: dict[str, Ending] = {
    "clean close": lambda c: c.close(1000, "bye"),
    "going away": lambda c: c.close(1001),
    "error code": lambda c: c.close(1011, "x" * 120),
    "reset": _reset,
    "frame cut off": _cut_frame,
}
CLEAN = {"clean close", "going away"}


@contextlib.contextmanager
def closing_server(ending: Ending | None, first: str | None = SESSION) -> Iterator[str]:
    """A loopback WebSocket server that sends ``first`` and one message, then ends the connection
    with ``ending`` (None: stays open until the client leaves); yields its http URL."""

    def handler(connection: websockets.sync.server.ServerConnection) -> None:
        if first is None:
            _reset(connection)
            return
        connection.send(first)
        connection.send(MESSAGE)
        if ending is None:
            with contextlib.suppress(websockets.exceptions.ConnectionClosed):
                connection.recv(timeout=5)
            return
        ending(connection)

    with websockets.sync.server.serve(handler, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        host, port = server.socket.getsockname()[:2]
        try:
            yield f"http://{host}:{port}"
        finally:
            server.shutdown()
            thread.join(5)


def _assert_closed_refusal(error: BaseException) -> None:
    assert isinstance(error, DotBoxDError) and error.code == "E-SERVER-UNREACHABLE", error
    assert isinstance(error.__cause__, websockets.exceptions.ConnectionClosed)
    assert error.diagnostic.hint and "event stream is closed" in error.diagnostic.message
    assert len(error.diagnostic.message) < 200, "a close reason is clipped"


@pytest.mark.parametrize("name", list(ENDINGS))
def test_receive_after_the_server_closes_is_a_dotboxd_error(name: str) -> None:
    with closing_server(ENDINGS[name]) as url, DotBoxDClient(url, "t", timeout=5) as client:
        stream = client.subscribe()
        assert stream.session == "s1"
        assert stream.receive(timeout=5) == {"type": "message", "text": "hello"}  # sent whole before
        for _ in range(2):  # and again: a closed stream stays a DotBoxDError
            with pytest.raises(DotBoxDError) as refused:
                stream.receive(timeout=5)
            _assert_closed_refusal(refused.value)
        stream.close()


@pytest.mark.parametrize("name", list(ENDINGS))
def test_iterating_a_stream_ends_at_a_clean_close_and_refuses_any_other(name: str) -> None:
    with closing_server(ENDINGS[name]) as url, DotBoxDClient(url, "t", timeout=5) as client:
        seen: list[dict[str, Any]] = []
        with client.subscribe() as stream:
            if name in CLEAN:
                seen.extend(stream)
                assert seen == [{"type": "message", "text": "hello"}]
            else:
                with pytest.raises(DotBoxDError) as refused:
                    seen.extend(stream)
                _assert_closed_refusal(refused.value)


@pytest.mark.parametrize("name", list(ENDINGS))
def test_the_async_stream_refuses_alike(name: str) -> None:
    async def scenario(url: str) -> None:
        async with AsyncDotBoxDClient(url, "t", timeout=5) as client:
            stream = await client.subscribe()
            assert await stream.receive(timeout=5) == {"type": "message", "text": "hello"}
            with pytest.raises(DotBoxDError) as refused:
                await stream.receive(timeout=5)
            _assert_closed_refusal(refused.value)
            await stream.aclose()
            again = await client.subscribe()
            seen = []
            if name in CLEAN:
                seen = [message async for message in again]
                assert seen == [{"type": "message", "text": "hello"}]
            else:
                with pytest.raises(DotBoxDError) as refused:
                    seen = [message async for message in again]
                _assert_closed_refusal(refused.value)
            await again.aclose()

    with closing_server(ENDINGS[name]) as url:
        asyncio.run(scenario(url))


def test_a_stream_the_client_closed_refuses_reads_and_ends_iteration() -> None:
    with closing_server(None) as url, DotBoxDClient(url, "t", timeout=5) as client:
        stream = client.subscribe()
        assert stream.receive(timeout=5)["text"] == "hello"
        stream.close()
        with pytest.raises(DotBoxDError) as refused:
            stream.receive(timeout=5)
        _assert_closed_refusal(refused.value)
        assert list(stream) == []


def test_a_server_that_closes_before_the_session_is_a_dotboxd_error_sync_and_async() -> None:
    with closing_server(None, first=None) as url:
        with DotBoxDClient(url, "t", timeout=5) as client, pytest.raises(DotBoxDError) as refused:
            client.subscribe()
        _assert_closed_refusal(refused.value)

        async def scenario() -> None:
            async with AsyncDotBoxDClient(url, "t", timeout=5) as client:
                with pytest.raises(DotBoxDError) as refused:
                    await client.subscribe()
                _assert_closed_refusal(refused.value)

        asyncio.run(scenario())
