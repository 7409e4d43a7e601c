"""A Dask LocalCluster of worker processes on the loopback interface, and a client on it.

One definition for the distributed tests and the distributed benchmark, so both run on the same
kind of cluster: separate worker processes (every job crosses a process boundary), one thread each,
bound to 127.0.0.1, with the dashboard on a free port (``None`` still binds the fixed 8787 here).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@contextmanager
def local_client(n_workers: int) -> Iterator[Any]:
    """A ``distributed.Client`` on a fresh LocalCluster of ``n_workers`` processes; both are closed
    on exit, whatever happened. Skips the test when ``distributed`` is not installed."""
    distributed = pytest.importorskip("distributed")  # the test extra installs it; see pyproject
    cluster = distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",
        host="127.0.0.1",
        silence_logs=40,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
