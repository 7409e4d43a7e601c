"""``dataclasses.asdict`` and ``astuple`` of the results a host receives.

A host that logs or serializes results with ``asdict`` (the usual thing to do with a dataclass) has
every field value that is not a dataclass, list, tuple or dict deep-copied; the read-only mapping
fields (``binding_calls``, each audit event's ``fields``, each command's ``payload``) used to be
``MappingProxyType`` views, which cannot be copied, so ``asdict(result)`` raised. Checked (with
``record_shapes.assert_converts``: every field, in order, nested records converted, the result
unchanged and its mappings still read-only) on both backends, the fast lane's deferred results
with ``asdict`` as their first read, ``execute_many`` rows, a failed run with binding audit events
and an observer's host exception, import/validate refusals, and generated programs' results.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.audit import AuditEvent

from ..runtime.kernels import appending_binding, world_binding
from .record_shapes import assert_converts, assert_read_only
from .test_result_pickling import BACKENDS, PRED, WRITE, _generated_results, _host, many_results, refusals

FAILING = """module "f" version "1.0.0";
entrypoint fn main(n I32) -> Bool { sent = world.write(n); return 10 / (n - n) > 0; }"""
"""A run that calls a binding (a BindingCall event, a queued command, a binding-call count) and
then fails (the command dropped, the summary's error code)."""

RAISING = """module "r" version "1.0.0";
entrypoint fn main() -> Bool { return world.poke(); }"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_of_both_backends_convert(backend: str) -> None:
    world: list[int] = []
    host = _host(appending_binding("world.write", "write", "n", world))
    plan = host.prepare(WRITE, Policy.builder().grant("world.write").build())
    pred = host.prepare(PRED)
    results = [
        host.execute(plan, "main", [5], backend=backend),  # binding call, command applied
        host.execute(plan, "main", [6], backend=backend, apply_commands_on_success=False),
        host.execute(plan, "main", [0], backend=backend),
        host.execute(pred, "check", [7, 12], backend=backend),
        host.execute(pred, "check", ["7", 1], backend=backend),  # refused input
    ]
    assert results[0].binding_calls == {"world.write": 1} and results[0].commands_applied == 1
    for result in results:
        assert_converts(result)
    as_dict = dataclasses.asdict(results[0])
    assert as_dict["binding_calls"] == {"world.write": 1}
    assert as_dict["commands"][0]["payload"] == {"n": 5}
    assert as_dict["usage"] == dataclasses.asdict(results[0].usage)
    assert json.loads(json.dumps(as_dict["binding_calls"])) == {"world.write": 1}
    assert world == [5], "converting a result applies nothing"


@pytest.mark.parametrize("args", [[7, 12], [0, 12], ["7", 1], [2**31, 1], [7]])
def test_fast_lane_result_whose_first_read_is_asdict(args: list[Any]) -> None:
    """A deferred result (fields settled on first read) settles inside ``asdict`` and converts like
    an eager one - for every field, the value ``asdict`` put there is the one read afterwards."""
    host = _host()
    plan = host.prepare(PRED)
    host.execute(plan, "check", [1, 12], backend="optimized")  # compiles; later runs take the lane
    results = [host.execute(plan, "check", args, backend="optimized") for _ in range(2)]
    for result, convert in zip(results, (dataclasses.asdict, dataclasses.astuple), strict=True):
        assert object.__getattribute__(result, "_settle") is not None, "a deferred result"
        converted = convert(result)
        assert object.__getattribute__(result, "_settle") is None, "settled by the conversion"
        assert_converts(result)
        again = convert(result)
        assert converted == again


@pytest.mark.parametrize("backend", BACKENDS)
def test_execute_many_rows_convert(backend: str) -> None:
    _, _, batch = many_results(backend)
    last = dataclasses.asdict(batch[-1])  # a row alone, before the others were built
    assert last["ok"] is False and last["error"]["code"] == batch[-1].error.code  # type: ignore[union-attr]
    for row in batch:
        assert_converts(row)


@pytest.mark.parametrize("backend", BACKENDS)
def test_failed_run_with_error_and_audit_events_converts(backend: str) -> None:
    """The error (with its span), the binding's audit event, the summary with its error code, and
    each event alone: ``asdict(event)`` is how a host logs an audit trail."""
    host = _host(appending_binding("world.write", "write", "n", []))
    plan = host.prepare(FAILING, Policy.builder().grant("world.write").build())
    result = host.execute(plan, "main", [3], backend=backend)
    assert result.error is not None and result.error.code == "R-ARITH-DIVIDE-BY-ZERO"
    assert result.binding_calls == {"world.write": 1}
    kinds = [event.kind for event in result.audit_events]
    assert "BindingCall" in kinds and kinds[-1] == "RunSummary"
    assert_converts(result)
    for event in result.audit_events:
        assert_converts(event)
        assert dataclasses.asdict(event)["fields"] == dict(event.fields)
    summary = dataclasses.asdict(result.audit_events[-1])
    assert summary["fields"]["code"] == "R-ARITH-DIVIDE-BY-ZERO"
    assert dataclasses.asdict(result)["error"]["code"] == "R-ARITH-DIVIDE-BY-ZERO"


def test_observed_failure_with_a_host_exception_converts() -> None:
    """An observer's copy of a binding's failure event carries the host's exception."""

    def poke(ctx: Any) -> None:
        raise ValueError("the host's own bug")

    seen: list[AuditEvent] = []
    host = SandboxHost([world_binding("world.poke", poke)], observers=[seen.append])
    plan = host.prepare(RAISING, Policy.builder().grant("world.write").build())
    result = host.execute(plan, "main", [])
    assert result.error is not None and result.error.code == "R-BINDING-FAILED"
    failing = [e for e in seen if e.host_exception is not None]
    assert failing, "the observer saw the host exception"
    for event in seen:
        assert_converts(event)
    converted = dataclasses.asdict(failing[0])["host_exception"]
    assert type(converted) is ValueError and converted.args == ("the host's own bug",)
    assert_converts(result)


def test_refusals_before_a_run_convert() -> None:
    bad_json, bad_type = refusals()
    for result in (bad_json, bad_type):
        assert_converts(result)
    assert dataclasses.asdict(bad_type)["error"]["diagnostic"]["code"] == bad_type.error.diagnostic.code  # type: ignore[union-attr]


def test_mapping_fields_stay_read_only_after_conversion() -> None:
    """The result's own mappings refuse changes after ``asdict``, and the converted form's mappings
    are new objects: changing what ``asdict`` returned cannot reach the result."""
    host = _host(appending_binding("world.write", "write", "n", []))
    plan = host.prepare(WRITE, Policy.builder().grant("world.write").build())
    result = host.execute(plan, "main", [4], apply_commands_on_success=False)
    converted = dataclasses.asdict(result)
    assert_read_only(result.binding_calls, "binding_calls")
    assert_read_only(result.commands[0].payload, "payload")
    for event in result.audit_events:
        assert_read_only(event.fields, f"{event.kind}.fields")
    assert converted["binding_calls"] is not result.binding_calls
    mutable = dict(converted["binding_calls"])
    mutable["world.write"] = 99
    assert result.binding_calls == {"world.write": 1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.binding_calls = {}  # type: ignore[misc]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10_000))
def test_generated_results_convert(draw: int) -> None:
    """Property: whatever a generated program's run returns, on either backend, converts."""
    results: list[ExecutionResult] = _generated_results(draw)
    for result in results:
        assert_converts(result)
