"""The client side: fan a job's partitions out to a Dask cluster (or run them in-process) and gather.

    spec = job_spec(plan, "myapp.workers:bindings")
    kept = filter_records(spec, partitions, "keep", client=client)       # Bool predicate per record
    out = map_records(spec, bag, "project", client=client)               # projection per record
    agg = run_batch(spec, partitions, "total", client=client)            # one run per partition

``partitions`` is a list of record lists or a Dask bag (each bag partition is one partition). What
goes to the workers is the ``JobSpec`` (strings) and the records; the task is
``dotboxd.distributed.tasks.run_partition``, which Dask ships by its importable name.

``on_error="collect"`` returns every failed record as a ``RecordError`` in the result;
``on_error="fail"`` raises ``JobFailed`` (code ``R-JOB-RECORD``) at the first failed record the
client sees and cancels the partitions still pending. ``fuel_budget`` is a job-wide fuel budget,
split across partitions in proportion to their record counts (evenly for a bag, whose sizes are
unknown up front): a partition starts no run once its share is spent, so the job stops cleanly
with ``budget_exhausted`` set and ``not_run`` counting what was skipped; the fuel spent exceeds the
budget by at most one run per partition (each run is itself bounded by the policy's ``maxFuel``).

A worker refusal (``E-DIST-INTEGRITY``, ``E-DIST-SETUP``) is raised on the client as a DotBoxDError
with the worker's code and message; nothing ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.distributed.jobspec import JobSpec
from dotboxd.distributed.outcome import JobResult, PartitionResult, RecordError
from dotboxd.distributed.tasks import Kind, run_partition
from dotboxd.runtime.execution import ArgEncoding

OnError = Literal["collect", "fail"]


class JobFailed(Exception):
    """``on_error="fail"`` and a record failed: ``error`` says which and why (code ``R-JOB-RECORD``)."""

    code = "R-JOB-RECORD"

    def __init__(self, error: RecordError) -> None:
        super().__init__(
            f"R-JOB-RECORD: record {error.index} of partition {error.partition} failed with "
            f"{error.code} ({error.category}): {error.message}"
        )
        self.error = error


def filter_records(spec: JobSpec, partitions: Any, entrypoint: str, **options: Any) -> JobResult:
    """Keep the records for which the Bool predicate ``entrypoint`` returns true (one run each)."""
    return run_job(spec, "filter", partitions, entrypoint, **options)


def map_records(spec: JobSpec, partitions: Any, entrypoint: str, **options: Any) -> JobResult:
    """Project every record through ``entrypoint`` (one run each); values are ``(index, value)``."""
    return run_job(spec, "map", partitions, entrypoint, **options)


def run_batch(spec: JobSpec, partitions: Any, entrypoint: str, **options: Any) -> JobResult:
    """One run per partition, the partition's records as the entrypoint's one list argument."""
    return run_job(spec, "batch", partitions, entrypoint, **options)


def run_job(
    spec: JobSpec,
    kind: Kind,
    partitions: Any,
    entrypoint: str,
    *,
    client: Any = None,
    spread: bool = False,
    on_error: OnError = "collect",
    fuel_budget: int | None = None,
    encoding: ArgEncoding = "python",
) -> JobResult:
    """Run a job over ``partitions`` on ``client`` (a ``distributed.Client``; None runs in-process)."""
    if on_error not in ("collect", "fail"):
        raise reject("E-DIST-OPTION", f"on_error must be 'collect' or 'fail', not {on_error!r}")
    if fuel_budget is not None and (isinstance(fuel_budget, bool) or fuel_budget < 0):
        raise reject("E-DIST-OPTION", f"fuel_budget must be a non-negative integer, not {fuel_budget!r}")
    fail_fast = on_error == "fail"
    if client is None:
        parts = _as_lists(partitions)
        shares = _shares(fuel_budget, [len(p) for p in parts])
        results = []
        for number, records in enumerate(parts):
            result = run_partition(spec, kind, number, records, entrypoint, spread, fail_fast, shares[number])
            _raise_if_refused_or_failed(result, fail_fast)
            results.append(result)
        return _job(results, fuel_budget)
    return _run_on_cluster(
        spec, kind, partitions, entrypoint, client, spread, fail_fast, fuel_budget, encoding
    )


def _run_on_cluster(
    spec: JobSpec,
    kind: Kind,
    partitions: Any,
    entrypoint: str,
    client: Any,
    spread: bool,
    fail_fast: bool,
    fuel_budget: int | None,
    encoding: ArgEncoding,
) -> JobResult:
    from distributed import as_completed

    if hasattr(partitions, "to_delayed"):
        sources: list[Any] = client.compute(partitions.to_delayed())
        shares = _shares(fuel_budget, [1] * len(sources))
    else:
        parts = _as_lists(partitions)
        sources = list(parts)
        shares = _shares(fuel_budget, [len(p) for p in parts])
    # the spec goes to each worker once per job, not once per task
    shipped = client.scatter(spec, broadcast=True, hash=False)
    futures = [
        # pure=False: a resubmitted job runs again (its records may be the same, its spec too)
        client.submit(
            run_partition,
            shipped,
            kind,
            number,
            source,
            entrypoint,
            spread,
            fail_fast,
            shares[number],
            encoding,
            pure=False,
            retries=0,
        )
        for number, source in enumerate(sources)
    ]
    results: dict[int, PartitionResult] = {}
    try:
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            result: PartitionResult = future.result()
            _raise_if_refused_or_failed(result, fail_fast)
            results[result.partition] = result
    finally:
        pending = [future for future in futures if not future.done()]
        if pending:
            client.cancel(pending)
    return _job([results[number] for number in range(len(futures))], fuel_budget)


def _raise_if_refused_or_failed(result: PartitionResult, fail_fast: bool) -> None:
    if result.refusal is not None:
        code, message = result.refusal
        raise reject(code, f"a worker refused the job: {message}", what="worker refusal")
    if fail_fast and result.errors:
        raise JobFailed(result.errors[0])


def _job(results: list[PartitionResult], fuel_budget: int | None) -> JobResult:
    return JobResult(tuple(results), fuel_budget is not None and any(r.not_run for r in results))


def _as_lists(partitions: Any) -> list[list[object]]:
    if isinstance(partitions, (str, bytes)) or not isinstance(partitions, Sequence):
        raise reject(
            "E-DIST-OPTION",
            f"partitions must be a list of record lists or a Dask bag, not {type(partitions).__name__}",
        )
    parts: list[list[object]] = []
    for number, part in enumerate(partitions):
        if isinstance(part, (str, bytes)) or not isinstance(part, Sequence):
            raise reject("E-DIST-OPTION", f"partition {number} is not a list of records", f"/{number}")
        parts.append(list(part))
    return parts


def _shares(fuel_budget: int | None, sizes: list[int]) -> list[int | None]:
    """Each partition's share of ``fuel_budget``, in proportion to ``sizes`` (exact integer split:
    the shares add up to the budget)."""
    if fuel_budget is None:
        return [None] * len(sizes)
    total = sum(sizes)
    if total == 0:
        return [0] * len(sizes)
    shares: list[int | None] = []
    given = 0
    seen = 0
    for size in sizes:
        seen += size
        upto = fuel_budget * seen // total
        shares.append(upto - given)
        given = upto
    return shares


__all__ = ["DotBoxDError", "JobFailed", "filter_records", "map_records", "run_batch", "run_job"]
