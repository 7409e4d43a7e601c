"""Publishing events: the filter decides, the handler runs once for each event that passed and
never for one that did not; live settings apply to the next event; leases and uninstall end it."""

from __future__ import annotations

import random

import pytest
from world import GameWorld, load_envelope, player_policy

from dotboxd.core.diagnostics import DotBoxDError
from tests.events.conftest import EMPTY, FakeClock, make_envelope


def _damaged(game: GameWorld, monster: int, health: int) -> None:
    game.hub.publish("monster.damaged", {"monster": monster, "health": health, "amount": 1})


def test_events_exactly_once_delivery_for_events_that_pass_the_filter(game: GameWorld) -> None:
    """500 random events: the messages are exactly the passing events, each once, in order."""
    game.hub.install("alice", load_envelope(), player_policy())
    rng = random.Random(15)
    healths = [rng.randrange(0, 60) for _ in range(500)]
    reports = [
        game.hub.publish("monster.damaged", {"monster": index, "health": health, "amount": 1})
        for index, health in enumerate(healths)
    ]
    messages = game.hub.drain("alice")
    passing = [index for index, health in enumerate(healths) if health < 20]
    assert [m.text for m in messages] == [f"monster {i} is low: health {healths[i]}" for i in passing]
    assert [m.event_id for m in messages] == [reports[i].event_id for i in passing]
    assert len({m.event_id for m in messages}) == len(messages)
    outcomes = [r.outcomes("alice") for r in reports]
    assert outcomes == [["handled"] if h < 20 else ["filtered"] for h in healths]
    counters = game.hub.counters("alice")
    assert (counters["handled"], counters["filtered"]) == (len(passing), 500 - len(passing))


def test_a_failed_handle_delivers_nothing_and_is_not_retried(game: GameWorld) -> None:
    """The handler sends, then faults: the queued message is dropped with the run (all-or-nothing)."""
    module = load_envelope()["module"].replace(
        "return host.message.send(text);",
        "sent = host.message.send(text);\n    return 1 / (e_health - e_health) == 0;",
    )
    game.hub.install(
        "alice", make_envelope(module=module.replace("requires", "requires", 1)), player_policy()
    )
    report = game.hub.publish("monster.damaged", {"monster": 1, "health": 3, "amount": 1})
    assert report.deliveries[0].outcome == "handle_error"
    assert report.deliveries[0].code == "R-ARITH-DIVIDE-BY-ZERO"
    assert game.hub.drain("alice") == []
    assert game.hub.counters("alice")["handle_errors"] == 1


def test_live_settings_apply_to_the_next_event_without_reinstall(game: GameWorld) -> None:
    receipt = game.hub.install("alice", load_envelope(), player_policy())
    _damaged(game, 1, 25)
    game.hub.update_settings("alice", "low-health", {"threshold": 30})
    _damaged(game, 2, 25)
    assert [m.event_id for m in game.hub.drain("alice")] == [2]
    status = game.hub.status("alice", "low-health")
    assert status.plan_hash == receipt.plan_hash  # the same plan: no re-validation
    assert status.settings == {"threshold": 30}


@pytest.mark.parametrize(
    "values",
    [{"threshold": 5000}, {"threshold": -1}, {"threshold": "10"}, {"threshold": 2.5}, {"limit": 3}],
)
def test_events_settings_out_of_range_are_refused_and_change_nothing(
    game: GameWorld, values: dict[str, object]
) -> None:
    game.hub.install("alice", load_envelope(), player_policy())
    with pytest.raises(DotBoxDError) as caught:
        game.hub.update_settings(
            "alice", "low-health", {"threshold": 50, **values} if "limit" in values else values
        )
    assert caught.value.code == "E-EVENT-SETTING"
    assert game.hub.settings("alice", "low-health") == {"threshold": 20}


def test_f64_setting_accepts_an_integral_json_number(game: GameWorld) -> None:
    settings = [{"name": "ratio", "type": "F64", "defaultValue": 1, "min": 0, "max": 2}]
    envelope = make_envelope(
        settings=settings, filter_params="e_health I32, ratio F64", filter_body="    return ratio > 1.0;"
    )
    game.hub.install("alice", envelope, player_policy())
    assert game.hub.settings("alice", "low-health") == {"ratio": 1.0}
    game.hub.update_settings("alice", "low-health", {"ratio": 2})
    _damaged(game, 1, 50)
    assert len(game.hub.drain("alice")) == 1


