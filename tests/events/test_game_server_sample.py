"""The game-world sample (examples/game_server), in process: the KillMonsters pushdown through
SandboxHost on both backends, and the low-health event kernel through EventHub, end to end."""

from __future__ import annotations

import pytest
from world import (
    KILL,
    KILL_MONSTERS,
    MESSAGE,
    READ_HEALTH,
    READ_LIST,
    GameWorld,
    load_envelope,
    player_policy,
)

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Policy


def _populated(healths: list[int]) -> GameWorld:
    game = GameWorld()
    for health in healths:
        game.world.spawn(health)
    return game


def test_kill_monsters_pushdown_kills_below_the_threshold_on_both_backends() -> None:
    healths = [50, 10, 30, 5, 19, 20, 99]
    outcomes = []
    for backend in ("reference", "optimized"):
        game = _populated(healths)
        plan = game.host.prepare(KILL_MONSTERS, player_policy())
        result = game.host.execute(plan, "main", [20], backend=backend)
        assert result.ok, result.error
        outcomes.append((result.value, result.fuel_used, result.binding_calls, dict(game.world.monsters)))
    assert outcomes[0] == outcomes[1]
    value, _, calls, monsters = outcomes[0]
    assert value == 3
    assert monsters == {1: 50, 3: 30, 6: 20, 7: 99}
    assert calls == {"game.world.listMonsters": 1, "game.world.getHealth": 7, "game.world.kill": 3}


def test_pushdown_cost_grows_with_the_world() -> None:
    """One invocation replaces N round trips, and its fuel is charged in proportion to N."""
    fuel = {}
    for count in (10, 100):
        game = _populated([50] * count)
        result = game.host.execute(game.host.prepare(KILL_MONSTERS, player_policy()), "main", [20])
        fuel[count] = result.fuel_used
    assert fuel[100] > 9 * fuel[10]


def test_pushdown_without_the_kill_grant_is_refused_at_install() -> None:
    game = _populated([5])
    read_only = Policy.builder().grant(READ_LIST).grant(READ_HEALTH).grant(MESSAGE).build()
    with pytest.raises(DotBoxDError) as refused:
        game.host.prepare(KILL_MONSTERS, read_only)
    assert refused.value.code == "E-POLICY-CAP"
    assert refused.value.diagnostic.evidence["capability"] == KILL
    assert game.world.monsters == {1: 5}


def test_a_failed_pushdown_applies_no_kill() -> None:
    game = _populated([1] * 50)
    starved = Policy.builder().grant(READ_LIST).grant(READ_HEALTH).grant(KILL).with_fuel(300).build()
    result = game.host.execute(game.host.prepare(KILL_MONSTERS, starved), "main", [20])
    assert result.error is not None and result.error.code == "R-QUOTA-FUEL"
    assert len(game.world.monsters) == 50


def test_low_health_filter_notifies_its_owner_end_to_end() -> None:
    game = GameWorld()
    receipt = game.hub.install("player-1", load_envelope(), player_policy())
    assert receipt.plan_hash
    ogre = game.spawn(100)
    rat = game.spawn(15)
    game.damage(ogre, 30)  # 70: not low
    game.damage(rat, 1)  # 14: low (threshold 20)
    game.hub.update_settings("player-1", "low-health", {"threshold": 80})
    game.damage(ogre, 5)  # 65: low under the new threshold
    texts = [m.text for m in game.hub.drain("player-1")]
    assert texts == [f"monster {rat} is low: health 14", f"monster {ogre} is low: health 65"]
    # then the pushdown clears every monster below 80 in one run
    result = game.host.execute(game.host.prepare(KILL_MONSTERS, player_policy()), "main", [80])
    assert result.value == 2 and game.world.monsters == {}
    game.hub.uninstall_owner("player-1")
    assert game.hub.installed() == []


def test_the_in_process_demo_runs_the_whole_scenario() -> None:
    from inprocess_demo import run_demo

    lines: list[str] = []
    report = run_demo(lines.append)
    assert report == {
        "messages": ["monster 2 is low: health 14", "monster 3 is low: health 35"],
        "killed": 2,
        "left": {1: 70},
    }
    assert lines[-1].startswith("disconnect: 1 plugin(s) unloaded")
