"""A binding's own exception reaches the trusted host (its log, its live observers) and nothing else:
the kernel and every serialized result see only the sanitized ``R-BINDING-FAILED``."""

from __future__ import annotations

import json
import logging
import traceback

import pytest

from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.audit import AuditEvent
from dotboxd.runtime.binding_call import LOGGER
from tests.probes import read_probe

from .kernels import module

CAP = "inventory.read"
SECRET = "tenant-42-api-key=sk_live_SECRET"


@read_probe("inventory.count", capability=CAP, parameters=["String"], returns="I32")
def count_items(name: str) -> int:
    stock: dict[str, int] = {"apple": 3}
    return stock[name + SECRET]  # KeyError whose text holds a secret


def _execute(backend: str, observers: list[AuditEvent] | None = None) -> ExecutionResult:
    host = SandboxHost(bindings=[count_items], observers=[observers.append] if observers is not None else [])
    plan = host.prepare(module('return inventory.count("pear");'), Policy.builder().grant(CAP).build())
    return host.execute(plan, backend=backend)


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_binding_keyerror_is_logged_with_its_traceback_for_the_host(
    backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger=LOGGER.name):
        result = _execute(backend)
    assert result.error is not None
    assert (result.error.category, result.error.code) == ("BindingFailure", "R-BINDING-FAILED")
    records = [r for r in caplog.records if r.name == "dotboxd.binding"]
    assert len(records) == 1
    record = records[0]
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert record.exc_info[0] is KeyError
    assert record.__dict__["dotboxd_binding_id"] == "inventory.count"
    assert record.__dict__["dotboxd_run_id"] == result.run_id
    frames = "".join(traceback.format_exception(*record.exc_info))
    assert "count_items" in frames and SECRET in frames  # the host sees where and why


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_observers_get_the_binding_exception_on_the_failure_event(backend: str) -> None:
    seen: list[AuditEvent] = []
    result = _execute(backend, seen)
    live = [e for e in seen if e.kind == "BindingCall" and not e.success]
    assert len(live) == 1 and isinstance(live[0].host_exception, KeyError)
    stored = [e for e in result.audit_events if e.kind == "BindingCall" and not e.success]
    assert stored == live  # the same event, apart from the host-only exception
    assert stored[0].host_exception is None


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_binding_exception_never_reaches_the_kernel_or_the_result_json(backend: str) -> None:
    seen: list[AuditEvent] = []
    result = _execute(backend, seen)
    assert result.error is not None and result.error.safe_message == "binding 'inventory.count' failed"
    exported = json.dumps(result.to_json()) + json.dumps([e.to_json() for e in seen]) + repr(result)
    for fragment in (SECRET, "KeyError", "Traceback", "count_items"):
        assert fragment not in exported
    assert all(e.host_exception is None for e in result.audit_events)
