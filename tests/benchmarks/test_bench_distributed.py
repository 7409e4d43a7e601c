"""Events per second of a Bool predicate: one process (``SandboxHost.execute`` in a loop, and
``SandboxHost.execute_many`` over all records) next to ``dotboxd.distributed.filter_records`` on a
LocalCluster of 1 and of 2 worker processes.

    make bench-distributed                                    # 200,000 records (the default below)
    DOTBOXD_DIST_RECORDS=10000000 make bench-distributed      # the issue's 10M-record run

Group ``distributed_filter``: one round filters all records; ``extra_info`` holds events/s.
Group ``distributed_partition_overhead``: 200 one-record partitions on one worker; ``extra_info``
holds the time per partition minus one local run, i.e. what a partition costs beyond its work.

With ``--benchmark-disable`` (the normal test run) each body runs once over a small input (2,000
records) and the kept records are checked against the plain predicate, so CI stays short.
Clusters are started outside the timed body and closed by the fixture.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dotboxd.distributed import filter_records
from tests.distributed.kernels import client_host, events_spec, prepare_events
from tests.distributed.local_cluster import local_client

PARTITION = 10_000
"""Records per partition: large enough that per-task scheduling is a small share of the work."""


def _records(benchmark: Any) -> list[int]:
    count = int(os.environ.get("DOTBOXD_DIST_RECORDS", "200000")) if not benchmark.disabled else 2_000
    return [i % 11 for i in range(count)]


def _partitions(records: list[int]) -> list[list[int]]:
    return [records[i : i + PARTITION] for i in range(0, len(records), PARTITION)]


@pytest.fixture(scope="module", params=[1, 2], ids=["1-worker", "2-workers"])
def cluster_client(request: pytest.FixtureRequest) -> Iterator[Any]:
    with local_client(request.param) as client:
        yield client


def _report(benchmark: Any, records: int, started: float) -> None:
    seconds = time.perf_counter() - started
    benchmark.extra_info["records"] = records
    benchmark.extra_info["events_per_second"] = round(records / seconds)


@pytest.mark.benchmark(group="distributed_filter")
def test_bench_filter_single_process(benchmark: Any) -> None:
    records = _records(benchmark)
    host = client_host()
    plan = prepare_events(host)

    def run() -> list[int]:
        started = time.perf_counter()
        kept = [r for r in records if host.execute(plan, "keep", [r]).value is True]
        _report(benchmark, len(records), started)
        return kept

    kept = benchmark.pedantic(run, rounds=1, iterations=1)
    assert kept == [r for r in records if r > 5]


@pytest.mark.benchmark(group="distributed_filter")
@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_bench_filter_single_process_execute_many(benchmark: Any, backend: str) -> None:
    """The batch API a single-process user would call: one ``execute_many`` over every record (each
    record still its own metered run). The cluster jobs run the reference backend, so that row is
    the like-for-like baseline; the optimized row shows what one process reaches on its fast lane."""
    records = _records(benchmark)
    host = client_host()
    plan = prepare_events(host)

    def run() -> list[int]:
        started = time.perf_counter()
        values = host.execute_many(plan, "keep", ([r] for r in records), backend=backend).values()
        kept = [r for r, value in zip(records, values, strict=True) if value is True]
        _report(benchmark, len(records), started)
        return kept

    kept = benchmark.pedantic(run, rounds=1, iterations=1)
    assert kept == [r for r in records if r > 5]


@pytest.mark.benchmark(group="distributed_filter")
def test_bench_filter_on_cluster(benchmark: Any, cluster_client: Any) -> None:
    records = _records(benchmark)
    spec = events_spec()
    filter_records(spec, [[1]] * 4, "keep", client=cluster_client)  # warm: workers import and check once

    def run() -> list[object]:
        started = time.perf_counter()
        result = filter_records(spec, _partitions(records), "keep", client=cluster_client)
        _report(benchmark, len(records), started)
        return result.values

    kept = benchmark.pedantic(run, rounds=1, iterations=1)
    assert kept == [r for r in records if r > 5]


@pytest.mark.benchmark(group="distributed_partition_overhead")
def test_bench_partition_overhead(benchmark: Any) -> None:
    pytest.importorskip("distributed")  # skip before the local runs, not inside local_client
    count = 200 if not benchmark.disabled else 20
    host = client_host()
    plan = prepare_events(host)
    started = time.perf_counter()
    for _ in range(count):
        host.execute(plan, "keep", [7])
    local_run = (time.perf_counter() - started) / count
    with local_client(1) as client:
        spec = events_spec()
        filter_records(spec, [[7]], "keep", client=client)

        def run() -> int:
            begun = time.perf_counter()
            result = filter_records(spec, [[7]] * count, "keep", client=client)
            per_partition = (time.perf_counter() - begun) / count
            benchmark.extra_info["partitions"] = count
            benchmark.extra_info["overhead_ms_per_partition"] = round((per_partition - local_run) * 1e3, 3)
            return result.runs

        assert benchmark.pedantic(run, rounds=1, iterations=1) == count
