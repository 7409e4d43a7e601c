"""Load: concurrent clients on RPC and pushdown; throughput and p50/p99 are printed, answers checked.

The short run (20 clients, about 3 s per operation) runs with the suite; the 60 s / 50-client run is
``slow`` (``DOTBOXD_SLOW=1 pytest tests/server/test_load.py -m slow -s``).
"""

from __future__ import annotations

import os

import httpx
import pytest

from tests.server.helpers import HEALTH, SUM_HEALTH, auth, running_server
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


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("DOTBOXD_SLOW") != "1", reason="the 60 s load run is opt-in: DOTBOXD_SLOW=1"
)
def test_long_load_50_clients_60_seconds() -> None:
    reports = _scenario(clients=50, seconds=30.0)
    for report in reports:
        assert report.failures == 0
