"""Event kernels over the network: sessions, delivery, live settings, unload on disconnect, slow readers."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import websockets.sync.client

from dotboxd.client import AsyncDotBoxDClient, DotBoxDClient, ServerAuthError
from dotboxd.core.diagnostics import DotBoxDError
from tests.server.events_helpers import envelope, event_server
from tests.server.helpers import ALICE, BOB, auth


def _eventually(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    """Poll ``condition`` until it holds: generous, because a loaded CI machine can take seconds to
    run the server's loop, and a passing condition returns at once."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_events_socket_without_a_valid_token_is_refused_401() -> None:
    with (
        event_server() as (server, _, _hub),
        DotBoxDClient(server.url, "nope") as client,
        pytest.raises(ServerAuthError),
    ):
        client.subscribe()


def test_filtered_events_are_delivered_exactly_once_and_settings_apply_live() -> None:
    with event_server() as (server, _, hub), DotBoxDClient(server.url, ALICE) as client:
        with client.subscribe() as events:
            receipt = client.install_plugin(events.session, envelope(threshold=5))
            assert receipt["pluginId"] == "ticks" and receipt["settings"] == {"limit": 5}
            client.rpc("test.tick", [0, 10])  # ticks 0..9: the filter passes 0..4 only
            got = [events.receive(timeout=60)["text"] for _ in range(5)]
            assert got == [f"tick {n}" for n in range(5)]
            with pytest.raises(TimeoutError):
                events.receive(timeout=0.3)  # nothing that failed the filter, nothing twice
            assert client.update_settings(events.session, "ticks", {"limit": 100}) == {"limit": 100}
            client.rpc("test.tick", [50, 3])
            assert [events.receive(timeout=60)["text"] for _ in range(3)] == ["tick 50", "tick 51", "tick 52"]
            with pytest.raises(DotBoxDError) as bad:
                client.update_settings(events.session, "ticks", {"limit": -1})
            assert bad.value.code == "E-EVENT-SETTING"
            owner = f"alice/{events.session}"
            assert hub.installed(owner) == [(owner, "ticks")]
        # the socket closed: the session's kernels are unloaded
        assert _eventually(lambda: hub.installed() == [])


def test_envelope_refusals_carry_the_hubs_diagnostics() -> None:
    with (
        event_server() as (server, _, _hub),
        DotBoxDClient(server.url, ALICE) as client,
        client.subscribe() as events,
    ):
        impure = envelope()
        impure["module"] = impure["module"].replace("return e_n < limit;", 'return host.message.send("x");')
        with pytest.raises(DotBoxDError) as refused:
            client.install_plugin(events.session, impure)
        assert refused.value.code == "E-EVENT-FILTER-IMPURE"


def test_a_session_is_usable_only_by_its_own_tenant() -> None:
    with (
        event_server() as (server, _, hub),
        DotBoxDClient(server.url, ALICE) as alice,
        alice.subscribe() as events,
    ):
        response = httpx.post(
            server.url + "/v1/plugins",
            headers=auth(BOB),
            json={"session": events.session, "envelope": envelope()},
        )
        assert (
            response.status_code == 404 and response.json()["diagnostics"][0]["code"] == "E-SERVER-NOT-FOUND"
        )
        missing = httpx.post(
            server.url + "/v1/plugins", headers=auth(), json={"session": "x", "envelope": envelope()}
        )
        assert missing.status_code == 404
        assert hub.installed() == []


def test_a_client_that_never_reads_is_disconnected_and_others_are_unaffected() -> None:
    """The send deadline is 3 s, not shorter: the server applies it to every session, and under a
    load average of 20 the reading client (a thread of this process, sharing the GIL with the
    server) fell behind: at 0.5 s its receive timed out once, most likely because it was cut off
    as a slow reader too."""
    with (
        event_server(ws_queue_size=8, ws_send_timeout_seconds=3.0) as (server, state, hub),
        DotBoxDClient(server.url, ALICE) as alice,
    ):
        # the slow client: a tiny receive buffer and a websockets client whose queue fills at once
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((server.host, server.port))
        slow = websockets.sync.client.connect(  # never read after the session frame
            f"ws://{server.host}:{server.port}/v1/events",
            sock=sock,
            additional_headers=auth(BOB),
            max_queue=1,
            compression=None,
            legacy=True,
        )
        slow_session = json.loads(slow.recv(timeout=60))["session"]
        with httpx.Client(base_url=server.url, headers=auth(BOB)) as bob:
            assert (
                bob.post(
                    "/v1/plugins", json={"session": slow_session, "envelope": envelope(text="x" * 3000)}
                ).status_code
                == 201
            )
        with alice.subscribe() as events:
            alice.install_plugin(events.session, envelope())
            total = 300
            received: list[str] = []
            for start in range(0, total, 50):  # alice reads as events arrive; bob never does
                alice.rpc("test.tick", [start, 50])
                received.extend(events.receive(timeout=60)["text"] for _ in range(50))  # generous: load
            assert received == [f"tick {n}" for n in range(total)]
            bob_owner = f"bob/{slow_session}"

            def bob_closes() -> list[dict[str, Any]]:
                recent = state.audit.recent()
                return [e for e in recent if e["action"] == "session-close" and e["tenant"] == "bob"]

            # the server audits a close after unloading its owner: wait for both, then assert both
            assert _eventually(lambda: hub.installed(bob_owner) == [] and bool(bob_closes()))
            closes = bob_closes()
            assert closes and closes[-1]["outcome"] == "overflow"
            assert hub.installed(f"alice/{events.session}") != []
        slow.close_socket()


def test_async_client_subscribes_installs_and_receives() -> None:
    async def scenario(url: str) -> list[str]:
        async with AsyncDotBoxDClient(url, ALICE) as client:
            events = await client.subscribe()
            async with events:
                await client.install_plugin(events.session, envelope(threshold=2))
                await client.rpc("test.tick", [0, 4])
                got = [(await events.receive(timeout=60))["text"] for _ in range(2)]
                assert await client.update_settings(events.session, "ticks", {"limit": 0}) == {"limit": 0}
                await client.uninstall_plugin(events.session, "ticks")
                return got

    with event_server() as (server, _, hub):
        assert asyncio.run(scenario(server.url)) == ["tick 0", "tick 1"]
        assert hub.installed() == []


def test_openapi_lists_the_event_routes_too() -> None:
    with event_server() as (server, _, _hub):
        paths = httpx.get(server.url + "/openapi.json").json()["paths"]
    assert {"/v1/events", "/v1/plugins", "/v1/plugins/{id}/settings", "/v1/plugins/{id}"} <= set(paths)
    assert "patch" in paths["/v1/plugins/{id}/settings"] and "delete" in paths["/v1/plugins/{id}"]
