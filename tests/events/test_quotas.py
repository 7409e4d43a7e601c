"""Per-owner quotas: a burning filter is throttled and suspended while other owners carry on; full
outboxes drop or disconnect only their owner."""

from __future__ import annotations

import statistics
import time

from world import GameWorld, load_envelope, player_policy

from dotboxd.events import OutboxMessage, OwnerQuota
from dotboxd.host import Policy
from tests.events.conftest import FakeClock, make_envelope


def _burner_policy(max_fuel: int) -> Policy:
    """A wall-time limit far beyond ``max_fuel``, so a burning run always ends by fuel
    (R-QUOTA-FUEL, a known charge) and never by the clock on a loaded machine."""
    return player_policy(max_fuel, max_wall_time_ms=60_000)


BURNING = "    spin = 0;\n    while true {\n        spin = spin + 1;\n    }\n    return false;"


def _damaged(game: GameWorld, monster: int, health: int = 1) -> list[str]:
    report = game.hub.publish("monster.damaged", {"monster": monster, "health": health, "amount": 1})
    return [f"{d.owner}:{d.outcome}" for d in report.deliveries]


def test_events_burning_filter_is_suspended_after_repeated_failures(game: GameWorld) -> None:
    game.hub.set_quota("mallory", OwnerQuota(max_consecutive_failures=3))
    game.hub.install("mallory", make_envelope(filter_body=BURNING), _burner_policy(20_000))
    game.hub.install("alice", load_envelope(), player_policy())
    outcomes = [_damaged(game, monster) for monster in range(6)]
    mallory = [o[0] for o in outcomes]
    assert mallory == ["mallory:filter_error"] * 3 + ["mallory:suspended"] * 3
    assert [o[1] for o in outcomes] == ["alice:handled"] * 6
    status = game.hub.status("mallory", "low-health")
    assert status.suspended == "R-QUOTA-FUEL"
    assert game.hub.counters("mallory")["fuel_used"] == 3 * 20_000  # every burnt unit was charged
    game.hub.resume("mallory", "low-health")
    assert _damaged(game, 7)[0] == "mallory:filter_error"


def test_events_owner_fuel_quota_bounds_fuel_per_second(game: GameWorld, clock: FakeClock) -> None:
    """With suspension out of the way, the bucket alone bounds what an owner burns: 100k fuel per
    second, 40k per admitted event (filter + handler worst case), on a clock that stands still."""
    game.hub.set_quota("mallory", OwnerQuota(fuel_per_second=100_000, max_consecutive_failures=1000))
    game.hub.install("mallory", make_envelope(filter_body=BURNING), _burner_policy(20_000))
    game.hub.install("alice", load_envelope(), player_policy())
    first = [_damaged(game, m) for m in range(6)]
    assert [o[0] for o in first] == ["mallory:filter_error"] * 4 + ["mallory:quota"] * 2
    assert all(o[1] == "alice:handled" for o in first)
    clock.advance(0.5)  # 20k left + 50k refilled: two more admitted runs (40k each), then refused
    second = [_damaged(game, m)[0] for m in range(3)]
    assert second == ["mallory:filter_error", "mallory:filter_error", "mallory:quota"]
    counters = game.hub.counters("mallory")
    assert counters["fuel_used"] == 6 * 20_000 <= 100_000 * 1.5  # never more than budget x time
    assert counters["quota_skips"] == 3


def test_events_other_owners_latency_stays_flat_under_a_burning_filter() -> None:
    """A filter that burns all its fuel on every event, thousands of events: the burner is throttled
    and suspended, and alice's per-event latency (measured, printed) stays near her unloaded figure.
    Only counts and order are asserted: timings on a shared machine are reported, not gated."""
    events = 1000
    baseline = GameWorld()
    baseline.hub.install("alice", load_envelope(), player_policy())
    base = _alice_latencies(baseline, events)

    loaded, load, elapsed = _alice_beside_a_burner(events, max_consecutive_failures=3)
    counters = loaded.hub.counters("mallory")
    ratio = statistics.median(load) / statistics.median(base)
    print(
        f"\nalice per-event latency over {events} events: unloaded median {statistics.median(base) * 1e6:.0f} us, "
        f"p99 {_p99(base) * 1e6:.0f} us; with a burning neighbour median {statistics.median(load) * 1e6:.0f} us, "
        f"p99 {_p99(load) * 1e6:.0f} us (x{ratio:.2f}); {events / elapsed:.0f} events/s; mallory: "
        f"{counters['filter_errors']} burning runs, {counters['suspended_skips']} suspended skips"
    )
    assert counters["filter_errors"] == 3
    assert counters["suspended_skips"] == events - 3
    assert loaded.hub.counters("alice")["handled"] == events

    # the fuel bucket alone (suspension off): the burner runs only as often as its budget refills
    throttled, only_bucket, elapsed = _alice_beside_a_burner(events, max_consecutive_failures=10**6)
    burner = throttled.hub.counters("mallory")
    print(
        f"fuel bucket only: alice median {statistics.median(only_bucket) * 1e6:.0f} us "
        f"(x{statistics.median(only_bucket) / statistics.median(base):.2f}), p99 {_p99(only_bucket) * 1e6:.0f} us; "
        f"mallory burnt {burner['fuel_used']} fuel in {elapsed:.2f} s over {burner['filter_errors']} runs, "
        f"{burner['quota_skips']} events refused for quota"
    )
    assert burner["filter_errors"] + burner["quota_skips"] == events
    assert burner["fuel_used"] <= 200_000 * (1 + elapsed)  # budget x time, plus the first second's bucket
    assert burner["quota_skips"] > events // 2


