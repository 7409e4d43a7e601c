"""The README example: a game-world host exposes one state-writing binding to untrusted kernels.

The host declares ``game.world.kill(id: I32) -> Bool`` pinned to the capability
``game.world.monster.write.kill`` with effects ``Cpu | HostStateWrite``. The kernel in
``examples/game-world.dbk`` kills a list of monsters. Three runs show the contract:

1. the policy grants the capability: the kernel runs, the kills are applied, fuel is reported;
2. the policy does not: installing the kernel is refused and it never runs;
3. the grant is there but the fuel budget is too small: the run fails and *none* of its kills are
   applied (bindings queue host commands; the host applies them only when a run succeeds).

Run it with ``python examples/game_world_demo.py`` (``make demo`` runs it too).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import BindingContext, Cost, Effect, Int32, Policy, SandboxHost, host_binding

KERNEL = Path(__file__).with_name("game-world.dbk")
CAPABILITY = "game.world.monster.write.kill"


class World:
    """The host's own state; kernels never see this object, only the binding's results."""

    def __init__(self, monsters: set[int]) -> None:
        self.monsters = set(monsters)
        self.kill_calls = 0


def make_binding(world: World) -> BindingDescriptor:
    @host_binding(
        id="game.world.kill",
        capability=CAPABILITY,
        effects=Effect.CPU | Effect.HOST_STATE_WRITE,
        cost=Cost(base_fuel=10, max_calls_per_run=100),
        context=True,
    )
    def kill(ctx: BindingContext, monster: Int32) -> bool:
        """Kill one monster; the change is queued and applied only if the whole run succeeds."""
        world.kill_calls += 1
        if monster not in world.monsters:
            return False
        ctx.enqueue("kill", {"monster": monster}, apply=lambda: world.monsters.discard(monster))
        return True

    return kill


def run_demo(print_line: Callable[[str], object] = print) -> dict[str, object]:
    """Run the three scenarios; return what happened (the tests check it)."""
    source = KERNEL.read_text(encoding="utf-8")
    report: dict[str, object] = {}

    # 1. granted
    world = World({1, 2, 3, 7})
    host = SandboxHost(bindings=[make_binding(world)])
    policy = Policy.builder().grant(CAPABILITY).build()
    plan = host.prepare(source, policy)
    result = host.execute(plan, "main", [[1, 2, 3, 4]])
    print_line(
        f"granted:   killed {result.value} monsters, fuel used {result.fuel_used} of {result.usage.max_fuel}"
    )
    print_line(f"           monsters left in the world: {sorted(world.monsters)}")
    report["granted"] = (result.ok, result.value, result.fuel_used, sorted(world.monsters))

    # 2. not granted: the install step refuses the kernel
    world = World({1, 2, 3, 7})
    host = SandboxHost(bindings=[make_binding(world)])
    try:
        host.prepare(source, Policy.default())
        report["denied"] = "installed"
    except DotBoxDError as refused:
        print_line(f"denied:    install rejected with {refused.code}: {refused.diagnostic.message}")
        print_line(f"           the kernel never ran ({world.kill_calls} binding calls)")
        report["denied"] = (refused.code, world.kill_calls)

    # 3. granted, but out of fuel half-way: nothing is half-applied
    world = World({1, 2, 3, 7})
    host = SandboxHost(bindings=[make_binding(world)])
    small = Policy.builder().grant(CAPABILITY).with_fuel(60).build()
    result = host.execute(host.prepare(source, small), "main", [[1, 2, 3]])
    error = result.error
    assert error is not None
    print_line(
        f"starved:   {error.category} after {world.kill_calls} kill(s); "
        f"monsters left in the world: {sorted(world.monsters)} (no kill applied)"
    )
    report["starved"] = (error.category, world.kill_calls, sorted(world.monsters))
    return report


if __name__ == "__main__":
    run_demo()
