"""Every route refuses a query parameter it does not take, and the client never sends one.

Before: only ``DELETE /v1/plugins/{id}`` looked at its query; every other route ignored what it was
given (``?dry_run=1`` on an install installed, a typo'd parameter did nothing and said nothing).
Now each route names the parameters it takes (none but that route's ``session``), and anything else
- on the open routes, the ``/v1`` routes and the event WebSocket's handshake - is a 400
``E-SERVER-REQUEST`` at pointer ``/query/<name>`` whose hint names the allowed ones, after the
token check, before anything is read or done. The routes are enumerated from the app itself, so a
new route is covered without editing this file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client
from starlette.routing import Route

from dotboxd.client import DotBoxDClient
from dotboxd.server import ServerThread
from tests.server.events_helpers import envelope, event_server
from tests.server.helpers import ALICE, SPIN, auth


def _routes(server: ServerThread) -> list[Any]:
    app: Any = server._server.config.app
    return list(app.routes)


def _calls(server: ServerThread) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """Every (method, concrete path, query parameters it takes) the app serves over HTTP."""
    for route in _routes(server):
        if isinstance(route, Route):
            path = re.sub(r"\{[^}]+\}", "x1", route.path)
            taken = tuple(getattr(route.endpoint, "query_parameters", ()))
            for method in sorted(route.methods or ()):
                if method != "HEAD":
                    yield method, path, taken


def _assert_query_refusal(answer: httpx.Response, name: str, allowed: tuple[str, ...]) -> None:
    assert answer.status_code == 400, (answer.request.method, answer.request.url, answer.text)
    diagnostic = answer.json()["diagnostics"][0]
    assert diagnostic["code"] == "E-SERVER-REQUEST"
    assert diagnostic["pointer"] == f"/query/{name}"
    expected = f"allowed: {', '.join(allowed)}" if allowed else "this route takes no query parameters"
    assert expected in diagnostic["hint"]


def test_every_route_refuses_an_unknown_query_parameter_after_the_token_check() -> None:
    with event_server() as (server, state, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        calls = list(_calls(server))
        assert len(calls) >= 11 and any(taken for *_, taken in calls)
        for method, path, taken in calls:
            answer = http.request(method, path, params={"dry_run": "1"}, json={})
            _assert_query_refusal(answer, "dry_run", taken)
            if path.startswith("/v1"):
                anonymous = httpx.request(method, server.url + path, params={"dry_run": "1"})
                assert anonymous.status_code == 401 and anonymous.content == b""
        assert not any(t.extensions for t in state.tenants.values())


def test_a_refused_query_acts_on_nothing() -> None:
    with event_server() as (server, state, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        refused = http.post("/v1/extensions", params={"kernel": "x"}, json={"kernel": SPIN})
        assert refused.status_code == 400
        assert http.get("/v1/extensions").json()["extensions"] == []
        installed = http.post("/v1/extensions", json={"kernel": SPIN}).json()["id"]
        invoke = f"/v1/extensions/{installed}/invoke"
        assert http.post(invoke, params={"backend": "optimized"}, json={"args": [3]}).status_code == 400
        assert http.delete(f"/v1/extensions/{installed}", params={"force": ""}).status_code == 400
        assert [e["id"] for e in http.get("/v1/extensions").json()["extensions"]] == [installed]
        audit = state.audit.recent()[-1]
        assert audit["action"] == "refused" and audit["outcome"] == "E-SERVER-REQUEST"


def test_an_allowed_parameter_given_twice_and_a_huge_name_are_refused_clipped() -> None:
    with event_server() as (server, _, _), httpx.Client(base_url=server.url, headers=auth()) as http:
        twice = http.delete("/v1/plugins/p", params=[("session", "a"), ("session", "b")])
        _assert_query_refusal(twice, "session", ("session",))
        name = "\u202e" + "n" * 20_000
        huge = http.get("/health", params={name: "1"})
        assert huge.status_code == 400 and len(huge.content) < 1_000
        diagnostic = huge.json()["diagnostics"][0]
        assert "\u202e" not in huge.text and "\\u202e" in diagnostic["message"]


def test_the_event_websocket_refuses_an_unknown_query_parameter() -> None:
    with event_server() as (server, _, _):
        url = server.url.replace("http", "ws") + "/v1/events?session=mine"
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            websockets.sync.client.connect(url, additional_headers=auth(), open_timeout=5)
        response = refused.value.response
        assert response.status_code == 400 and b"/query/session" in bytes(response.body or b"")
        with pytest.raises(websockets.exceptions.InvalidStatus) as anonymous:
            websockets.sync.client.connect(url, open_timeout=5)
        assert anonymous.value.response.status_code == 401


def test_the_client_sends_only_query_parameters_the_server_takes() -> None:
    """Every call of ``DotBoxDClient`` against a live server, each request's query checked against
    the route it reached."""
    sent: list[httpx.Request] = []
    with event_server() as (server, _, _), DotBoxDClient(server.url, ALICE) as client:
        client._http.event_hooks["request"].append(sent.append)
        taken = {(method, path): t for method, path, t in _calls(server)}
        assert client.health()
        client.rpc("test.tick", [0, 1])
        installed = client.install(SPIN)
        client.invoke(installed.id, [2])
        client.uninstall(installed.id)
        with client.subscribe() as events:
            client.install_plugin(events.session, envelope())
            client.update_settings(events.session, "ticks", {"limit": 5})
            client.uninstall_plugin(events.session, "ticks")
        assert len(sent) == 8
        for request in sent:
            path = re.sub(r"^/v1/(extensions|plugins)/[^/]+", r"/v1/\1/x1", request.url.path)
            path = re.sub(r"^/v1/rpc/.+", "/v1/rpc/x1", path)
            assert set(request.url.params) <= set(taken[(request.method, path)]), request.url
