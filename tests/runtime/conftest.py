"""Fixtures shared by the runtime tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A canonical file-grant root (the validator refuses a root that is itself behind a link)."""
    inside = tmp_path / "root"
    inside.mkdir()
    return Path(os.path.realpath(inside))
