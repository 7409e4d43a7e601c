"""The HTTP boundary against hostile clients: auth, malformed/oversized/deep bodies, slow clients."""

from __future__ import annotations

import dataclasses
import logging
import socket
import time

import httpx
import pytest

from dotboxd.server import ServerState, build_app, token_hash
from dotboxd.server.app import ServerApp
from tests.server.helpers import ALICE, BOB, auth, running_server


def _raw(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def test_health_needs_no_auth_and_openapi_lists_every_route() -> None:
    with running_server() as (server, state):
        assert httpx.get(server.url + "/health").json() == {"status": "ok"}
        doc = httpx.get(server.url + "/openapi.json").json()
        app = ServerApp(state)
        for route in app.routes:
            for method in route.methods or ():  # type: ignore[attr-defined]
                if method != "HEAD":
                    assert method.lower() in doc["paths"][route.path], (method, route.path)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "header",
    [None, "Bearer nope", "Basic " + ALICE, "Bearer", f"Bearer {ALICE}x", f"bearer  {BOB[:-1]}"],
)
def test_missing_or_unknown_token_gets_401_and_nothing_else(header: str | None) -> None:
    with running_server() as (server, _):
        headers = {} if header is None else {"Authorization": header}
        for method, path in [
            ("POST", "/v1/rpc/game.world.spawn"),
            ("GET", "/v1/extensions"),
            ("POST", "/v1/extensions"),
        ]:
            response = httpx.request(method, server.url + path, headers=headers, json={"args": [1, 1]})
            assert response.status_code == 401 and response.content == b""
        # an unknown method is not revealed to an unauthenticated caller either
        response = httpx.post(server.url + "/v1/rpc/no.such.method", headers=headers, json={})
        assert response.status_code == 401 and response.content == b""


