"""The kernels and hosts the distributed tests share."""

from __future__ import annotations

from dotboxd.distributed import JobSpec, job_spec
from dotboxd.host import Policy, SandboxHost
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


def client_host() -> SandboxHost:
    """The client's host: the same bindings the workers' setup provides."""
    return SandboxHost(bindings())


def events_spec(policy: Policy | None = None, setup: str = SETUP, backend: str = "reference") -> JobSpec:
    return job_spec(client_host().prepare(EVENTS, policy), setup, backend=backend)
