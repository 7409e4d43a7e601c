"""Load: concurrent clients on RPC, pushdown and event delivery; throughput and p50/p99 are printed,
answers checked (for events: every passing event delivered once, in order, no failing one).

The short run (20 clients, about 3 s per operation) and the 60 s / 50-client run are both ``slow``:
``make test-slow`` (and CI) runs them; ``pytest tests/server/test_load.py -s`` prints the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx
import pytest

from dotboxd.client import AsyncDotBoxDClient, AsyncEventStream
from tests.server.events_helpers import envelope, event_server
from tests.server.helpers import ALICE, HEALTH, SUM_HEALTH, auth, running_server
from tests.server.loadgen import LoadReport, run_load

MONSTERS = 50


def _scenario(clients: int, seconds: float) -> list[LoadReport]:
    with running_server(runs_per_second=1e6, max_connections=4 * clients) as (server, _):
        HEALTH.update({i: i for i in range(MONSTERS)})
        expected_sum = sum(range(10))
        eid = httpx.post(server.url + "/v1/extensions", headers=auth(), json={"kernel": SUM_HEALTH}).json()[
            "id"
        ]

        async def rpc(http: httpx.AsyncClient, index: int) -> bool:
            monster = index % MONSTERS
            response = await http.post("/v1/rpc/game.world.getHealth", json={"args": [monster]})
            return response.status_code == 200 and response.json()["value"] == monster

        async def pushdown(http: httpx.AsyncClient, index: int) -> bool:
            response = await http.post(f"/v1/extensions/{eid}/invoke", json={"args": [10]})
            return response.status_code == 200 and response.json().get("value") == expected_sum

        reports = [
            run_load("rpc", server.url, auth(), rpc, clients, seconds),
            run_load("pushdown(10 reads)", server.url, auth(), pushdown, clients, seconds),
        ]
    for report in reports:
        print(report.line())
    return reports


def test_short_load_20_clients_rpc_and_pushdown_answers_are_all_right() -> None:
    reports = _scenario(clients=20, seconds=3.0)
    for report in reports:
        assert report.failures == 0 and len(report.latencies) > 20


@pytest.mark.slow  # about 60 s: make test-slow (and CI) runs it
def test_long_load_50_clients_60_seconds() -> None:
    reports = _scenario(clients=50, seconds=20.0)  # with the event run: about 60 s in all
    reports.append(_event_delivery(clients=50, events=200))
    for report in reports:
        assert report.failures == 0


def _event_delivery(clients: int, events: int) -> LoadReport:
    """``clients`` sessions each run a filter passing n < events/2; one publisher fires ``events``
    ticks one RPC at a time. Each client must get exactly the passing ticks, once each, in order;
    the latency is from the publishing RPC's start to the message's arrival."""
    passing = events // 2

    async def scenario(url: str) -> LoadReport:
        report = LoadReport(f"event delivery ({clients} sessions)", clients, 0.0, [], 0)
        async with AsyncDotBoxDClient(url, ALICE) as client:
            streams = [await client.subscribe() for _ in range(clients)]
            for stream in streams:
                await client.install_plugin(stream.session, envelope(threshold=passing))
            sent_at: dict[int, float] = {}

            async def receive(stream: AsyncEventStream) -> list[int]:
                got: list[int] = []
                while len(got) < passing:
                    message = await stream.receive(timeout=30)
                    n = int(message["text"].split()[-1])
                    report.latencies.append(time.perf_counter() - sent_at[n])
                    got.append(n)
                with contextlib.suppress(TimeoutError):  # nothing more may come
                    extra = await stream.receive(timeout=0.5)
                    got.append(int(extra["text"].split()[-1]))
                return got

            readers = [asyncio.ensure_future(receive(s)) for s in streams]
            started = time.monotonic()
            for n in range(events):
                sent_at[n] = time.perf_counter()
                await client.rpc("test.tick", [n, 1])
            results = await asyncio.gather(*readers)
            report.seconds = time.monotonic() - started
            report.failures = sum(1 for got in results if got != list(range(passing)))
            for stream in streams:
                await stream.close()
        return report

    # every tick is an RPC, which spends a run token: the rate bucket is not what this measures
    with event_server(ws_queue_size=64, runs_per_second=1e6) as (server, _, _hub):
        report = asyncio.run(scenario(server.url))
    print(report.line())
    return report


def test_short_event_delivery_20_sessions_no_loss_no_duplicates() -> None:
    report = _event_delivery(clients=20, events=40)
    assert report.failures == 0 and len(report.latencies) == 20 * 20
