"""A small game world and a running server for the server tests (loopback, port 0, always stopped)."""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dotboxd.core.bindings import Cost, Int32, host_binding
from dotboxd.core.effects import Effect
from dotboxd.server import ServerState, ServerThread, build_app, parse_config

ALICE = "alice-token-0123456789"
BOB = "bob-token-9876543210"

HEALTH: dict[int, int] = {}


@host_binding(
    id="game.world.getHealth",
    cost=Cost(base_fuel=1),
    effects=Effect.CPU | Effect.HOST_STATE_READ,
    capability="game.world.monster.read.health",
)
def get_health(monster: Int32) -> Int32:
    return HEALTH.get(monster, 0)


def spawn(count: Int32, health: Int32) -> list[Int32]:
    """An RPC method only: kernels cannot call it (it is no binding)."""
    first = len(HEALTH)
    for index in range(first, first + count):
        HEALTH[index] = health
    return list(range(first, first + count))


def total_health(ids: list[Int32]) -> Int32:
    return sum(HEALTH.get(i, 0) for i in ids)


def get_health_rpc(monster: Int32) -> Int32:
    return HEALTH.get(monster, 0)


def explode(x: Int32) -> Int32:
    raise RuntimeError("secret host detail")


METHODS: dict[str, Any] = {
    "game.world.spawn": spawn,
    "game.world.totalHealth": total_health,
    "game.world.getHealth": get_health_rpc,
    "test.explode": explode,
}

GAME_POLICY = '{ grants = [{ id = "game.world.monster.read.health" }], limits = { maxHostCalls = 5000, maxFuel = 10000000, maxLoopIterations = 1000000, maxWallTimeMs = 5000 } }'


def config_text(**limits: Any) -> str:
    lines = "\n".join(f"{k} = {v!r}" for k, v in limits.items())
    return textwrap.dedent(
        f"""
        [limits]
        {lines}

        [tenants.alice]
        token_env = "T_ALICE"
        policy = {GAME_POLICY}

        [tenants.bob]
        token_env = "T_BOB"
        """
    ).replace("\n        ", "\n")


@contextlib.contextmanager
def running_server(**limits: Any) -> Iterator[tuple[ServerThread, ServerState]]:
    config = parse_config(config_text(**limits), Path("."), {"T_ALICE": ALICE, "T_BOB": BOB})
    state = ServerState(config, bindings=[get_health], methods=METHODS)
    HEALTH.clear()
    with ServerThread(build_app(state), config.limits) as server:
        yield server, state


def auth(token: str = ALICE) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


SPIN = """
module "spin" version "1.0.0";

entrypoint fn main(n I32) -> I32 {
    total = 0;
    for i in 0 .. n {
        total = (total + i) % 1000;
    }
    return total;
}
"""
"""A kernel that only burns fuel (no bindings): a tenant that is slow on purpose."""

SUM_HEALTH = """
module "sum-health" version "1.0.0";

requires "game.world.monster.read.health" reason "add up monster health";

entrypoint fn main(count I32) -> I32 {
    total = 0;
    for i in 0 .. count {
        total = total + game.world.getHealth(i);
    }
    return total;
}
"""
