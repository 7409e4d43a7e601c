"""One small LocalCluster (2 worker processes, 1 thread each) shared by the distributed tests.

Workers are separate processes, so every job they run really crosses a process boundary: the spec
and the records are serialized, the plan is rebuilt on the worker. The cluster is closed at the end
of the session, whatever happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")  # the test extra installs it; see pyproject
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",  # a free loopback port: None still binds the fixed 8787 here
        host="127.0.0.1",
        silence_logs=40,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
