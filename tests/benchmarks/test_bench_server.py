"""N service-RPC round trips against one pushdown invocation that does the same N reads server-side.

    nice .venv/bin/python -m pytest tests/benchmarks/test_bench_server.py --benchmark-enable \\
        --benchmark-only --benchmark-columns=min,median,rounds -s

Both sides sum the health of monsters 0..N-1 over loopback (uvicorn in a thread of this process,
one persistent connection): ``rpc`` calls ``game.world.getHealth`` N times; ``pushdown`` invokes the
installed ``sum-health`` kernel once with ``[N]`` (N binding calls on the server, metered). The
README quotes the ratios. With ``--benchmark-disable`` (the normal test run) each body runs once
with N capped at 10 and the sums are checked, so CI stays short.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.helpers import HEALTH, SUM_HEALTH, auth, running_server

SIZES = (1, 10, 100, 1000)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[httpx.Client, str]]:
    with (
        running_server(runs_per_second=1e6) as (server, _),
        httpx.Client(base_url=server.url, headers=auth()) as http,
    ):
        HEALTH.update({i: i % 97 for i in range(max(SIZES))})
        eid = http.post("/v1/extensions", json={"kernel": SUM_HEALTH}).json()["id"]
        yield http, eid


def _n(benchmark: Any, n: int) -> int:
    return min(n, 10) if benchmark.disabled else n


@pytest.mark.parametrize("n", SIZES)
def test_bench_n_rpc_calls(benchmark: Any, served: tuple[httpx.Client, str], n: int) -> None:
    http, _ = served
    count = _n(benchmark, n)

    def calls() -> int:
        return sum(
            http.post("/v1/rpc/game.world.getHealth", json={"args": [i]}).json()["value"]
            for i in range(count)
        )

    benchmark.group = f"server_n{n}"
    total = benchmark.pedantic(calls, rounds=3 if n >= 100 else 10, iterations=1)
    assert total == sum(i % 97 for i in range(count))


@pytest.mark.parametrize("n", SIZES)
def test_bench_one_pushdown(benchmark: Any, served: tuple[httpx.Client, str], n: int) -> None:
    http, eid = served
    count = _n(benchmark, n)

    def invoke() -> int:
        body = http.post(f"/v1/extensions/{eid}/invoke", json={"args": [count]}).json()
        assert body["outcome"] == "ok", body
        return int(body["value"])

    benchmark.group = f"server_n{n}"
    total = benchmark.pedantic(invoke, rounds=3 if n >= 100 else 10, iterations=1)
    assert total == sum(i % 97 for i in range(count))
