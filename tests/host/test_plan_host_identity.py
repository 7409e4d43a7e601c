"""A plan runs only against the executing host's own binding implementations.

A plan keeps the descriptors it was validated with, callables included. Before this check, a plan
prepared on host A and executed on host B called A's binding (and changed A's state) as long as
B's catalogue had the same contracts. Now B refuses it with ``E-PLAN-BINDINGS`` and nothing runs;
hosts that share one catalogue (the same binding objects) share their plans.
"""

from __future__ import annotations

from typing import Any

from dotboxd.host import Cost, Effect, Policy, SandboxHost, host_binding

CAP = "probe.kill"
SRC = 'module "t" version "1.0.0";\nentrypoint fn main(n I32) -> Bool { return probe.kill(n); }\n'
POLICY = Policy.builder().grant(CAP).with_max_wall_time_ms(60_000).build()


def _kill(calls: list[int]) -> Any:
    """One host's implementation of ``probe.kill``: the same contract on every host, its own state."""

    @host_binding(
        id="probe.kill",
        capability=CAP,
        effects=Effect.CPU | Effect.HOST_STATE_WRITE,
        cost=Cost(base_fuel=2),
        parameters=["I32"],
        returns="Bool",
    )
    def kill(n: int) -> bool:
        calls.append(n)
        return True

    return kill


def test_plan_from_another_host_does_not_touch_the_preparing_hosts_state() -> None:
    a_calls: list[int] = []
    b_calls: list[int] = []
    host_a = SandboxHost([_kill(a_calls)])
    host_b = SandboxHost([_kill(b_calls)])
    assert host_a.catalog.manifest_hash == host_b.catalog.manifest_hash  # only the code differs
    plan = host_a.prepare(SRC, POLICY)
    result = host_b.execute(plan, "main", [7])
    assert result.error is not None
    assert (result.error.category, result.error.code) == ("ValidationError", "E-PLAN-BINDINGS")
    assert "prepare the module on the host that executes it" in (
        result.error.diagnostic.hint if result.error.diagnostic else ""
    )
    assert a_calls == [] and b_calls == []  # neither host's binding ran
    assert result.usage.fuel_used == 0


def test_plan_prepared_on_the_executing_host_runs_its_own_binding() -> None:
    a_calls: list[int] = []
    b_calls: list[int] = []
    SandboxHost([_kill(a_calls)])
    host_b = SandboxHost([_kill(b_calls)])
    result = host_b.execute(host_b.prepare(SRC, POLICY), "main", [7])
    assert result.ok and b_calls == [7] and a_calls == []


def test_hosts_sharing_one_catalogue_share_plans() -> None:
    calls: list[int] = []
    first = SandboxHost([_kill(calls)])
    second = SandboxHost(first.catalog)
    assert second.execute(first.prepare(SRC, POLICY), "main", [3]).ok and calls == [3]


def test_replacing_a_hosts_catalogue_with_new_implementations_refuses_old_plans() -> None:
    old_calls: list[int] = []
    new_calls: list[int] = []
    host = SandboxHost([_kill(old_calls)])
    plan = host.prepare(SRC, POLICY)
    assert host.execute(plan, "main", [1]).ok and old_calls == [1]
    host.catalog = SandboxHost([_kill(new_calls)]).catalog
    refused = host.execute(plan, "main", [2])
    assert refused.error is not None and refused.error.code == "E-PLAN-BINDINGS"
    assert old_calls == [1] and new_calls == []
    assert host.execute(host.prepare(SRC, POLICY), "main", [3]).ok and new_calls == [3]
