"""Run kernels over partitioned data on a Dask cluster (the optional extra ``dotboxd[dask]``).

    from dotboxd.distributed import job_spec, filter_records
    plan = host.prepare(kernel, policy)                  # the client's own install step
    spec = job_spec(plan, "myapp.workers:bindings")      # content + hashes, never a pickled plan
    result = filter_records(spec, partitions, "keep", client=dask_client)

Workers rebuild and re-check the plan from the spec's content (``worker``), run each partition
(``tasks``) and send back plain results (``outcome``); the client fans out and gathers (``engine``).
Only ``engine`` imports Dask, and only when a client is given, so the package imports without it.
"""

from dotboxd.distributed.engine import JobFailed, filter_records, map_records, run_batch, run_job
from dotboxd.distributed.jobspec import JobSpec, job_spec
from dotboxd.distributed.outcome import JobResult, PartitionResult, RecordError

__all__ = [
    "JobFailed",
    "JobResult",
    "JobSpec",
    "PartitionResult",
    "RecordError",
    "filter_records",
    "job_spec",
    "map_records",
    "run_batch",
    "run_job",
]
