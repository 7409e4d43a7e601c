"""Requests of the wrong kind and clients that push the server's edges (issue 16 review, server3).

Each must end as a DotBoxD diagnostic (stable code, message, hint) with the status its kind has, and
leave the server serving with bounded memory: a connection past ``max_connections`` (503
``E-SERVER-BUSY``), a body not declared as JSON (415), a method the route does not take (405 with
``Allow``; 401 first without a token), a repeated query parameter, megabyte-long entrypoint names,
a run id the client tries to choose, a client that leaves in the middle of its answer.
"""

from __future__ import annotations

import json
import re
import socket
import time

import httpx
import pytest

from dotboxd.client import DotBoxDClient
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.server.audit import MAX_TEXT
from tests.server.events_helpers import envelope, event_server, open_session
from tests.server.helpers import ALICE, SPIN, auth, running_server


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _eventually_ok(url: str, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if httpx.get(url + "/health").status_code == 200:
            return True
        time.sleep(0.05)
    return False


def test_past_the_connection_limit_the_503_is_a_dotboxd_diagnostic_with_retry_after() -> None:
    # uvicorn's own answer was a plain-text "Service Unavailable" the client could not read
    with running_server(max_connections=3, header_timeout_seconds=30) as (server, _):
        idle = [socket.create_connection(_address(server.url)) for _ in range(2)]
        try:
            busy = httpx.get(server.url + "/v1/extensions", headers=auth())
            assert busy.status_code == 503 and busy.headers["content-type"] == "application/json"
            assert busy.headers["retry-after"] == "1" and busy.headers["connection"] == "close"
            diagnostic = busy.json()["diagnostics"][0]
            assert diagnostic["code"] == "E-SERVER-BUSY" and diagnostic["category"] == "QuotaExceeded"
            assert "max_connections" in diagnostic["hint"]
            with DotBoxDClient(server.url, ALICE) as client, pytest.raises(DotBoxDError) as error:
                client.rpc("game.world.spawn", [1, 1])
            assert error.value.code == "E-SERVER-BUSY" and error.value.diagnostic.hint
        finally:
            for sock in idle:
                sock.close()
        assert _eventually_ok(server.url)  # the cap frees with the connections
        assert httpx.get(server.url + "/v1/extensions", headers=auth()).status_code == 200


def test_websocket_sessions_count_against_the_connection_limit_too() -> None:
    # uvicorn upgraded every handshake without looking at the cap: a tenant could open event
    # sessions without bound (with max_connections=3, ten opened and HTTP got 503)
    with (
        event_server(max_connections=3, header_timeout_seconds=30) as (server, _, hub),
        DotBoxDClient(server.url, ALICE) as client,
    ):
        first, second = client.subscribe(), client.subscribe()
        try:
            for _ in range(3):
                with pytest.raises(DotBoxDError) as error:
                    client.subscribe()
                assert error.value.code == "E-SERVER-BUSY" and error.value.diagnostic.hint
            assert hub.footprint()["owners"] <= 2
        finally:
            first.close()
            second.close()
        deadline = time.monotonic() + 20
        while server._server.server_state.connections and time.monotonic() < deadline:
            time.sleep(0.05)
        with client.subscribe() as again:
            assert again.session


def test_a_client_that_never_reads_its_answers_is_dropped_at_the_send_deadline() -> None:
    # uvicorn waited on the full send buffer forever: three such clients held three of the four
    # connection slots for good, and every other request got 503
    body = json.dumps({"args": [60_000, 1]}).encode()  # an answer of about 400 kB
    request = (
        f"POST /v1/rpc/game.world.spawn HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ALICE}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with running_server(max_connections=4, send_timeout_seconds=0.3, runs_per_second=100.0) as (server, _):
        readers = []
        for _ in range(3):
            sock = socket.create_connection(_address(server.url))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(request)
            readers.append(sock)
        try:
            assert _eventually_ok(server.url)  # within the deadline, with room for a loaded machine
            connections = server._server.server_state.connections
            deadline = time.monotonic() + 20
            while connections and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not connections  # all three were dropped, not only the first
            # what reached a reader ends short of the answer (the kernel still delivers what it had
            # queued, slowly, to the zero window: not read to the end here)
            readers[0].settimeout(0.5)
            assert len(readers[0].recv(1 << 20)) < 300_000
        finally:
            for sock in readers:
                sock.close()


JSON_TYPES = ("application/json", "application/json; charset=utf-8", "Application/JSON; Charset=UTF8")
NOT_JSON_TYPES = (
    "text/plain",
    "application/x-www-form-urlencoded",  # what `curl -d` sends
    "multipart/form-data; boundary=x",
    "application/json; charset=latin-1",
    "application/jsonx",
    "application/json, text/plain",
    "",
)


def test_a_body_not_declared_as_json_is_415_with_a_hint_on_every_body_route() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        extension = http.post("/v1/extensions", json={"kernel": SPIN}).json()["id"]
        bodies = {
            "/v1/rpc/game.world.spawn": {"args": [1, 1]},
            f"/v1/extensions/{extension}/invoke": {"args": [3]},
            "/v1/extensions": {"kernel": SPIN},
        }
        for route, body in bodies.items():
            data = json.dumps(body).encode()
            for declared in (*NOT_JSON_TYPES, None):
                headers = {} if declared is None else {"Content-Type": declared}
                refused = http.post(route, content=data, headers=headers)
                assert refused.status_code == 415, (route, declared)
                diagnostic = refused.json()["diagnostics"][0]
                assert diagnostic["code"] == "E-SERVER-REQUEST"
                assert "application/json" in diagnostic["message"] and "Content-Type" in diagnostic["hint"]
            for declared in JSON_TYPES:
                accepted = http.post(route, content=data, headers={"Content-Type": declared})
                assert accepted.status_code in (200, 201), (route, declared, accepted.text[:200])
        # an empty body needs no type: it reads as {} (here: the RPC's arity refusal, not a 415)
        empty = http.post("/v1/rpc/game.world.spawn", content=b"")
        assert empty.status_code == 400
        assert empty.json()["diagnostics"][0]["code"] == "E-SERVER-RPC-ARGS"


def test_a_method_the_route_does_not_take_is_405_with_allow_and_401_first_without_a_token() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url) as http:
        for method, path, allowed in (
            ("PUT", "/v1/extensions", "GET, HEAD, POST"),  # two routes share this path
            ("GET", "/v1/rpc/game.world.spawn", "POST"),
            ("OPTIONS", "/v1/extensions/e1/invoke", "POST"),
        ):
            refused = http.request(method, path, headers=auth())
            assert refused.status_code == 405 and refused.headers["allow"] == allowed, (method, path)
            diagnostic = refused.json()["diagnostics"][0]
            assert diagnostic["code"] == "E-SERVER-NOT-FOUND" and diagnostic["hint"] == f"allowed: {allowed}"
            # without a valid token every /v1 path answers the same bare 401, known or not
            for headers in ({}, auth("wrong")):
                anonymous = http.request(method, path, headers=headers)
                assert anonymous.status_code == 401 and anonymous.content == b""
        assert http.get("/v1/nowhere").status_code == 401
        assert http.get("/v1/nowhere", headers=auth()).status_code == 404
        health = http.post("/health")
        assert health.status_code == 405 and health.headers["allow"] == "GET, HEAD"


def test_a_repeated_or_unknown_query_parameter_is_refused_not_silently_taken() -> None:
    with open_session() as (_, hub, client, events, http):
        client.install_plugin(events.session, envelope())
        owner = f"alice/{events.session}"
        for params in (
            [("session", events.session), ("session", "other")],
            [("session", events.session), ("sesion", events.session)],
        ):
            refused = http.delete("/v1/plugins/ticks", params=params)
            assert refused.status_code == 400, params
            assert refused.json()["diagnostics"][0]["code"] == "E-SERVER-REQUEST"
            assert hub.installed(owner) == [(owner, "ticks")]  # nothing was unloaded
        assert http.delete("/v1/plugins/ticks", params={"session": events.session}).status_code == 200
        assert hub.installed(owner) == []


def test_megabyte_long_entrypoint_names_are_not_kept_by_the_host_or_the_audit_ring() -> None:
    # before: each unknown name was a dispatch record of the shared host (LRU of 1024) and a whole
    # audit event (ring of 1024), so a tenant could make the server hold gigabytes
    with (
        running_server(runs_per_second=1000.0) as (server, state),
        httpx.Client(base_url=server.url, headers=auth()) as http,
    ):
        extension = http.post("/v1/extensions", json={"kernel": SPIN}).json()["id"]
        assert http.post(f"/v1/extensions/{extension}/invoke", json={"args": [3]}).json()["value"] == 3
        kept = state.host.dispatch_records
        for index in range(5):
            name = f"{index}" + "m" * 300_000
            answer = http.post(f"/v1/extensions/{extension}/invoke", json={"entrypoint": name, "args": [1]})
            assert answer.status_code == 200 and answer.json()["code"] == "R-ENTRY-UNKNOWN"
        assert state.host.dispatch_records == kept
        invokes = [e for e in state.audit.recent() if e["action"] == "invoke"]
        assert len(invokes) == 6
        assert all(len(e["entrypoint"]) < MAX_TEXT + 32 for e in invokes)
        assert invokes[-1]["entrypoint"].startswith("4mmm") and "more)" in invokes[-1]["entrypoint"]
        assert http.post(f"/v1/extensions/{extension}/invoke", json={"args": [4]}).json()["value"] == 6


def test_a_client_cannot_choose_the_run_id_and_each_run_gets_a_fresh_one() -> None:
    with running_server() as (server, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        extension = http.post("/v1/extensions", json={"kernel": SPIN}).json()["id"]
        url = f"/v1/extensions/{extension}/invoke"
        for run_id in ("mine", "", 5, "a\nb", "x" * 10_000):
            refused = http.post(url, json={"args": [1], "runId": run_id})
            assert refused.status_code == 400
            assert refused.json()["diagnostics"][0]["pointer"] == "/runId"
        ids = [http.post(url, json={"args": [1]}).json()["runId"] for _ in range(2)]
        assert ids[0] != ids[1] and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


def test_a_client_that_leaves_in_the_middle_of_its_answer_leaves_the_server_serving() -> None:
    body = json.dumps({"args": [50_000, 1]}).encode()  # an answer of a few hundred KiB
    request = (
        f"POST /v1/rpc/game.world.spawn HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ALICE}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with running_server(runs_per_second=1000.0) as (server, state):
        for read_first in (True, True, False, False):
            sock = socket.create_connection(_address(server.url), timeout=30)
            sock.sendall(request)
            if read_first:  # leaves with a reset in the middle of the answer: the next write fails
                assert sock.recv(64).startswith(b"HTTP/1.1 200 ")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.close()  # else leaves before the answer (the whole request was sent: it is carried out)
        assert _eventually_ok(server.url)
        deadline = time.monotonic() + 20
        while sum(e["action"] == "rpc" for e in state.audit.recent()) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(e["action"] == "rpc" for e in state.audit.recent()) == 4  # each call ran once
        assert httpx.post(
            server.url + "/v1/rpc/game.world.getHealth", headers=auth(), json={"args": [0]}
        ).json() == {"value": 1}


def test_an_id_given_to_the_client_names_that_id_never_another_route() -> None:
    # the client put ids into the path as they were: httpx resolves "x/../E" to E and keeps "?",
    # so uninstall("x/../E") removed extension E, and an id from elsewhere could reach any route
    with running_server() as (server, state), DotBoxDClient(server.url, ALICE) as client:
        kept = client.install(SPIN).id
        for forged in (f"x/../{kept}", f"../extensions/{kept}", "..", ".", f"{kept}?a=1", f"{kept}#x"):
            with pytest.raises(DotBoxDError) as error:
                client.uninstall(forged)
            assert error.value.code == "E-SERVER-NOT-FOUND", forged  # no such id, or no route
            with pytest.raises(DotBoxDError) as invoke_error:
                client.invoke(forged, [1])
            assert invoke_error.value.code == "E-SERVER-NOT-FOUND", forged
        for forged in ("../extensions", "game.world.spawn/../../extensions", "game.world.spawn?x=1"):
            with pytest.raises(DotBoxDError) as rpc_error:
                client.rpc(forged, [1, 1])
            assert rpc_error.value.code == "E-SERVER-NOT-FOUND", forged
        assert list(state.tenants["alice"].extensions) == [kept]
        actions = {e["action"] for e in state.audit.recent()}
        assert "uninstall" not in actions and "rpc" not in actions and "invoke" not in actions
        assert client.invoke(kept, [3]).value == 3


def test_installs_spend_the_run_rate_so_a_refused_one_is_not_free_to_repeat() -> None:
    # validation runs on the run threads (seconds for a module at the import budgets) and a refused
    # install kept nothing, so a tenant could repeat refused installs without any bound
    with (
        event_server(runs_per_second=0.001) as (server, state, _),  # one token, refilled in 1000 s
        DotBoxDClient(server.url, ALICE) as client,
        client.subscribe() as events,
    ):
        with pytest.raises(DotBoxDError) as first:
            client.install("not a kernel")
        assert first.value.code == "E-TEXT-SYNTAX"  # validated: the token is spent
        for install in (lambda: client.install("not a kernel"), lambda: client.install(SPIN)):
            with pytest.raises(DotBoxDError) as refused:
                install()
            assert refused.value.code == "E-SERVER-QUOTA"
        with pytest.raises(DotBoxDError) as plugin:
            client.install_plugin(events.session, envelope())
        assert plugin.value.code == "E-SERVER-QUOTA"
        outcomes = [e["outcome"] for e in state.audit.recent() if e["action"] == "install"]
        assert outcomes == ["E-TEXT-SYNTAX", "E-SERVER-QUOTA", "E-SERVER-QUOTA"]


def test_rpc_args_json_cannot_carry_are_the_rpc_refusal_not_a_client_exception() -> None:
    # the client's own body encoding (see test_hostile_requests.REFUSED_INPUTS for invoke args)
    with running_server() as (server, _), DotBoxDClient(server.url, ALICE) as client:
        for args, pointer in (([float("nan"), 1], "/args/0"), ([1, {1}], "/args/1"), ([b"x", 1], "/args/0")):
            with pytest.raises(DotBoxDError) as rpc:
                client.rpc("game.world.spawn", args)
            assert (rpc.value.code, rpc.value.diagnostic.pointer) == ("E-SERVER-RPC-ARGS", pointer)
