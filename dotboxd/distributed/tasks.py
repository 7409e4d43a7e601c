"""The function a worker runs for one partition (importable by name, so nothing is pickled but data).

``run_partition`` rebuilds the checked plan (``dotboxd.distributed.worker``) and runs the kernel the
way the job asks: once per record (``filter``, ``map``: each run under the policy's per-run limits)
or once for the whole partition (``batch``: one run, the partition as a list argument, under the
same per-run limits). It never raises for a kernel fault or a refusal: those come back in the
``PartitionResult``, so the engine never retries a deterministic failure (Dask retries a task only
when its worker dies). Values travel back in the conformance typed JSON encoding
(``ExecutionResult.value_json``): plain JSON data, because sandbox values are deliberately not
picklable (they refuse attribute writes, so nothing can rebuild one from a byte stream).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.types import BOOL
from dotboxd.distributed.jobspec import JobSpec
from dotboxd.distributed.outcome import PartitionResult, RecordError, count_audit, sum_usage
from dotboxd.distributed.worker import checked_plan
from dotboxd.host.result import ExecutionResult
from dotboxd.runtime.execution import ArgEncoding
from dotboxd.runtime.meter import ResourceUsage

Kind = Literal["filter", "map", "batch"]


def run_partition(
    spec: JobSpec,
    kind: Kind,
    partition: int,
    records: Sequence[object],
    entrypoint: str,
    spread: bool,
    fail_fast: bool,
    fuel_allowance: int | None,
    encoding: ArgEncoding = "python",
) -> PartitionResult:
    """Run one partition. ``spread`` passes each record as the argument list (else as the one
    argument); ``fail_fast`` stops at the first failed run; ``fuel_allowance`` (this partition's
    share of a job budget) stops starting runs once the fuel spent reaches it. ``encoding`` is how
    records encode arguments: Python values, or the conformance JSON encoding (``"json"``)."""
    records = list(records)
    try:
        host, plan = checked_plan(spec)
    except DotBoxDError as refused:
        return PartitionResult(
            partition, (), (), ResourceUsage(), 0, len(records), {}, (refused.code, str(refused))
        )
    if kind == "filter":
        info = plan.functions.get(entrypoint)
        if info is not None and info.is_entrypoint and info.return_type != BOOL:
            # a non-Bool "predicate" would keep nothing and drop every record silently
            message = f"filter entrypoint '{entrypoint}' returns {info.return_type}, not Bool"
            return PartitionResult(
                partition, (), (), ResourceUsage(), 0, len(records), {}, ("E-DIST-OPTION", message)
            )
    if kind == "batch":
        if fuel_allowance is not None and fuel_allowance <= 0:
            return PartitionResult(partition, (), (), ResourceUsage(), 0, 1, {})
        result = host.execute(plan, entrypoint, [records], backend=spec.backend, encoding=encoding)
        errors = () if result.ok else (_error(partition, 0, result),)
        return PartitionResult(
            partition,
            (result.value_json(),) if result.ok else (),
            errors,
            result.usage,
            1,
            0,
            count_audit([event.kind for event in result.audit_events]),
        )
    values: list[object] = []
    errors_found: list[RecordError] = []
    usages: list[ResourceUsage] = []
    kinds: list[str] = []
    spent = 0
    ran = 0
    for index, record in enumerate(records):
        if fuel_allowance is not None and spent >= fuel_allowance:
            break
        args = list(record) if spread and isinstance(record, Sequence) else [record]
        result = host.execute(plan, entrypoint, args, backend=spec.backend, encoding=encoding)
        ran += 1
        spent += result.usage.fuel_used
        usages.append(result.usage)
        kinds.extend(event.kind for event in result.audit_events)
        if not result.ok:
            errors_found.append(_error(partition, index, result))
            if fail_fast:
                break
        elif kind == "map":
            values.append((index, result.value_json()))
        elif result.value is True:
            values.append(record)
    return PartitionResult(
        partition,
        tuple(values),
        tuple(errors_found),
        sum_usage(usages),
        ran,
        len(records) - ran,
        count_audit(kinds),
    )


def _error(partition: int, index: int, result: ExecutionResult) -> RecordError:
    info = result.error
    if info is None:  # a failed result always carries its error; fail closed if it did not
        return RecordError(partition, index, "R-HOST-INTERNAL", "HostFailure", "internal runtime fault")
    return RecordError(partition, index, info.code, info.category, info.safe_message)
