"""A server the client cannot talk to is an ``E-SERVER-UNREACHABLE`` DotBoxDError, never raw httpx.

Refused connections, a server that resets the connection after reading the request, a URL scheme
httpx does not speak and an event stream that cannot open each end as one DotBoxD error with a
stable code, a message naming the URL and a hint, the transport's own exception kept as
``__cause__`` (sync and asyncio clients alike). The timeout case is in
``test_client_hostile_server.py`` (a server that never answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from dotboxd.client import AsyncDotBoxDClient, DotBoxDClient
from dotboxd.core.diagnostics import DotBoxDError


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _resetting_server(connections: int) -> Iterator[str]:
    """A loopback listener that reads each request's first bytes and resets the connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve() -> None:
        with contextlib.suppress(OSError):
            for _ in range(connections):
                conn, _ = listener.accept()
                conn.recv(1024)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        thread.join(timeout=10)


def _assert_unreachable(error: DotBoxDError, url: str) -> None:
    assert error.code == "E-SERVER-UNREACHABLE" and error.diagnostic.category == "HostFailure"
    assert url in error.diagnostic.message and error.diagnostic.hint
    assert isinstance(error.__cause__, (httpx.TransportError, OSError))
    assert error.diagnostic.evidence["transport"] == type(error.__cause__).__name__


SYNC_CALLS: dict[str, Callable[[DotBoxDClient], Any]] = {
    "health": lambda c: c.health(),
    "rpc": lambda c: c.rpc("m", [1]),
    "install": lambda c: c.install("module"),
    "invoke": lambda c: c.invoke("e1", [1]),
    "uninstall": lambda c: c.uninstall("e1"),
    "subscribe": lambda c: c.subscribe(),
}
ASYNC_CALLS: dict[str, Callable[[AsyncDotBoxDClient], Awaitable[Any]]] = {
    "health": lambda c: c.health(),
    "rpc": lambda c: c.rpc("m", [1]),
    "invoke": lambda c: c.invoke("e1", [1]),
    "subscribe": lambda c: c.subscribe(),
}


def test_a_refused_connection_is_a_dotboxd_error_for_every_call_sync_and_async() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    with DotBoxDClient(url, "token", timeout=2) as client:
        for name, call in SYNC_CALLS.items():
            with pytest.raises(DotBoxDError) as error:
                call(client)
            _assert_unreachable(error.value, url)
            assert "connection failed" in error.value.diagnostic.message, name

    async def each() -> list[DotBoxDError]:
        found = []
        async with AsyncDotBoxDClient(url, "token", timeout=2) as client:
            for call in ASYNC_CALLS.values():
                try:
                    await call(client)
                except DotBoxDError as error:
                    found.append(error)
        return found

    errors = asyncio.run(each())
    assert len(errors) == len(ASYNC_CALLS)
    for error in errors:
        _assert_unreachable(error, url)


def test_a_server_that_resets_the_connection_is_a_dotboxd_error_sync_and_async() -> None:
    with _resetting_server(connections=2) as url:
        with DotBoxDClient(url, "token", timeout=5) as client, pytest.raises(DotBoxDError) as error:
            client.rpc("m", [1])
        _assert_unreachable(error.value, url)

        async def reset() -> None:
            async with AsyncDotBoxDClient(url, "token", timeout=5) as client:
                await client.invoke("e1", [1])

        with pytest.raises(DotBoxDError) as async_error:
            asyncio.run(reset())
        _assert_unreachable(async_error.value, url)


def test_a_url_the_client_cannot_speak_is_a_dotboxd_error() -> None:
    url = "ftp://127.0.0.1:21"
    with DotBoxDClient(url, "token", timeout=2) as client, pytest.raises(DotBoxDError) as error:
        client.rpc("m", [1])
    _assert_unreachable(error.value, url)
    assert isinstance(error.value.__cause__, httpx.UnsupportedProtocol)
