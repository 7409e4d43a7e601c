"""Fixtures for the event-kernel tests: the game-world sample (examples/game_server) in process,
and a builder of envelope variants so each test changes only the part it is about."""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "game_server"
if str(SAMPLE) not in sys.path:
    sys.path.insert(0, str(SAMPLE))

from world import GameWorld, load_envelope  # noqa: E402

FILTER_AND_HANDLE = """module "low-health-filter" version "1.0.0";
requires "host.message.write" reason "notify";
entrypoint fn shouldHandle({filter_params}) -> Bool {{
{filter_body}
}}
entrypoint fn handle(e_monster I32, e_health I32) -> Bool {{
    return host.message.send(string.concatBudgeted("low ", int32.toStringInvariant(e_monster)));
}}
{extra}"""


EMPTY = {
    "owners": 0,
    "plugins": 0,
    "subscriptions": 0,
    "event_keys": 0,
    "routed_runs": 0,
    "host_dispatch": 0,
    "queued_messages": 0,
}
"""The hub's ``footprint()`` once every owner has gone: nothing held, one key per kind of record."""


class FakeClock:
    """A clock the test moves by hand (leases, fuel buckets)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def game(clock: FakeClock) -> GameWorld:
    return GameWorld(clock=clock)


EnvelopeFactory = Callable[..., dict[str, Any]]


def make_envelope(
    *,
    plugin_id: str = "low-health",
    filter_params: str = "e_monster I32, e_health I32, threshold I32",
    filter_body: str = "    return e_health < threshold;",
    extra: str = "",
    settings: list[dict[str, Any]] | None = None,
    event: str = "monster.damaged",
    module: Any = None,
) -> dict[str, Any]:
    """The sample envelope with one part replaced (the module is built from the template above
    unless ``module`` is given)."""
    envelope = copy.deepcopy(load_envelope())
    envelope["manifest"]["pluginId"] = plugin_id
    envelope["manifest"]["subscriptions"][0]["event"] = event
    if settings is not None:
        envelope["manifest"]["liveSettings"] = settings
    envelope["module"] = (
        module
        if module is not None
        else FILTER_AND_HANDLE.format(filter_params=filter_params, filter_body=filter_body, extra=extra)
    )
    return envelope


@pytest.fixture
def envelope() -> EnvelopeFactory:
    return make_envelope
