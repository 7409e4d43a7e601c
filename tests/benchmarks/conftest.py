"""Every benchmark is a ``slow`` test: ``make test`` runs them in their own step, after the quick ones.

With ``--benchmark-disable`` (the default ``addopts``) each benchmark body still runs once as a
correctness check, on workloads sized for measurement, so together they are a large share of the
suite's time; ``make bench`` runs them as real benchmarks.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@functools.cache
def _here(path: Path) -> bool:
    """Whether ``path`` is under this folder (cached per file: this hook sees every collected item)."""
    return HERE in path.resolve().parents


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _here(item.path):
            item.add_marker(pytest.mark.slow)