def test_published_fields_are_checked_against_the_contract(game: GameWorld) -> None:
    game.hub.install("alice", load_envelope(), player_policy())
    bad = [
        {"monster": 1, "health": 2},
        {"monster": 1, "health": 2, "amount": 1, "extra": 0},
        {"monster": 1, "health": "2", "amount": 1},
        {"monster": 1, "health": True, "amount": 1},
        {"monster": 1, "health": 2**40, "amount": 1},
    ]
    for fields in bad:
        with pytest.raises(DotBoxDError) as caught:
            game.hub.publish("monster.damaged", fields)
        assert caught.value.code == "E-EVENT-FIELDS", fields
    with pytest.raises(DotBoxDError) as caught:
        game.hub.publish("monster.exploded", {})
    assert caught.value.code == "E-EVENT-UNKNOWN"
    assert game.hub.counters("alice")["events"] == 0  # no kernel saw any of them


def test_a_lease_expires_on_the_hub_clock(game: GameWorld, clock: FakeClock) -> None:
    game.hub.install("alice", load_envelope(), player_policy(), lease_seconds=30)
    clock.advance(20)
    game.hub.renew_lease("alice", "low-health", 30)
    clock.advance(29)
    _damaged(game, 1, 1)
    assert len(game.hub.drain("alice")) == 1
    clock.advance(2)
    report = game.hub.publish("monster.damaged", {"monster": 1, "health": 1, "amount": 1})
    assert report.deliveries == ()
    assert game.hub.installed() == []
    assert game.hub.footprint()["subscriptions"] == 0


def test_uninstall_stops_delivery_and_disconnect_clears_the_owner(game: GameWorld) -> None:
    game.hub.install("alice", load_envelope(), player_policy())
    game.hub.install("alice", make_envelope(plugin_id="second"), player_policy())
    game.hub.uninstall("alice", "second")
    _damaged(game, 1, 1)
    assert [m.plugin_id for m in game.hub.drain("alice")] == ["low-health"]
    _damaged(game, 2, 1)
    assert game.hub.uninstall_owner("alice") == 1
    assert game.hub.drain("alice") == []  # queued messages went with the owner
    assert game.hub.footprint() == EMPTY


def test_message_binding_outside_an_event_run_is_denied(game: GameWorld) -> None:
    """A plain execute of a plan that sends: the router knows no owner for that run, so it refuses
    (a kernel can never pick a recipient)."""
    plan = game.host.prepare(load_envelope()["module"], player_policy())
    result = game.host.execute(plan, "handle", [1, 2, 3])
    assert result.error is not None and result.error.code == "R-BINDING-DENIED"


def test_sinks_receive_messages_and_backpressure_keeps_them_queued(game: GameWorld) -> None:
    game.hub.install("alice", load_envelope(), player_policy())
    taken: list[str] = []
    room = {"left": 2}

    def sink(message: object) -> bool:
        if room["left"] == 0:
            return False
        room["left"] -= 1
        taken.append(message.text)  # type: ignore[attr-defined]
        return True

    game.hub.attach_sink("alice", sink)
    for monster in range(4):
        _damaged(game, monster, 1)
    assert len(taken) == 2
    assert [m.text for m in game.hub.drain("alice")] == [
        "monster 2 is low: health 1",
        "monster 3 is low: health 1",
    ]
    assert game.hub.counters("alice")["messages_to_sink"] == 2


def test_receipts_reports_and_messages_have_a_json_form(game: GameWorld) -> None:
    receipt = game.hub.install("alice", load_envelope(), player_policy())
    assert receipt.to_json()["planHash"] == receipt.plan_hash
    report = game.hub.publish("monster.damaged", {"monster": 4, "health": 1, "amount": 1})
    encoded = report.to_json()
    assert encoded["eventId"] == report.event_id
    assert [(d["owner"], d["outcome"]) for d in encoded["deliveries"]] == [("alice", "handled")]
    (message,) = game.hub.drain("alice")
    assert message.to_json() == {
        "pluginId": "low-health",
        "eventId": report.event_id,
        "eventType": "monster.damaged",
        "text": "monster 4 is low: health 1",
    }
