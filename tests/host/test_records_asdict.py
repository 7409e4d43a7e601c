"""``dataclasses.asdict``/``astuple`` of the other records a host receives: plans and policies,
event contracts and the event hub's answers, plugin load records, distributed partition results.

Their read-only mapping fields were ``MappingProxyType`` views (which cannot be deep-copied); now
``core.read_only.ReadOnlyDict``. Two more things stood in the way and are handles, not data: a
policy's ``Revocations`` (it holds a lock) and a plan (its node tables are keyed by the identity of
its module's nodes). Both are their own copy, and that is also what keeps a copied plan revocable.
Not covered, by design: ``LoadedPlugin`` holds the live plugin object (a module with the process's
authority), which is no data to copy; its ``record`` is what a host logs.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import textwrap
from pathlib import Path

import pytest

from dotboxd.distributed import job_spec
from dotboxd.distributed.outcome import JobResult
from dotboxd.distributed.tasks import run_partition
from dotboxd.events.contracts import EventContract, EventType
from dotboxd.host import Policy, SandboxHost
from dotboxd.plugins import PluginManager
from tests.distributed.kernels import EVENTS, ROOMY, SETUP
from tests.distributed.worker_setup import bindings

from ..runtime.kernels import appending_binding
from .record_shapes import assert_converts
from .test_result_pickling import WRITE

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "game_server"

PLUGIN = """
from dotboxd.host import Cost, Effect, host_binding

name = "tick"
version = "1.2.3"


@host_binding(id="probe.tick", capability="probe.tick", effects=Effect.CPU | Effect.HOST_STATE_READ, cost=Cost(base_fuel=1))
def tick() -> bool:
    return True


def setup(registry):
    registry.add_binding(tick)
    registry.add_event_contract("tick.ticked", {"type": "object"})


def teardown():
    pass
"""


def _write_plan() -> tuple[SandboxHost, Policy]:
    host = SandboxHost([appending_binding("world.write", "write", "n", [])])
    return host, Policy.builder().grant("world.write").with_input_bounds("main", n=(0, 100)).build()


def test_plans_policies_and_grants_convert() -> None:
    host, policy = _write_plan()
    plan = host.prepare(WRITE, policy)
    with_parameters = Policy.builder().grant("files.read", parameters={"root": "/srv"}).build()
    for record in (plan, policy, with_parameters, *with_parameters.grants, plan.functions["main"]):
        assert_converts(record)
    assert dataclasses.asdict(with_parameters)["grants"][0]["parameters"] == {"root": "/srv"}
    assert dataclasses.asdict(policy)["input_bounds"] == {"main": {"n": (0, 100)}}
    assert dataclasses.asdict(plan)["functions"]["main"]["is_entrypoint"] is True


def test_a_copied_plan_runs_and_stays_revocable() -> None:
    """A deep copy of a plan (or of anything holding one) is the plan itself: it runs as the plan
    does, and revoking a capability of its policy refuses it (a snapshot of the revocations would
    have kept the capability alive in the copy)."""
    host, policy = _write_plan()
    plan = host.prepare(WRITE, policy)
    copied_plan = copy.deepcopy(plan)
    copied_policy = copy.deepcopy(policy)
    holder = copy.deepcopy({"plan": plan})
    assert copied_plan is plan and holder["plan"] is plan
    assert copied_policy == policy and copied_policy.revocations is policy.revocations
    assert host.execute(copied_plan, "main", [3]).ok
    policy.revoke("world.write")
    refused = host.execute(copied_plan, "main", [3])
    assert refused.error is not None and refused.error.code == "E-POLICY-REVOKED"
    assert copied_policy.is_revoked("world.write")
    with pytest.raises(Exception, match="revoked"):
        host.prepare(WRITE, copied_policy)


def test_event_kernel_records_convert() -> None:
    """Contracts a host builds, and every answer of the hub: install receipt, publish report and its
    deliveries, the outbox's messages, a plugin's status."""
    contract = EventContract.of("c", [EventType("monster.damaged", {"monster": "I32", "health": "I32"})])
    assert_converts(contract)
    assert dataclasses.asdict(contract)["events"]["monster.damaged"]["fields"] == {
        "monster": "I32",
        "health": "I32",
    }
    if str(SAMPLE) not in sys.path:
        sys.path.insert(0, str(SAMPLE))
    from world import GameWorld, load_envelope, player_policy  # the game-world sample

    game = GameWorld()
    receipt = game.hub.install("alice", load_envelope(), player_policy())
    report = game.hub.publish("monster.damaged", {"monster": 1, "health": 3, "amount": 1})
    messages = game.hub.drain("alice")
    assert messages, "the event passed the filter and was handled"
    for record in (
        receipt,
        report,
        *report.deliveries,
        *messages,
        game.hub.status("alice", receipt.plugin_id),
    ):
        assert_converts(record)


def test_plugin_load_records_convert(tmp_path: Path) -> None:
    path = tmp_path / "tick_plugin.py"
    path.write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    manager = PluginManager(SandboxHost())
    loaded = manager.load_path(path)
    manager.unload("tick")
    assert [r.action for r in manager.audit_trail] == ["load", "unload"]
    for record in manager.audit_trail:
        assert_converts(record)
    assert dataclasses.asdict(loaded.record)["file_hashes"] == dict(loaded.record.file_hashes)
    assert dict(loaded.registry.events["tick.ticked"]) == {"type": "object"}
    with pytest.raises(TypeError):
        loaded.registry.events["tick.ticked"]["type"] = "array"  # type: ignore[index]


def test_partition_and_job_results_convert() -> None:
    """A distributed partition run in this process (what a worker returns): values, a failed
    record, usage, audit counts."""
    spec = job_spec(SandboxHost(bindings()).prepare(EVENTS, ROOMY), SETUP)
    part = run_partition(spec, "map", 0, [1, 0, 7], "inverse", False, False, None)
    assert part.errors and part.values
    for record in (spec, part, JobResult((part,))):
        assert_converts(record)
