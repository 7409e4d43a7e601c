"""A worker killed mid-job: Dask resubmits its partitions and each result appears exactly once.

Runs on the shared LocalCluster; the killed worker's nanny starts a new one, and the test waits for
both workers before it returns so later tests see the same cluster. Bounded: 80k cheap records (a few seconds on two workers), so the kill at 0.5 s always lands
mid-job even on an idle machine (24k records could finish first there).
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from dotboxd.distributed import filter_records
from tests.distributed.kernels import events_spec


def test_distributed_worker_killed_mid_job_yields_each_result_once(dask_client: Any) -> None:
    spec = events_spec()
    filter_records(spec, [[1], [2]], "keep", client=dask_client)  # both workers warm
    parts = [[(p * 5000 + i) % 11 for i in range(5000)] for p in range(16)]
    pids: dict[str, int] = dask_client.run(os.getpid)
    victim = sorted(pids.values())[0]
    killed = threading.Event()

    def kill() -> None:
        os.kill(victim, signal.SIGKILL)
        killed.set()

    timer = threading.Timer(0.5, kill)
    timer.start()
    try:
        result = filter_records(spec, parts, "keep", client=dask_client)
        assert killed.is_set(), "the job finished before the worker was killed; the test proved nothing"
    finally:
        timer.cancel()
        dask_client.wait_for_workers(2, timeout=120)  # a nanny restart is slow on a loaded machine
    assert result.values == [r for part in parts for r in part if r > 5]
    assert result.runs == 16 * 5000 and result.errors == []
    assert [p.partition for p in result.partitions] == list(range(16))
    assert victim not in dask_client.run(os.getpid).values()
