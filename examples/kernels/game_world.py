"""A game-world kernel: kill every monster in a list through the host's `game.world.kill` binding.

The binding writes host state, so it needs the capability `game.world.monster.write.kill`; a
policy that does not grant it makes the host refuse to install this kernel at all. dotboxd never
runs this file as Python: `dotboxd lower` parses and lowers it to the same module as
examples/game-world.dbk.
"""

from dotboxd.lang import I32, List, entrypoint, module, requires

module("monster-purge", version="1.0.0")
requires("game.world.monster.write.kill", reason="remove the monsters a quest has cleared")


@entrypoint
def main(monsters: List[I32]) -> I32:
    killed = 0
    for i in range(0, list.count(monsters)):
        if game.world.kill(monsters[i]):
            killed += 1
    return killed
