"""Idle keep-alive connections give way to active ones at ``max_connections``.

Before: every open connection counted toward the cap, so clients whose pools kept a connection open
between requests (keep-alive, up to 5 s) locked every active client out with 503 ``E-SERVER-BUSY``.
The rule now: a request that finds the cap reached closes connections idle between requests (their
last answer complete, no byte of a next one), longest idle first, as many as it needs; a connection
in the middle of a request, or that has sent none of its first one, still counts. Real sockets on
loopback; every wait is bounded and short.
"""

from __future__ import annotations

import socket
import time

import httpx

from dotboxd.client import DotBoxDClient
from tests.server.helpers import ALICE, auth, running_server

HEALTH = b"GET /health HTTP/1.1\r\nHost: loopback\r\n\r\n"


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _kept_alive(url: str) -> socket.socket:
    """A connection that made one request, read its whole answer and stays open (keep-alive)."""
    sock = socket.create_connection(_address(url), timeout=5)
    sock.sendall(HEALTH)
    answer = b""
    while not answer.endswith(b'{"status":"ok"}'):
        chunk = sock.recv(4096)
        assert chunk, "the server closed a fresh keep-alive connection"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200")
    return sock


def _closed_by_server(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closed ``sock`` (EOF or reset) within ``seconds``."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_a_request_at_the_cap_closes_the_longest_idle_keep_alive_connection() -> None:
    with running_server(max_connections=3, header_timeout_seconds=30) as (server, _):
        oldest = _kept_alive(server.url)
        time.sleep(0.01)  # idle since strictly later
        newer = _kept_alive(server.url)
        try:
            answer = httpx.get(server.url + "/v1/extensions", headers=auth())
            assert answer.status_code == 200, answer.text  # before: 503 E-SERVER-BUSY
            assert _closed_by_server(oldest, 2.0), "the longest idle connection made room"
            assert not _closed_by_server(newer, 0.2), "only as many as needed are closed"
        finally:
            oldest.close()
            newer.close()


def test_connections_in_the_middle_of_a_request_still_count() -> None:
    with running_server(max_connections=3, header_timeout_seconds=30) as (server, _):
        partial = [socket.create_connection(_address(server.url), timeout=5) for _ in range(2)]
        try:
            for sock in partial:
                sock.sendall(b"GET /health HTTP/1.1\r\n")  # headers not finished: not idle
            busy = httpx.get(server.url + "/v1/extensions", headers=auth())
            assert busy.status_code == 503
            assert busy.json()["diagnostics"][0]["code"] == "E-SERVER-BUSY"
            assert not any(_closed_by_server(sock, 0.1) for sock in partial)
        finally:
            for sock in partial:
                sock.close()


def test_pooled_clients_take_turns_instead_of_locking_each_other_out() -> None:
    """Two clients whose pools keep their connection open, at a cap of two: each request reclaims
    the other's idle connection, and the client whose connection was closed reconnects on its own."""
    with (
        running_server(max_connections=2, header_timeout_seconds=30) as (server, _),
        DotBoxDClient(server.url, ALICE) as first,
        DotBoxDClient(server.url, ALICE) as second,
    ):
        for _ in range(20):  # alternating: every request finds the other's connection idle
            assert first.health() and second.health()
        for _ in range(5):
            assert first.rpc("game.world.spawn", [1, 5]) and second.rpc("game.world.spawn", [1, 5])
