"""Hostile request bodies against every body-reading route, and refused run inputs over HTTP.

Each malformed body must be a 4xx DotBoxD refusal (or, for run inputs, a failed run result) with a
stable code, never a 500; and a refused input must reach the client located exactly as an
in-process ``execute`` reports it: the same code, message, pointer into the args and hint.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from dotboxd.client import DotBoxDClient
from tests.server.events_helpers import open_session
from tests.server.helpers import ALICE, SPIN, auth, running_server

EVENT_KERNEL = """
module "located" version "1.0.0";

entrypoint fn main(scores Map<String, List<I32>>, scale F64) -> F64 {
    return scale;
}
"""

HOSTILE_BODIES: dict[str, bytes] = {
    "not UTF-8": b'{"args": ["\xff\xfe"]}',
    "a lone surrogate": b'{"args": ["\\ud800"]}',
    "UTF-16": '{"args": [1]}'.encode("utf-16"),
    "a byte-order mark": b'\xef\xbb\xbf{"args": [1]}',
    "truncated": b'{"args": [1',
    "whitespace only": b"   ",
    "a trailing NUL": b'{"args": [1]}\x00',
    "two documents": b'{"args": [1]}{"args": [1]}',
    "a duplicate key": b'{"args": [1], "args": [2]}',
    "NaN": b'{"args": [NaN]}',
    "an integer of 5000 digits": b'{"args": [' + b"9" * 5000 + b"]}",
    "10^5 nested arrays": b"[" * 100_000 + b"]" * 100_000,
    "10^5 nested args": b'{"args": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "10^5 nested objects": b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
    "null": b"null",
    "a string": b'"args"',
    "an array": b"[1]",
    "an unknown member": b'{"args": [1], "encoding": "json"}',
    "a form body": b"args=1",
}
ROUTES = ("/v1/extensions/{id}/invoke", "/v1/rpc/game.world.getHealth", "/v1/extensions")
JSON = {"Content-Type": "application/json"}
"""Declared as JSON, so each body reaches the JSON reader (untyped bodies are 415: test_content_type)."""


def test_every_hostile_body_on_every_route_is_a_4xx_diagnostic_and_the_server_keeps_serving() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        extension = http.post("/v1/extensions", json={"kernel": SPIN}).json()["id"]
        answered = 0
        for route in ROUTES:
            for name, body in HOSTILE_BODIES.items():
                response = http.post(route.format(id=extension), content=body, headers=JSON)
                diagnostics = response.json()["diagnostics"]
                assert 400 <= response.status_code < 500, (route, name, response.text[:200])
                assert diagnostics[0]["code"].startswith(("E-JSON-", "E-SERVER-")), (route, name)
                answered += 1
        assert answered == len(ROUTES) * len(HOSTILE_BODIES)
        assert http.post(f"/v1/extensions/{extension}/invoke", json={"args": [3]}).json()["value"] == 3


NOT_AN_ARRAY: tuple[object, ...] = (5, "ab", {"n": 1}, None, True, 1.5)
REFUSED_INPUTS: tuple[tuple[list[Any], str], ...] = (
    ([[["a", [1, "x"]]], 1.0], "/0/0/1/1"),
    ([[["a", [1]], ["a", [2]]], 1.0], "/0/1"),
    ([{"a": [1]}, 1.0], "/0"),
    ([[["a", [1]]], "1.0"], "/1"),
    # values JSON cannot carry: the client's own encoding sends them so that the server gives the
    # in-process answer (httpx's json= raised TypeError/ValueError in the client instead)
    ([[["a", [1]]], float("nan")], "/1"),
    ([[["a", [1]]], float("-inf")], "/1"),
    ([[["a", [1, {2}]]], 1.0], "/0/0/1/1"),
    ([[["a", [b"x"]]], 1.0], "/0/0/1/0"),
    ([[["a", [object()]]], 1.0], "/0/0/1/0"),
)


def test_args_that_are_not_an_array_are_the_same_arity_result_as_in_process() -> None:
    with running_server() as (server, state), DotBoxDClient(server.url, ALICE) as client:
        installed = client.install(SPIN)
        plan = state.tenants["alice"].extensions[installed.id].plan
        for args in NOT_AN_ARRAY:
            local = state.host.execute(plan, "main", args, encoding="json")
            assert local.error is not None and local.error.diagnostic is not None
            remote = client.invoke(installed.id, args)  # type: ignore[arg-type]  # what a caller may pass
            assert not remote.ok and remote.code == local.error.code == "R-ENTRY-ARITY", args
            assert remote.message == local.error.safe_message
            assert remote.hint == local.error.diagnostic.hint != ""
            assert remote.usage["fuelUsed"] == 0
        for unordered in ({1}, (n for n in [1])):  # not sent in some order: refused the same way
            result = client.invoke(installed.id, unordered)  # type: ignore[arg-type]
            assert not result.ok and result.code == "R-ENTRY-ARITY" and result.hint


def test_a_refused_input_reaches_the_http_client_located_with_its_hint() -> None:
    with running_server() as (server, state), DotBoxDClient(server.url, ALICE) as client:
        installed = client.install(EVENT_KERNEL)
        plan = state.tenants["alice"].extensions[installed.id].plan
        for args, pointer in REFUSED_INPUTS:
            local = state.host.execute(plan, "main", args, encoding="json")
            assert local.error is not None and local.error.diagnostic is not None
            assert local.error.diagnostic.pointer == pointer
            for backend in ("reference", "optimized"):
                remote = client.invoke(installed.id, args, backend=backend)
                assert (remote.code, remote.message) == (local.error.code, local.error.safe_message)
                assert (remote.pointer, remote.hint) == (pointer, local.error.diagnostic.hint)
                assert remote.code == "R-VALUE-TYPE" and remote.hint


def test_numbers_at_the_edges_are_values_or_located_refusals() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        extension = http.post("/v1/extensions", json={"kernel": EVENT_KERNEL}).json()["id"]
        url = f"/v1/extensions/{extension}/invoke"

        def run(scale: bytes) -> dict[str, Any]:
            response = http.post(url, content=b'{"args": [[["a", [1]]], ' + scale + b"]}", headers=JSON)
            assert response.status_code == 200
            answer: dict[str, Any] = response.json()
            return answer

        infinite = run(b"1e400")
        assert (infinite["code"], infinite["pointer"]) == ("R-VALUE-TYPE", "/1")
        assert "finite" in infinite["message"]
        assert str(run(b"-0.0")["value"]) == "-0.0"
        assert run(b"1e308")["value"] == 1e308


def _exchange(url: str, request: bytes, *, half_close: bool, wait: float = 5.0) -> bytes:
    """Send raw bytes (then ``shutdown(SHUT_WR)`` when ``half_close``) and read until the server
    closes; ``b""`` when it closes without a word."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(request)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
        return reply


