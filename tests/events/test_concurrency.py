"""The hub from several threads at once (a server calls it from an executor): publishes, installs,
setting updates and disconnects interleave, and the delivery rule still holds for every owner."""

from __future__ import annotations

import threading

from world import GameWorld, load_envelope, player_policy

PUBLISHERS = 4
EVENTS_EACH = 40


def test_events_delivery_rule_holds_under_concurrent_calls() -> None:
    game = GameWorld()
    game.hub.install("alice", load_envelope(), player_policy())
    errors: list[BaseException] = []
    healths: dict[int, int] = {}
    ids: dict[int, int] = {}
    lock = threading.Lock()

    def publisher(worker: int) -> None:
        try:
            for index in range(EVENTS_EACH):
                monster = worker * 1000 + index
                health = (monster * 7) % 40
                report = game.hub.publish(
                    "monster.damaged", {"monster": monster, "health": health, "amount": 1}
                )
                with lock:
                    healths[monster] = health
                    ids[report.event_id] = monster
        except BaseException as error:  # surfaced below: a thread's failure must fail the test
            errors.append(error)

    def churn() -> None:
        try:
            for index in range(15):
                game.hub.install("bob", load_envelope(), player_policy())
                game.hub.update_settings("bob", "low-health", {"threshold": index})
                game.hub.uninstall_owner("bob")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=publisher, args=(w,)) for w in range(PUBLISHERS)]
    threads.append(threading.Thread(target=churn))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)
    messages = game.hub.drain("alice")
    delivered = [ids[m.event_id] for m in messages]
    expected = {monster for monster, health in healths.items() if health < 20}
    assert sorted(delivered) == sorted(expected)  # each passing event once, no failing one
    assert len(set(delivered)) == len(delivered)
    assert [m.event_id for m in messages] == sorted(m.event_id for m in messages)  # in event order
    assert game.hub.installed() == [("alice", "low-health")]
    assert game.hub.footprint()["routed_runs"] == 0
