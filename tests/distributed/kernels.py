"""The kernels and hosts the distributed tests share."""

from __future__ import annotations

from dotboxd.distributed import JobSpec, job_spec
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.plan import ExecutionPlan
from tests.distributed.worker_setup import bindings

SETUP = "tests.distributed.worker_setup:bindings"

EVENTS = """module "events" version "1.0.0";

entrypoint fn keep(level I32) -> Bool {
    return level > 5;
}

entrypoint fn project(level I32) -> I32 {
    return test.scale(level) + 1;
}

entrypoint fn inverse(level I32) -> I32 {
    return 100 / level;
}

entrypoint fn total(levels List<I32>) -> I32 {
    sum = 0;
    for i in 0 .. list.count(levels) {
        sum = sum + list.get(levels, i);
    }
    return sum;
}
"""


ROOMY = Policy.builder().with_max_wall_time_ms(30_000).build()
"""The default (pure-only) policy with a wall-clock limit no descheduling can reach: under the
default 100 ms, a run on a loaded CI machine that lost its core for 100 ms failed ``R-TIMEOUT`` and
its record went missing from a filter (the 100k-record benchmark lost 1-2 records that way)."""


def prepare_events(host: SandboxHost, policy: Policy | None = None) -> ExecutionPlan:
    """``EVENTS`` prepared under ``policy`` (default ``ROOMY``), as every distributed test runs it."""
    return host.prepare(EVENTS, policy if policy is not None else ROOMY)


def client_host() -> SandboxHost:
    """The client's host: the same bindings the workers' setup provides."""
    return SandboxHost(bindings())


def events_spec(policy: Policy | None = None, setup: str = SETUP, backend: str = "reference") -> JobSpec:
    return job_spec(prepare_events(client_host(), policy), setup, backend=backend)
