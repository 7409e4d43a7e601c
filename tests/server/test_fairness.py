"""One tenant burning fuel over HTTP does not starve another tenant's requests (loopback, bounded).

The bound this file states and checks: while tenant ``alice`` floods the server from many
connections with runs that each burn their whole fuel budget, every request of tenant ``bob`` is
answered after at most ``run_threads + 1`` of alice's runs finish. That is the sum of the two
defences: alice's run-rate bucket refuses her excess at once (429, before it reaches the run pool),
so only the runs she was admitted can be ahead of bob in the pool's first-come queue.

The assertion counts alice's runs that overtake each of bob's requests (an ordering bound), never
an absolute latency, so a loaded machine slows both tenants alike and the bound still holds. The
same scenario with alice's rate limit lifted (the control test at the end) shows the count is what
starvation looks like: bob queues behind every flooding connection.
"""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from dotboxd.server import ServerState, ServerThread, build_app, parse_config
from tests.server.helpers import ALICE, BOB, SPIN, auth

RUN_THREADS = 2
FLOODERS = 10
"""alice's concurrent connections: well above ``RUN_THREADS + 1``, so an unlimited flood would queue
more of her runs ahead of bob than the bound allows."""
BOB_REQUESTS = 8
BURN = 10_000_000
"""alice's argument: far more iterations than her fuel allows, so every run burns all of it."""


def _config(alice_rate: float) -> str:
    return textwrap.dedent(
        f"""
        [limits]
        run_threads = {RUN_THREADS}
        max_connections = 200

        [tenants.alice]
        token_env = "T_ALICE"
        runs_per_second = {alice_rate}
        policy = {{ limits = {{ maxFuel = 60000, maxLoopIterations = 10000000, maxWallTimeMs = 20000 }} }}

        [tenants.bob]
        token_env = "T_BOB"
        runs_per_second = 1000.0
        """
    )


@contextmanager
def _server(alice_rate: float) -> Iterator[ServerThread]:
    config = parse_config(_config(alice_rate), Path("."), {"T_ALICE": ALICE, "T_BOB": BOB})
    with ServerThread(build_app(ServerState(config)), config.limits) as server:
        yield server


@dataclass
class Flood:
    """What alice's flooding connections saw: when each admitted run was answered, and the 429s."""

    finished: list[float] = field(default_factory=list)
    refused: int = 0
    outcomes: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _install(url: str, token: str) -> str:
    response = httpx.post(url + "/v1/extensions", headers=auth(token), json={"kernel": SPIN}, timeout=60)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _flood(url: str, eid: str, stop: threading.Event, flood: Flood) -> None:
    with httpx.Client(base_url=url, headers=auth(ALICE), timeout=120) as client:
        while not stop.is_set():
            response = client.post(f"/v1/extensions/{eid}/invoke", json={"args": [BURN]})
            with flood.lock:
                if response.status_code == 429:
                    flood.refused += 1
                else:
                    flood.finished.append(time.monotonic())
                    flood.outcomes.add(f"{response.status_code} {response.json().get('code')}")


def _overtaken(alice_rate: float, requests: int) -> tuple[list[int], Flood, list[int]]:
    """Runs the flood and bob's requests; returns, per bob request, how many of alice's runs were
    answered while it waited, alice's record, and bob's status codes."""
    with _server(alice_rate) as server:
        alice_eid, bob_eid = _install(server.url, ALICE), _install(server.url, BOB)
        stop, flood = threading.Event(), Flood()
        flooders = [
            threading.Thread(target=_flood, args=(server.url, alice_eid, stop, flood), daemon=True)
            for _ in range(FLOODERS)
        ]
        for thread in flooders:
            thread.start()
        windows: list[tuple[float, float]] = []
        codes: list[int] = []
        try:
            # wait until alice's runs really occupy the pool before bob starts asking
            deadline = time.monotonic() + 60
            while len(flood.finished) < RUN_THREADS and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(flood.finished) >= RUN_THREADS, "alice's flood never got a run answered"
            with httpx.Client(base_url=server.url, headers=auth(BOB), timeout=120) as bob:
                for _ in range(requests):
                    started = time.monotonic()
                    response = bob.post(f"/v1/extensions/{bob_eid}/invoke", json={"args": [10]})
                    windows.append((started, time.monotonic()))
                    codes.append(response.status_code)
                    assert response.json()["value"] == 45, response.text
        finally:
            stop.set()
            for thread in flooders:
                thread.join(timeout=120)
    with flood.lock:
        finished = list(flood.finished)
    counts = [sum(1 for t in finished if start < t < end) for start, end in windows]
    return counts, flood, codes


def test_tenant_burning_fuel_over_http_does_not_starve_another_tenants_requests() -> None:
    counts, flood, codes = _overtaken(alice_rate=1.0, requests=BOB_REQUESTS)
    print(f"alice runs overtaking each bob request: {counts}; alice 429s: {flood.refused}")
    assert codes == [200] * BOB_REQUESTS  # bob is never refused for alice's flood
    assert flood.outcomes == {"200 R-QUOTA-FUEL"}  # alice's admitted runs burned their whole fuel
    assert flood.refused > FLOODERS  # her excess was refused, not queued
    assert max(counts) <= RUN_THREADS + 1, counts


def test_control_without_a_rate_limit_the_flood_does_queue_ahead_of_the_other_tenant() -> None:
    """Without alice's rate limit the same flood queues ahead of bob: the bound above is not slack."""
    counts, flood, codes = _overtaken(alice_rate=1_000_000.0, requests=4)
    print(f"no rate limit: alice runs overtaking each bob request: {counts}")
    assert codes == [200] * 4 and flood.refused == 0
    assert max(counts) > RUN_THREADS + 1, counts
