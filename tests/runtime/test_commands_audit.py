"""Nothing half-applied (host commands only on success) and the audit trail of a run."""

from __future__ import annotations

import json
from typing import Any

from dotboxd.host import BindingContext, Policy, SandboxHost
from dotboxd.runtime.audit import AuditLog, sanitize, sanitize_resource
from tests.probes import audit_probe

from .kernels import appending_binding, module, world_binding


def _host(world: list[int], **kwargs: Any) -> SandboxHost:
    return SandboxHost(bindings=[appending_binding("world.add", "add", "item", world)], **kwargs)


def _policy(**limits: int) -> Policy:
    limits.setdefault("max_wall_time_ms", 60_000)
    return Policy.builder().grant("world.write").with_limits(**limits).build()


THREE_ADDS = module("a = world.add(1); b = world.add(2); c = world.add(3); return 0;")


def test_commands_apply_in_order_after_success() -> None:
    world: list[int] = []
    host = _host(world)
    result = host.execute(host.prepare(THREE_ADDS, _policy()))
    assert result.ok and world == [1, 2, 3] and result.commands_applied == 3
    assert [c.payload["item"] for c in result.commands] == [1, 2, 3]
    assert [c.sequence for c in result.commands] == [0, 1, 2]


def test_a_failing_run_applies_nothing() -> None:
    world: list[int] = []
    host = _host(world)
    src = module("a = world.add(1); b = world.add(2); return 1 / 0;")
    result = host.execute(host.prepare(src, _policy()))
    assert not result.ok and world == [] and result.commands == () and result.commands_applied == 0


def test_a_quota_hit_after_writes_applies_nothing() -> None:
    world: list[int] = []
    host = _host(world)
    result = host.execute(host.prepare(THREE_ADDS, _policy(max_host_calls=2)))
    assert result.error is not None and result.error.code == "R-QUOTA-HOST-CALLS"
    assert world == [] and result.commands == ()


def test_commands_can_be_left_to_the_host() -> None:
    world: list[int] = []
    host = _host(world)
    result = host.execute(host.prepare(THREE_ADDS, _policy()), apply_commands_on_success=False)
    assert result.ok and world == [] and len(result.commands) == 3


def test_a_failing_applier_is_reported_not_raised() -> None:
    bad = world_binding(
        "world.bad",
        lambda ctx: ctx.enqueue("bad", {}, apply=lambda: (_ for _ in ()).throw(RuntimeError("boom"))),
    )
    host = SandboxHost(bindings=[bad])
    result = host.execute(host.prepare(module("return world.bad();", "main() -> Bool"), _policy()))
    assert result.error is not None and (result.error.category, result.error.code) == (
        "HostFailure",
        "R-HOST-COMMAND",
    )


def test_audit_events_are_ordered_and_end_with_a_summary() -> None:
    world: list[int] = []
    seen: list[Any] = []
    host = _host(world, observers=[seen.append])
    result = host.execute(host.prepare(THREE_ADDS, _policy()))
    events = result.audit_events
    assert [e.sequence for e in events] == list(range(len(events)))
    assert [e.kind for e in events] == ["BindingCall"] * 3 + ["RunSummary", "HostCommands"]
    assert all(e.success == (e.error_code is None) for e in events)
    assert len({e.run_id for e in events}) == 1 and events[0].run_id == result.run_id
    applied = events[-1].fields
    assert (applied["queued"], applied["applied"], applied["appliedSequences"]) == (3, 3, "0,1,2")
    summary = events[-2].fields
    assert summary["fuelUsed"] == result.usage.fuel_used and summary["planHash"] == result.plan_hash
    assert summary["executionMode"] == "reference"
    assert seen == list(events)


def test_failed_run_summary_names_the_error() -> None:
    host = SandboxHost()
    result = host.execute(
        host.prepare(module("return 1 / 0;"), Policy.builder().with_max_wall_time_ms(60_000).build())
    )
    summary = result.audit_events[-1]
    assert summary.kind == "RunSummary" and not summary.success
    assert summary.error_code == "InvalidInput" and summary.fields["code"] == "R-ARITH-DIVIDE-BY-ZERO"


def test_observer_failures_are_isolated() -> None:
    def broken(event: Any) -> None:
        raise RuntimeError("observer down")

    host = _host([], observers=[broken])
    assert host.execute(host.prepare(THREE_ADDS, _policy())).ok


def test_audit_text_is_sanitized() -> None:
    assert "hunter2" not in sanitize("login failed: password=hunter2 for bob")
    assert "abc123" not in sanitize("Authorization: Bearer abc123")
    assert "\n" not in sanitize("line\nbreak")
    assert len(sanitize("x" * 1000)) <= 256
    assert sanitize_resource("file:../../etc/passwd") == "file:__/__/etc/passwd"
    assert sanitize_resource("player:57 <script>") == "player:57__script_"


def test_binding_written_audit_is_sanitized() -> None:
    @audit_probe("world.note", capability="world.write", returns="Bool", audit=None)
    def note(ctx: BindingContext) -> bool:
        ctx.audit("note:1", message="token=s3cr3t saved")
        return True

    host = SandboxHost(bindings=[note])
    result = host.execute(host.prepare(module("return world.note();", "main() -> Bool"), _policy()))
    assert result.ok
    assert "s3cr3t" not in json.dumps([e.to_json() for e in result.audit_events])


def test_deterministic_runs_use_the_logical_clock() -> None:
    host = SandboxHost()
    pol = Policy.builder().deterministic(1_700_000_000_000, 7).with_max_wall_time_ms(60_000).build()
    result = host.execute(host.prepare(module("return 1;"), pol))
    assert {e.timestamp for e in result.audit_events} == {1_700_000_000.0}


def test_audit_log_refuses_inconsistent_events() -> None:
    log = AuditLog("r", lambda: 0.0)
    for bad in ({"success": True, "error_code": "X"}, {"success": False}):
        try:
            log.write("BindingCall", **bad)  # type: ignore[arg-type]
        except ValueError:
            continue
        raise AssertionError("inconsistent event accepted")