def _alice_beside_a_burner(
    events: int, *, max_consecutive_failures: int
) -> tuple[GameWorld, list[float], float]:
    """A world where mallory's filter burns 50k fuel on every event (200k fuel per second, suspended
    after ``max_consecutive_failures``) next to alice's plugin: the world, alice's per-event
    latencies over ``events`` events, and the seconds they took."""
    world = GameWorld()
    quota = OwnerQuota(fuel_per_second=200_000, max_consecutive_failures=max_consecutive_failures)
    world.hub.set_quota("mallory", quota)
    world.hub.install("mallory", make_envelope(filter_body=BURNING), _burner_policy(50_000))
    world.hub.install("alice", load_envelope(), player_policy())
    started = time.perf_counter()
    latencies = _alice_latencies(world, events)
    return world, latencies, time.perf_counter() - started


def _alice_latencies(game: GameWorld, events: int) -> list[float]:
    out = []
    for monster in range(events):
        report = game.hub.publish("monster.damaged", {"monster": monster, "health": 1, "amount": 1})
        (mine,) = [d for d in report.deliveries if d.owner == "alice"]
        assert mine.outcome == "handled"
        out.append(mine.finished_s)
        game.hub.drain("alice")
    return out


def _p99(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.99) - 1]


def test_events_bounded_outbox_drops_only_that_owners_messages(game: GameWorld) -> None:
    game.hub.set_quota("alice", OwnerQuota(outbox_capacity=3, overflow="drop"))
    game.hub.install("alice", load_envelope(), player_policy())
    game.hub.install("bob", load_envelope(), player_policy())
    for monster in range(5):
        _damaged(game, monster)
    alice = game.hub.drain("alice")
    assert [m.text for m in alice] == [f"monster {i} is low: health 1" for i in range(3)]
    assert game.hub.counters("alice")["messages_dropped"] == 2
    assert len(game.hub.drain("bob")) == 5 and game.hub.counters("bob")["messages_dropped"] == 0
    _damaged(game, 9)  # room again: delivery resumes
    assert [m.text for m in game.hub.drain("alice")] == ["monster 9 is low: health 1"]


def test_events_full_outbox_disconnects_only_that_owner(clock: FakeClock) -> None:
    gone: list[tuple[str, str]] = []
    game = GameWorld(clock=clock, on_disconnect=lambda owner, why: gone.append((owner, why)))
    game.hub.set_quota("alice", OwnerQuota(outbox_capacity=2, overflow="disconnect"))
    game.hub.install("alice", load_envelope(), player_policy())
    game.hub.install("bob", load_envelope(), player_policy())
    game.hub.attach_sink("alice", lambda message: False)  # a client that never reads
    outcomes = [_damaged(game, monster) for monster in range(4)]
    assert outcomes[:3] == [["alice:handled", "bob:handled"]] * 3
    assert outcomes[3] == ["bob:handled"]
    assert gone == [("alice", "outbox-overflow")]
    assert game.hub.installed() == [("bob", "low-health")]
    assert game.hub.disconnects == 1
    assert len(game.hub.drain("bob")) == 4


def test_a_raising_sink_is_detached_and_messages_stay_queued(game: GameWorld) -> None:
    game.hub.install("alice", load_envelope(), player_policy())

    def broken(message: OutboxMessage) -> bool:
        raise RuntimeError("socket closed")

    game.hub.attach_sink("alice", broken)
    _damaged(game, 1)
    _damaged(game, 2)
    assert game.hub.counters("alice")["sink_errors"] == 1
    assert len(game.hub.drain("alice")) == 2
