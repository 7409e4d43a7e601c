"""The game world behind the sample server, in process: monsters, the host's bindings, its events.

Trust split (what a client can and cannot reach):

* ``World`` is host state. Kernels never see it; they reach it only through the bindings below,
  each pinned to a capability the owner's policy must grant:
  ``game.world.listMonsters`` (``game.world.monster.read.list``), ``game.world.getHealth``
  (``game.world.monster.read.health``), ``game.world.kill`` (``game.world.monster.kill``) and
  ``host.message.send`` (``host.message.write``, from ``dotboxd.events``).
* A kill is a host command: it is applied only if the whole run succeeds.
* ``GameWorld`` wires the world to an ``EventHub``: ``damage`` changes a monster's health and
  publishes ``monster.damaged`` (fields ``monster``, ``health``, ``amount``), so installed event
  kernels see every hit; ``spawn`` is the trusted host method a server exposes as a service RPC.

``kill_monsters.dbx`` is the pushdown kernel and ``low_health_filter.*`` the event-kernel envelope
(``load_envelope`` joins the manifest and the module text into the JSON a client uploads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.events import EventContract, EventHub, EventType, MessageRouter, OwnerQuota
from dotboxd.host import BindingContext, BindingError, Cost, Effect, Int32, Policy, SandboxHost, host_binding

HERE = Path(__file__).resolve().parent
KILL_MONSTERS = HERE / "kill_monsters.dbx"
LOW_HEALTH_MODULE = HERE / "low_health_filter.dbx"
LOW_HEALTH_MANIFEST = HERE / "low_health_filter.manifest.json"

READ_LIST = "game.world.monster.read.list"
READ_HEALTH = "game.world.monster.read.health"
KILL = "game.world.monster.kill"
MESSAGE = "host.message.write"

CONTRACT = EventContract.of(
    "game.world",
    [
        EventType("monster.damaged", {"monster": "I32", "health": "I32", "amount": "I32"}),
        EventType("monster.spawned", {"monster": "I32", "health": "I32"}),
    ],
)
"""The events this host publishes, and their typed fields (what filters bind by name)."""

#: The most monsters one world holds (the list binding's result stays bounded).
MAX_MONSTERS = 10_000


class World:
    """Monsters by id with their health. Host state: only bindings and host code change it."""

    def __init__(self) -> None:
        self.monsters: dict[int, int] = {}
        self._next_id = 1

    def spawn(self, health: int) -> int:
        """Add a monster with ``health`` (1..1_000_000) and return its id."""
        if isinstance(health, bool) or not isinstance(health, int) or not 1 <= health <= 1_000_000:
            raise ValueError("health must be an int in 1..1000000")
        if len(self.monsters) >= MAX_MONSTERS:
            raise ValueError(f"the world holds at most {MAX_MONSTERS} monsters")
        monster = self._next_id
        self._next_id += 1
        self.monsters[monster] = health
        return monster

    def damage(self, monster: int, amount: int) -> int:
        """Lower a monster's health by ``amount`` (not below 0) and return the new health."""
        if monster not in self.monsters:
            raise KeyError(monster)
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise ValueError("amount must be a non-negative int")
        self.monsters[monster] = max(0, self.monsters[monster] - amount)
        return self.monsters[monster]


def world_bindings(world: World) -> list[BindingDescriptor]:
    """The fine-grained bindings a kernel may use on ``world``, each under its own capability."""

    @host_binding(
        id="game.world.listMonsters",
        capability=READ_LIST,
        effects=Effect.CPU | Effect.HOST_STATE_READ,
        cost=Cost(base_fuel=5, allocation_from_return_bytes=True),
        returns="List<I32>",
        context=True,
    )
    def list_monsters(ctx: BindingContext) -> list[int]:
        """Every monster id, ascending; one fuel per id on top of the base cost (work in proportion)."""
        ids = sorted(world.monsters)
        ctx.charge_fuel(len(ids))
        return ids

    @host_binding(
        id="game.world.getHealth",
        capability=READ_HEALTH,
        effects=Effect.CPU | Effect.HOST_STATE_READ,
        cost=Cost(base_fuel=2),
    )
    def get_health(monster: Int32) -> Int32:
        """A monster's health (NotFound for an id that is not in the world)."""
        health = world.monsters.get(monster)
        if health is None:
            raise BindingError("NotFound", "no such monster")
        return health

    @host_binding(
        id="game.world.kill",
        capability=KILL,
        effects=Effect.CPU | Effect.HOST_STATE_WRITE,
        cost=Cost(base_fuel=10, max_calls_per_run=MAX_MONSTERS),
        context=True,
    )
    def kill(ctx: BindingContext, monster: Int32) -> bool:
        """Queue the removal of ``monster``; applied only when the whole run succeeds."""
        if monster not in world.monsters:
            return False
        ctx.enqueue("kill", {"monster": monster}, apply=lambda: world.monsters.pop(monster, None))
        return True

    return [list_monsters, get_health, kill]


def load_envelope() -> dict[str, Any]:
    """The low-health plugin envelope as a client uploads it: the manifest file plus the module text."""
    envelope: dict[str, Any] = json.loads(LOW_HEALTH_MANIFEST.read_text(encoding="utf-8"))
    envelope["module"] = LOW_HEALTH_MODULE.read_text(encoding="utf-8")
    return envelope


def player_policy(max_fuel: int = 100_000, max_wall_time_ms: int = 2_000) -> Policy:
    """What a player's kernels are granted: read the world, kill monsters, message their owner.
    Fuel is the real bound on a run; the wall-time limit is a backstop, generous enough that a
    busy machine descheduling the process never ends a small run as a Timeout."""
    return (
        Policy.builder()
        .grant(READ_LIST)
        .grant(READ_HEALTH)
        .grant(KILL)
        .grant(MESSAGE)
        .with_fuel(max_fuel)
        .with_max_wall_time_ms(max_wall_time_ms)
        .build()
    )


class GameWorld:
    """A world, its sandbox host and its event hub, wired together (the server's in-process core)."""

    def __init__(self, *, quota: OwnerQuota | None = None, **hub_options: Any) -> None:
        self.world = World()
        self.router = MessageRouter()
        self.host = SandboxHost(bindings=[*world_bindings(self.world), self.router.binding])
        self.hub = EventHub(self.host, CONTRACT, router=self.router, default_quota=quota, **hub_options)

    def spawn(self, health: int) -> int:
        """The trusted host method (a service RPC on the server): add a monster, publish it."""
        monster = self.world.spawn(health)
        self.hub.publish("monster.spawned", {"monster": monster, "health": health})
        return monster

    def damage(self, monster: int, amount: int) -> int:
        """Hit a monster and publish ``monster.damaged`` for the installed event kernels."""
        health = self.world.damage(monster, amount)
        self.hub.publish("monster.damaged", {"monster": monster, "health": health, "amount": amount})
        return health
