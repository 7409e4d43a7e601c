"""How a host wires the dotboxd pytest plugin to its own bindings: override two fixtures.

The plugin (installed with dotboxd, entry point ``pytest11``) supplies ``dotboxd``,
``dotboxd_host``, ``dotboxd_bindings`` and ``dotboxd_policy``; this host's bindings are the
game-world ``kill`` of ``examples/game_world_demo.py``, and its policy grants the capability.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from game_world_demo import CAPABILITY, World, make_binding

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.host import Policy


@pytest.fixture
def world() -> World:
    """The host's own state, fresh for every test."""
    return World({1, 2, 3, 7})


@pytest.fixture
def dotboxd_bindings(world: World) -> Sequence[BindingDescriptor]:
    return [make_binding(world)]


@pytest.fixture
def dotboxd_policy() -> Policy:
    return Policy.builder().grant(CAPABILITY).build()
