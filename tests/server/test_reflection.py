"""Error answers never reflect client input verbatim: clipped, invisible characters escaped.

Before: a 404 answered ``"GET <the whole path>: HTTP 404"`` - every byte a client put into the path,
a bidi override or a terminal escape included, up to the 64 KiB header limit; so did a 405, an
unknown extension, RPC method or plugin id, and an unknown body member (twice: message and pointer).
Each now quotes at most 64 characters of it, made visible (``core.visible.clipped``); the parser's
400 quotes nothing; the audit ring keeps a clipped, escaped target.
"""

from __future__ import annotations

import json
import socket

import httpx

from dotboxd.core.visible import CLIP
from tests.server.events_helpers import open_session
from tests.server.helpers import SPIN, auth, running_server

BIDI = "\u202e"
ESCAPE = "\x1b[2J"
LONG = "Z" * 5_000
HOSTILE = f"{BIDI}{ESCAPE}{LONG}"
IN_PATH = f"{BIDI}%1B%5B2J{LONG}"
"""``HOSTILE`` as a path segment (httpx refuses a raw control character; the server decodes it)."""


def _assert_not_reflected(answer: httpx.Response, status: int) -> dict[str, object]:
    assert answer.status_code == status, answer.text[:200]
    text = answer.text
    assert BIDI not in text and "\x1b" not in text, "invisible characters reach the answer as sent"
    assert "Z" * (CLIP + 1) not in text, "more than the clip of the client's text"
    assert len(answer.content) < 2_000
    diagnostic: dict[str, object] = answer.json()["diagnostics"][0]
    return diagnostic


def test_404_and_405_quote_the_path_clipped_and_escaped() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        missing = _assert_not_reflected(http.get(f"/v1/no-such-route/{IN_PATH}"), 404)
        assert missing["code"] == "E-SERVER-NOT-FOUND" and "\\u202e" in str(missing["message"])
        assert "openapi.json" in str(missing["hint"])
        wrong_method = _assert_not_reflected(http.put(f"/v1/extensions/{IN_PATH}"), 405)
        assert wrong_method["hint"] == "allowed: DELETE"
        open_route = _assert_not_reflected(httpx.get(f"{server.url}/{IN_PATH}"), 404)
        assert open_route["code"] == "E-SERVER-NOT-FOUND"


def test_unknown_ids_names_and_members_are_quoted_clipped() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        extension = _assert_not_reflected(http.delete(f"/v1/extensions/{IN_PATH}"), 404)
        assert extension["code"] == "E-SERVER-NOT-FOUND"
        invoke = http.post(f"/v1/extensions/{IN_PATH}/invoke", json={"args": []})
        _assert_not_reflected(invoke, 404)
        _assert_not_reflected(http.post(f"/v1/rpc/{IN_PATH}", json={"args": []}), 404)
        member = _assert_not_reflected(http.post("/v1/extensions", json={HOSTILE: 1}), 400)
        assert str(member["pointer"]).startswith("/\\u202e\\u001b") and str(member["pointer"]).endswith("...")
        media = http.post("/v1/extensions", content=b"{}", headers={"Content-Type": "text/" + LONG})
        _assert_not_reflected(media, 415)


def test_an_unknown_entrypoint_is_quoted_clipped_in_the_run_result() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        extension = http.post("/v1/extensions", json={"kernel": SPIN}).json()["id"]
        for backend in ("reference", "optimized"):
            answer = http.post(
                f"/v1/extensions/{extension}/invoke",
                json={"entrypoint": HOSTILE, "args": [1], "backend": backend},
            )
            assert answer.status_code == 200 and answer.json()["code"] == "R-ENTRY-UNKNOWN"
            text = answer.text
            assert BIDI not in text and "Z" * (CLIP + 1) not in text and "\\u202e" in text


def test_an_unknown_plugin_is_quoted_clipped() -> None:
    with open_session() as (_, _, _, events, http):
        answer = http.delete(f"/v1/plugins/{IN_PATH}", params={"session": events.session})
        diagnostic = _assert_not_reflected(answer, 404)
        assert diagnostic["code"] == "E-EVENT-NOT-INSTALLED"
        assert len(json.dumps(diagnostic["evidence"])) < 200


def test_the_parser_400_quotes_nothing_of_the_request() -> None:
    with running_server() as (server, _):
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as raw:
            raw.sendall(f"GET /{LONG} HTTP/1.1\r\nHost: x\r\nContent-Length: -{LONG[:50]}\r\n\r\n".encode())
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400") and b"E-SERVER-REQUEST" in answer
        assert b"ZZZZ" not in answer


def test_the_audit_ring_keeps_a_clipped_escaped_target() -> None:
    with running_server() as (server, state):
        assert httpx.get(f"{server.url}/v1/extensions/{IN_PATH}").status_code == 401  # no token
        target = str(state.audit.recent()[-1]["target"])
        assert BIDI not in target and "\x1b" not in target and "\\u202e" in target
        assert len(target) < 400
