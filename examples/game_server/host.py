"""The sample server's host program (``[server] host_module`` in ``server.toml``): trusted code.

``build_host()`` wires the game world of ``world.py`` for ``dotboxd serve``: the sandbox host with
the world's bindings and ``host.message.send``, the event hub that runs clients' event kernels,
and two service RPC methods - ``game.world.spawn`` and ``game.world.damage`` - which are trusted
host code: a client calls them over HTTP, but no kernel can (they are not bindings).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from world import GameWorld  # noqa: E402

from dotboxd.host import Int32  # noqa: E402
from dotboxd.server import HostParts  # noqa: E402


def build_host() -> HostParts:
    game = GameWorld()

    def spawn(health: Int32) -> Int32:
        """Add a monster with ``health`` (1..1000000); publishes monster.spawned."""
        return game.spawn(health)

    def damage(monster: Int32, amount: Int32) -> Int32:
        """Hit a monster; publishes monster.damaged (what the low-health filter watches)."""
        return game.damage(monster, amount)

    def health(monster: Int32) -> Int32:
        """One monster's health (0 when it is gone): the fine-grained read, one round trip each."""
        return game.world.monsters.get(monster, 0)

    methods = {"game.world.spawn": spawn, "game.world.damage": damage, "game.world.health": health}
    return HostParts(game.host, methods, game.hub)
