"""One small LocalCluster (2 worker processes, 1 thread each) shared by the distributed tests.

Workers are separate processes, so every job they run really crosses a process boundary: the spec
and the records are serialized, the plan is rebuilt on the worker. The cluster is closed at the end
of the session, whatever happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.distributed.local_cluster import local_client


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    with local_client(2) as client:
        yield client