def test_token_never_reaches_the_audit_log_or_logging(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with running_server() as (server, state):
        httpx.post(server.url + "/v1/rpc/game.world.spawn", headers=auth(), json={"args": [1, 1]})
        httpx.post(server.url + "/v1/rpc/game.world.spawn", headers=auth("wrong-" + ALICE), json={})
        httpx.post(server.url + "/v1/extensions", headers=auth(BOB), json={"kernel": "nonsense"})
        events = state.audit.recent()
    assert {e["action"] for e in events} >= {"rpc", "auth-failed", "install"}
    text = repr(events) + caplog.text
    assert ALICE not in text and BOB not in text


def test_malformed_json_body_is_a_diagnostic_with_line_and_column() -> None:
    with running_server() as (server, _):
        response = httpx.post(
            server.url + "/v1/rpc/game.world.spawn",
            headers={**auth(), "Content-Type": "application/json"},
            content=b'{"args": [1,\n 2,]}',
        )
    assert response.status_code == 400
    diagnostic = response.json()["diagnostics"][0]
    assert (
        diagnostic["code"] == "E-JSON-INVALID"
        and diagnostic["line"] == 2
        and diagnostic["column"] is not None
    )


def test_deeply_nested_body_is_refused_without_recursion() -> None:
    with running_server() as (server, _):
        body = b'{"args": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        headers = {**auth(), "Content-Type": "application/json"}
        response = httpx.post(server.url + "/v1/rpc/game.world.spawn", headers=headers, content=body)
        assert response.status_code == 400
        assert response.json()["diagnostics"][0]["code"] == "E-JSON-LIMIT"
        assert httpx.get(server.url + "/health").status_code == 200


def test_oversized_body_is_refused_413_declared_or_streamed() -> None:
    with running_server(max_body_bytes=4096) as (server, _):
        big = b'{"kernel": "' + b"x" * 10_000 + b'"}'
        response = httpx.post(server.url + "/v1/extensions", headers=auth(), content=big)
        assert response.status_code == 413
        assert response.json()["diagnostics"][0]["code"] == "E-SERVER-REQUEST"

        def chunks():  # no Content-Length: chunked transfer, counted as it arrives
            for _ in range(100):
                yield b"x" * 1000

        response = httpx.post(server.url + "/v1/extensions", headers=auth(), content=chunks())
        assert response.status_code == 413


def test_wrong_shapes_are_request_diagnostics_with_pointers() -> None:
    with running_server() as (server, _):
        url = server.url + "/v1/extensions"
        assert (
            httpx.post(url, headers=auth(), json=[1]).json()["diagnostics"][0]["code"] == "E-SERVER-REQUEST"
        )
        bad = httpx.post(url, headers=auth(), json={"kernel": "x", "extra": 1}).json()["diagnostics"][0]
        assert bad["pointer"] == "/extra"
        missing = httpx.get(server.url + "/v1/nowhere", headers=auth())
        assert missing.status_code == 404 and missing.json()["diagnostics"][0]["code"] == "E-SERVER-NOT-FOUND"


def _whole_reply(sock: socket.socket) -> bytes:
    """The server's reply, its body included: the status line and headers may arrive in one packet
    and the body in the next (seen on a loaded machine), so read until ``Content-Length`` bytes of
    body are in or the server closes (bounded by the socket's timeout)."""
    reply = b""
    while True:
        head, _, body = reply.partition(b"\r\n\r\n")
        if _:
            lengths = [
                line.split(b":", 1)[1]
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ]
            if lengths and len(body) >= int(lengths[0]):
                return reply
        chunk = sock.recv(4096)
        if not chunk:
            return reply
        reply += chunk


def test_slowloris_body_trickle_is_cut_at_the_body_deadline_and_others_are_served() -> None:
    with running_server(body_timeout_seconds=0.5) as (server, _):
        sock = socket.create_connection(_raw(server.url))
        sock.sendall(
            b"POST /v1/rpc/game.world.spawn HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + ALICE.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        )
        started = time.monotonic()
        sock.settimeout(30)  # without the body deadline the server would wait for the body forever
        for _ in range(3):  # trickle a byte now and then
            assert httpx.get(server.url + "/health").status_code == 200
            sock.sendall(b" ")
            time.sleep(0.1)
        reply = _whole_reply(sock)
        assert b"408" in reply.split(b"\r\n", 1)[0] and b"E-SERVER-REQUEST" in reply
        assert time.monotonic() - started < 20  # the 0.5 s deadline, with room for a loaded machine
        sock.close()


def test_slowloris_header_trickle_is_disconnected_at_the_header_deadline() -> None:
    with running_server(header_timeout_seconds=0.5) as (server, _):
        sock = socket.create_connection(_raw(server.url))
        started = time.monotonic()
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        closed = False
        # a header line every 0.1 s, for up to 20 s: without the deadline nothing would ever close it
        while not closed and time.monotonic() - started < 20:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                closed = True
                break
            try:
                sock.settimeout(0.1)
                if sock.recv(1024) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
        assert closed
        assert httpx.get(server.url + "/health").status_code == 200
        sock.close()


def test_idle_connection_without_any_bytes_is_closed_at_the_header_deadline() -> None:
    with running_server(header_timeout_seconds=0.3) as (server, _):
        sock = socket.create_connection(_raw(server.url))
        sock.settimeout(30)
        started = time.monotonic()
        assert sock.recv(16) == b""
        # closed by the 0.3 s header deadline, not by uvicorn's 5 s keep-alive timeout (the margin
        # below the 5 s is what a loaded machine gets)
        assert time.monotonic() - started < 4.5
        sock.close()


def test_state_builds_without_network() -> None:
    # the app object itself is an ASGI callable (embedding hosts mount it in their own server)
    with running_server() as (_, state):
        assert callable(build_app(ServerState(state.config)))


def test_listening_socket_is_declared_tcp_so_asyncio_turns_nagle_off() -> None:
    # with proto 0 asyncio leaves Nagle on and every response waited ~40 ms for a delayed ACK
    with running_server() as (server, _):
        assert server._socket.proto == socket.IPPROTO_TCP


def test_an_empty_bearer_token_never_authenticates_even_if_configured() -> None:
    with running_server() as (server, state):
        empty_hash = token_hash("")
        alice = state.tenants["alice"]
        alice.config = dataclasses.replace(alice.config, token_sha256=empty_hash)
        response = httpx.get(server.url + "/v1/extensions", headers={"Authorization": "Bearer"})
        assert response.status_code == 401 and response.content == b""
        app = ServerApp(state)
        assert app.tenant_of("Bearer    ") is None and app.tenant_of("Bearer") is None
