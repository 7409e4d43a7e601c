"""A tiny event-publishing host for the server's event tests: one event type, an RPC that fires it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from dotboxd.client import DotBoxDClient, EventStream
from dotboxd.events import EventContract, EventHub, EventType, MessageRouter
from dotboxd.host import Int32, SandboxHost
from dotboxd.server import ServerState, ServerThread, build_app, parse_config
from tests.server.helpers import ALICE, BOB, config_text

CONTRACT = EventContract.of("test.world", [EventType("tick", {"n": "I32"})])


def envelope(plugin_id: str = "ticks", text: str = "tick ", threshold: int = 1000) -> dict[str, Any]:
    """Delivers ticks with e_n below the live setting ``limit``; each message is ``text`` + n."""
    module = f"""module "{plugin_id}" version "1.0.0";
requires "host.message.write" reason "notify";
entrypoint fn shouldHandle(e_n I32, limit I32) -> Bool {{
    return e_n < limit;
}}
entrypoint fn handle(e_n I32, limit I32) -> Bool {{
    return host.message.send(string.concatBudgeted("{text}", int32.toStringInvariant(e_n)));
}}
"""
    return {
        "manifest": {
            "pluginId": plugin_id,
            "contract": "test.world",
            "liveSettings": [
                {"name": "limit", "type": "I32", "defaultValue": threshold, "min": 0, "max": 1_000_000}
            ],
            "subscriptions": [{"event": "tick", "kernel": plugin_id}],
        },
        "entrypoints": {"shouldHandle": "shouldHandle", "handle": "handle"},
        "module": module,
    }


MESSAGE_POLICY = '{ grants = [{ id = "host.message.write" }], limits = { maxFuel = 100000 } }'


@contextlib.contextmanager
def event_server(**limits: Any) -> Iterator[tuple[ServerThread, ServerState, EventHub]]:
    router = MessageRouter()
    host = SandboxHost(bindings=[router.binding])
    hub = EventHub(host, CONTRACT, router=router)

    def tick(first: Int32, count: Int32) -> Int32:
        for n in range(first, first + count):
            hub.publish("tick", {"n": n})
        return count

    text = (
        config_text(**limits)
        .replace("policy = { grants", "policy_unused = {")
        .replace('token_env = "T_ALICE"\n', f'token_env = "T_ALICE"\npolicy = {MESSAGE_POLICY}\n')
    )
    text = "\n".join(line for line in text.splitlines() if not line.startswith("policy_unused"))
    text = text.replace('token_env = "T_BOB"', f'token_env = "T_BOB"\npolicy = {MESSAGE_POLICY}')
    config = parse_config(text, Path("."), {"T_ALICE": ALICE, "T_BOB": BOB})
    state = ServerState(config, host=host, hub=hub, methods={"test.tick": tick})
    with ServerThread(build_app(state), config.limits) as server:
        yield server, state, hub


@contextlib.contextmanager
def open_session(
    **limits: Any,
) -> Iterator[tuple[ServerThread, EventHub, DotBoxDClient, EventStream, httpx.Client]]:
    """An event server with one open session of alice's: the server, its hub, her client, the
    session's stream and a raw HTTP client carrying her token."""
    with (
        event_server(**limits) as (server, _, hub),
        DotBoxDClient(server.url, ALICE) as client,
        client.subscribe() as events,
        httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {ALICE}"}) as http,
    ):
        yield server, hub, client, events, http
