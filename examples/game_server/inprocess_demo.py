"""The game-world server's core without the network: what ``dotboxd serve`` does for one client.

A player installs the low-health event kernel (validated against the player's policy), monsters are
spawned and hit, the filter lets through only the low ones and the handler's messages land in the
player's outbox; the player raises the threshold (no re-validation), then one KillMonsters pushdown
clears the world below it, and the player disconnects (nothing is left behind).

Run it with ``python examples/game_server/inprocess_demo.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from world import KILL_MONSTERS, GameWorld, load_envelope, player_policy


def run_demo(print_line: Callable[[str], object] = print) -> dict[str, object]:
    """Run the scenario; return what happened (the tests check it)."""
    game = GameWorld()
    receipt = game.hub.install("player-1", load_envelope(), player_policy())
    print_line(f"installed {receipt.plugin_id} (plan {receipt.plan_hash[:12]}), settings {receipt.settings}")
    ogre, rat, slime = game.spawn(100), game.spawn(15), game.spawn(40)
    game.damage(ogre, 30)
    game.damage(rat, 1)
    game.hub.update_settings("player-1", "low-health", {"threshold": 50})
    game.damage(slime, 5)
    messages = [m.text for m in game.hub.drain("player-1")]
    for text in messages:
        print_line(f"message:   {text}")
    pushdown = game.host.prepare(KILL_MONSTERS, player_policy())
    result = game.host.execute(pushdown, "main", [50])
    game.host.release(pushdown)  # the client is done with its extension: the host forgets the plan
    print_line(
        f"pushdown:  killed {result.value} monsters in one run, fuel {result.fuel_used}; "
        f"left: {game.world.monsters}"
    )
    removed = game.hub.uninstall_owner("player-1")
    print_line(f"disconnect: {removed} plugin(s) unloaded, hub footprint {game.hub.footprint()}")
    return {"messages": messages, "killed": result.value, "left": dict(game.world.monsters)}


if __name__ == "__main__":
    run_demo()
