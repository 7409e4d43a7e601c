"""No leaks: installing and uninstalling in a loop, or disconnecting in the middle of a publish,
leaves no plans, subscriptions, routed runs or host dispatch records, and no memory growth beyond a
small bound (measured with tracemalloc and printed).

Tracing every allocation makes a cycle ~100 ms, so the quick run does 40 cycles; the 2,000-cycle soak
is the same test's ``slow`` parameter (``make test-slow``, which CI runs too). The plan count check below
is exact and cheap, and catches a kept plan on the first cycle."""

from __future__ import annotations

import gc
import multiprocessing
import time
import tracemalloc

import pytest
from world import GameWorld, load_envelope, player_policy

from dotboxd.events import OutboxMessage
from dotboxd.grammar.wire import to_wire
from dotboxd.validator.plan import ExecutionPlan
from tests.events.conftest import EMPTY


def _cycle(game: GameWorld, envelope: dict[str, object], index: int) -> None:
    owner = f"client-{index % 7}"
    game.hub.install(owner, envelope, player_policy())
    game.hub.publish("monster.damaged", {"monster": index, "health": 1, "amount": 1})
    game.hub.update_settings(owner, "low-health", {"threshold": 30})
    if index % 2:
        game.hub.uninstall(owner, "low-health")
        game.hub.drain(owner)
    else:
        game.hub.uninstall_owner(owner)  # a disconnect: outbox, bucket and counters go too
    assert game.hub.footprint()["host_dispatch"] == 0, "an uninstalled plan is still held by the host"


def _measure_cycles(cycles: int) -> tuple[float, int, bool]:
    """Run ``cycles`` install/publish/uninstall cycles after a warm-up; return the seconds they took,
    the traced bytes they left allocated, and whether the hub's footprint is empty afterwards."""
    game = GameWorld()
    envelope = load_envelope()
    envelope["module"] = to_wire(game.host.prepare(envelope["module"], player_policy()).module)
    for index in range(30):  # warm-up: parser tables, interned names, first-use caches
        _cycle(game, envelope, index)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        for index in range(cycles):
            _cycle(game, envelope, index)
        elapsed = time.perf_counter() - started
        for owner in {f"client-{i}" for i in range(7)}:
            game.hub.uninstall_owner(owner)
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return elapsed, growth, game.hub.footprint() == EMPTY


@pytest.mark.parametrize("cycles", [40, pytest.param(2000, marks=pytest.mark.slow)], ids=["40", "soak-2000"])
def test_events_no_leak_on_install_uninstall_loop(cycles: int) -> None:
    # Measured in a fresh interpreter: tracemalloc counts every thread's allocations, and a pytest
    # (xdist) worker may still run threads left by earlier tests (servers, pools), whose memory is not
    # this loop's. A spawned process inherits sys.path, so it imports this module as the test did.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        elapsed, growth, empty = pool.apply(_measure_cycles, (cycles,))
    print(
        f"\n{cycles} install/publish/uninstall cycles in {elapsed:.1f} s "
        f"({elapsed / cycles * 1000:.1f} ms each, traced): memory growth {growth / 1024:.1f} KiB "
        f"({growth / cycles:.0f} B per cycle)"
    )
    assert empty
    assert growth < 256 * 1024


def test_events_disconnect_in_the_middle_of_a_publish_leaves_nothing() -> None:
    """A sink that disconnects its own owner while the hub is delivering (the client went away as
    its message arrived): the publish finishes for the others and nothing of the owner is left."""
    game = GameWorld()
    game.hub.install("alice", load_envelope(), player_policy())
    game.hub.install("bob", load_envelope(), player_policy())

    def hang_up(message: OutboxMessage) -> bool:
        game.hub.uninstall_owner("alice")
        return True

    game.hub.attach_sink("alice", hang_up)
    report = game.hub.publish("monster.damaged", {"monster": 1, "health": 1, "amount": 1})
    assert [(d.owner, d.outcome) for d in report.deliveries] == [("alice", "handled"), ("bob", "handled")]
    report = game.hub.publish("monster.damaged", {"monster": 2, "health": 1, "amount": 1})
    assert [(d.owner, d.outcome) for d in report.deliveries] == [("bob", "handled")]
    assert len(game.hub.drain("bob")) == 2
    game.hub.uninstall_owner("bob")
    assert game.hub.footprint() == EMPTY


def _live_plans() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, ExecutionPlan))


def test_events_uninstalled_plans_are_not_kept_alive_by_host_or_backends() -> None:
    """After uninstall no ExecutionPlan survives in the host's dispatch LRU or the reference
    interpreter's per-plan node caches (each bounded at 1024, which would otherwise keep up to a
    thousand dead tenants' plans, modules and catalogues alive). The optimized backend's artifact
    cache is keyed by content and shared by equal plans: it keeps one artifact (one plan) for this
    content however often the envelope is installed again."""
    game = GameWorld()
    before = _live_plans()
    _install_cycles(game, "reference", 6)
    assert _live_plans() == before
    _install_cycles(game, "optimized", 6)
    with_artifact = _live_plans()
    assert with_artifact <= before + 1
    _install_cycles(game, "optimized", 6)
    assert _live_plans() == with_artifact


def _install_cycles(game: GameWorld, backend: str, cycles: int) -> None:
    game.hub.backend = backend
    for index in range(cycles):
        game.hub.install("alice", load_envelope(), player_policy())
        game.hub.publish("monster.damaged", {"monster": index, "health": 1, "amount": 1})
        assert len(game.hub.drain("alice")) == 1
        game.hub.uninstall_owner("alice")