def _post(path: str, body: bytes, declared: int | None = None) -> bytes:
    length = len(body) if declared is None else declared
    head = (
        f"POST {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ALICE}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
    return head.encode() + body


def test_a_client_that_half_closes_after_its_request_gets_the_answer_of_what_was_done() -> None:
    body = json.dumps({"kernel": SPIN}).encode()
    with running_server() as (server, state):
        reply = _exchange(server.url, _post("/v1/extensions", body), half_close=True)
        head, _, answer = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 201 ")
        assert list(state.tenants["alice"].extensions) == [json.loads(answer)["id"]]
        # half-closed inside the body: the request can never be whole, so nothing is installed
        assert _exchange(server.url, _post("/v1/extensions", body[:20], len(body)), half_close=True) == b""
        assert len(state.tenants["alice"].extensions) == 1


@pytest.mark.parametrize(
    "request_bytes",
    [
        _post("/v1/rpc/game.world.getHealth", b"{}", None).replace(
            b"Content-Length: 2", b"Content-Length: abc"
        ),
        _post("/v1/rpc/game.world.getHealth", b"{}", None).replace(
            b"Content-Length: 2", b"Content-Length: -2"
        ),
        _post("/v1/rpc/game.world.getHealth", b"{}", None).replace(
            b"Content-Length: 2", b"Content-Length: 2\r\nContent-Length: 3"
        ),
        b"GET /v1/rpc/\x00 HTTP/1.1\r\nHost: t\r\n\r\n",
    ],
    ids=["length not a number", "negative length", "two lengths", "NUL in the target"],
)
def test_a_request_the_http_parser_refuses_is_a_json_diagnostic(request_bytes: bytes) -> None:
    with running_server() as (server, _):
        head, _, body = _exchange(server.url, request_bytes, half_close=False).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ") and b"application/json" in head
        assert json.loads(body)["diagnostics"][0]["code"] == "E-SERVER-REQUEST"


def test_settings_of_a_plugin_the_session_lacks_is_404() -> None:
    with open_session() as (_, _, _, events, http):
        body = {"session": events.session, "values": {"limit": 1}}
        missing = http.patch("/v1/plugins/nope/settings", json=body)
        assert missing.status_code == 404
        assert missing.json()["diagnostics"][0]["code"] == "E-EVENT-NOT-INSTALLED"
