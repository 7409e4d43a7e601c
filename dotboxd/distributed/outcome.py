"""What a partition and a job report back: values, per-record errors, summed usage and audit counts.

Everything here is plain data (ints, strings, kernel values, ``ResourceUsage``), so it can travel
from a worker to the client. A failed record is never dropped: it comes back as a ``RecordError``
with its partition, its index inside the partition, and the run's stable error code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

from dotboxd.runtime.meter import ResourceUsage


@dataclass(frozen=True, slots=True)
class RecordError:
    """One failed run: where (partition, index within it) and why (code, category, safe message)."""

    partition: int
    index: int
    code: str
    category: str
    message: str


@dataclass(frozen=True, slots=True)
class PartitionResult:
    """One partition's outcome. ``values`` holds, for ``filter``, the records whose predicate was
    true; for ``map``, ``(index, value)`` pairs of the records that ran; for ``run_batch``, the one
    value of the batch run (empty if it failed). Map and batch values are in the typed JSON
    encoding of ``ExecutionResult.value_json`` (plain JSON data that can cross processes). ``not_run`` counts records the partition skipped
    because its share of the job's fuel budget was spent, or because ``on_error="fail"`` stopped
    it at its first error. ``refusal`` is set (code, message) when the worker refused the job."""

    partition: int
    values: tuple[object, ...]
    errors: tuple[RecordError, ...]
    usage: ResourceUsage
    runs: int
    not_run: int
    audit: Mapping[str, int]
    refusal: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class JobResult:
    """A whole job: the partitions in input order and their totals. ``budget_exhausted`` is true
    when the job's fuel budget stopped some records from running (``not_run`` counts them)."""

    partitions: tuple[PartitionResult, ...]
    budget_exhausted: bool = False

    @property
    def values(self) -> list[object]:
        """Every partition's values, in partition order."""
        return [value for part in self.partitions for value in part.values]

    @property
    def errors(self) -> list[RecordError]:
        return [error for part in self.partitions for error in part.errors]

    @property
    def usage(self) -> ResourceUsage:
        return sum_usage(part.usage for part in self.partitions)

    @property
    def runs(self) -> int:
        return sum(part.runs for part in self.partitions)

    @property
    def not_run(self) -> int:
        return sum(part.not_run for part in self.partitions)

    @property
    def audit(self) -> dict[str, int]:
        """Audit events by kind, summed over the job."""
        total: Counter[str] = Counter()
        for part in self.partitions:
            total.update(part.audit)
        return dict(sorted(total.items()))


def sum_usage(usages: Iterable[ResourceUsage]) -> ResourceUsage:
    """Field-wise sum (``max_fuel`` too: the summed allowance of the runs)."""
    names = [f.name for f in fields(ResourceUsage)]
    totals = dict.fromkeys(names, 0)
    for usage in usages:
        for name in names:
            totals[name] += getattr(usage, name)
    return ResourceUsage(**totals)


def count_audit(kinds: Sequence[str]) -> dict[str, int]:
    return dict(sorted(Counter(kinds).items()))
