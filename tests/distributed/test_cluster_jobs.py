"""filter, map and run_batch on a LocalCluster: same values as the local host, errors never dropped,
usage and audit summed per partition and per job, a job fuel budget that stops the job cleanly."""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.distributed import JobFailed, filter_records, map_records, run_batch
from dotboxd.distributed.outcome import sum_usage
from dotboxd.host import Policy
from tests.distributed.kernels import EVENTS, client_host, events_spec, prepare_events

PARTS = [[1, 7, 9, 0], [3, 10], [6, 0, 2]]


def _local(entrypoint: str, args_list: list[list[object]]) -> list[Any]:
    host = client_host()
    plan = prepare_events(host)
    return [host.execute(plan, entrypoint, args) for args in args_list]


def test_filter_on_cluster_matches_local_and_sums_usage(dask_client: Any) -> None:
    result = filter_records(events_spec(), PARTS, "keep", client=dask_client)
    records = [r for part in PARTS for r in part]
    local = _local("keep", [[r] for r in records])
    assert result.values == [r for r, run in zip(records, local, strict=True) if run.value is True]
    assert result.usage == sum_usage(run.usage for run in local)
    assert [p.runs for p in result.partitions] == [4, 2, 3]
    assert result.audit == {"RunSummary": len(records)}


def test_map_on_cluster_collects_each_failed_record_with_its_error(dask_client: Any) -> None:
    result = map_records(events_spec(), PARTS, "inverse", client=dask_client)
    failed = [(e.partition, e.index) for e in result.errors]
    assert failed == [(0, 3), (2, 1)]  # the two zeros: division by zero is an error, not a drop
    assert {e.code for e in result.errors} == {_local("inverse", [[0]])[0].error.code}
    assert len(result.values) + len(result.errors) == sum(len(p) for p in PARTS)
    assert result.partitions[0].values == ((0, 100), (1, 14), (2, 11))


def test_map_on_cluster_fail_mode_raises_job_failed(dask_client: Any) -> None:
    with pytest.raises(JobFailed) as failed:
        map_records(events_spec(), PARTS, "inverse", client=dask_client, on_error="fail")
    assert failed.value.error.index in (3, 1) and failed.value.code == "R-JOB-RECORD"


def test_run_batch_over_a_dask_bag_runs_once_per_partition(dask_client: Any) -> None:
    bag = pytest.importorskip("dask.bag")
    records = list(range(1, 21))
    result = run_batch(events_spec(), bag.from_sequence(records, npartitions=4), "total", client=dask_client)
    assert [p.runs for p in result.partitions] == [1, 1, 1, 1]
    assert sum(result.values) == sum(records)  # type: ignore[arg-type]
    local = _local("total", [[records[i : i + 5]] for i in range(0, 20, 5)])
    assert result.usage == sum_usage(run.usage for run in local)


def test_filter_over_a_dask_bag_keeps_partition_order(dask_client: Any) -> None:
    bag = pytest.importorskip("dask.bag")
    records = [i % 11 for i in range(40)]
    result = filter_records(
        events_spec(), bag.from_sequence(records, npartitions=3), "keep", client=dask_client
    )
    assert result.values == [r for r in records if r > 5]


def test_distributed_deterministic_kernel_failure_is_not_retried(dask_client: Any) -> None:
    # every record traps; each runs exactly once (runs and fuel equal the local totals) and the
    # job ends with one error per record instead of being resubmitted
    parts = [[0] * 5, [0] * 5]
    result = map_records(events_spec(), parts, "inverse", client=dask_client)
    local = _local("inverse", [[0]] * 10)
    assert result.runs == 10 and len(result.errors) == 10
    assert result.usage.fuel_used == sum(run.usage.fuel_used for run in local)


def test_distributed_job_fuel_budget_stops_the_job_cleanly(dask_client: Any) -> None:
    parts = [[7] * 50, [7] * 50]
    per_run = _local("keep", [[7]])[0].usage.fuel_used
    budget = per_run * 30
    result = filter_records(events_spec(), parts, "keep", client=dask_client, fuel_budget=budget)
    assert result.budget_exhausted
    assert result.runs == 30 and result.not_run == 70
    assert result.usage.fuel_used <= budget + per_run * len(parts)
    assert result.errors == []


def test_per_partition_limits_apply_to_each_batch_run_on_workers(dask_client: Any) -> None:
    policy = Policy.from_json({"limits": {"maxFuel": 200}})
    parts: list[list[object]] = [[1, 2, 3], list(range(100))]
    result = run_batch(events_spec(policy), parts, "total", client=dask_client)
    host = client_host()
    plan = host.prepare(EVENTS, policy)
    local = [host.execute(plan, "total", [part]) for part in parts]
    assert local[0].ok and not local[1].ok and local[1].error is not None
    assert result.values == [local[0].value]
    assert [(e.partition, e.code) for e in result.errors] == [(1, local[1].error.code)]
    assert result.usage == sum_usage(run.usage for run in local)
