"""The state of one run, shared by every backend, and the narrow view of it a binding receives.

``RunContext`` owns the meter, the audit log and the command buffer of a run and answers the
run-time policy questions (is a capability granted now? may async bindings run?). Backends hold a
``RunContext``; bindings never do. A binding declared with ``context=True`` receives a
``BindingContext`` instead (digest 4.3: run id, its grant's parameters, audit, command queue, fuel
and allocation charges, cancellation and remaining wall time) and nothing else - no policy object,
no meter, no other binding, no way to reach the kernel's values.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dotboxd.core.bindings import ASYNC_CAPABILITY, BindingDescriptor
from dotboxd.core.values import utf16_len
from dotboxd.runtime.audit import AuditEvent, AuditLog, Observer
from dotboxd.runtime.commands import Command, CommandBuffer
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import CancelToken, Meter, MeterLimits

if TYPE_CHECKING:
    from dotboxd.validator.plan import ExecutionPlan


@lru_cache(maxsize=256)
def _meter_limits(limits: object) -> MeterLimits:
    """The meter's view of a policy's (frozen, hashable) limits, computed once per limits value."""
    return MeterLimits.from_object(limits)


class RunContext:
    """Everything a backend needs besides the plan's code: meter, audit, commands, policy gates."""

    __slots__ = ("async_enabled", "audit", "commands", "meter", "plan", "run_id")

    def __init__(
        self,
        plan: ExecutionPlan,
        *,
        run_id: str | None = None,
        cancel: CancelToken | None = None,
        observers: Iterable[Observer] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.plan = plan
        self.run_id = run_id or uuid.uuid4().hex
        policy = plan.policy
        self.meter = Meter(_meter_limits(policy.limits), cancel=cancel, clock=clock)
        if policy.deterministic:
            logical = (policy.logical_now_unix_ms or 0) / 1000.0
            audit_clock: Callable[[], float] = lambda: logical  # noqa: E731 - a constant clock
        else:
            audit_clock = time.time
        self.audit = AuditLog(self.run_id, audit_clock, observers)
        self.commands = CommandBuffer()
        self.async_enabled = policy.is_granted(ASYNC_CAPABILITY)

    def is_granted(self, capability: str) -> bool:
        """The run-time RequireCapability test (granted now: not expired, not revoked)."""
        return self.plan.policy.is_granted(capability)

    def require_capability(self, capability: str, binding_id: str | None = None) -> None:
        """PermissionDenied (with a PolicyDenied audit event) unless ``capability`` is granted now.
        The message names the capability, never the grant or the policy."""
        if self.is_granted(capability):
            return
        self.audit.write(
            "PolicyDenied",
            success=False,
            binding_id=binding_id,
            capability_id=capability,
            resource_id=f"capability:{capability}",
            error_code="PermissionDenied",
            message=f"capability {capability} denied",
        )
        raise SandboxError("R-CAPABILITY-DENIED", f"capability '{capability}' is not granted")


class BindingContext:
    """What a binding may touch during one call. Invalid once the call returns."""

    __slots__ = ("_active", "_binding", "_run")

    def __init__(self, run: RunContext, binding: BindingDescriptor) -> None:
        self._run = run
        self._binding = binding
        self._active = True

    def _check(self) -> None:
        if not self._active:
            raise RuntimeError("this binding context belongs to a finished call")

    def close(self) -> None:
        self._active = False

    @property
    def run_id(self) -> str:
        return self._run.run_id

    @property
    def binding_id(self) -> str:
        return self._binding.id

    @property
    def grant_parameters(self) -> Mapping[str, str]:
        """The trusted parameters of the grant covering this binding's capability (empty if none)."""
        cap = self._binding.capability
        grant = self._run.plan.policy.grant_for(cap) if cap else None
        return MappingProxyType(dict(grant.parameters)) if grant else MappingProxyType({})

    @property
    def cancelled(self) -> bool:
        try:
            self._run.meter.check_cancelled()
        except SandboxError:
            return True
        return False

    def remaining_seconds(self) -> float:
        """Wall time left in the run (raises Timeout when none is left)."""
        return self._run.meter.remaining_seconds()

    def charge_fuel(self, amount: int) -> None:
        self._check()
        self._run.meter.fuel(_non_negative(amount))

    def charge_allocation(self, amount: int) -> None:
        self._check()
        self._run.meter.alloc(_non_negative(amount))

    def charge_file_read(self, amount: int) -> None:
        self._check()
        self._run.meter.file_read(_non_negative(amount))

    def charge_file_write(self, amount: int) -> None:
        self._check()
        self._run.meter.file_write(_non_negative(amount))

    def charge_network_read(self, amount: int) -> None:
        self._check()
        self._run.meter.network_read(_non_negative(amount))

    def charge_network_write(self, amount: int) -> None:
        self._check()
        self._run.meter.network_write(_non_negative(amount))

    def charge_log_event(self, message: str) -> None:
        self._check()
        self._run.meter.log_event(utf16_len(message))

    def enqueue(
        self, kind: str, payload: Mapping[str, Any] | None = None, apply: Callable[[], None] | None = None
    ) -> Command:
        """Queue a host-state change; it is applied only if the whole run succeeds."""
        self._check()
        return self._run.commands.enqueue(kind, payload, apply, self._binding.id)

    def audit(
        self,
        resource_id: str | None = None,
        *,
        success: bool = True,
        error_code: str | None = None,
        message: str | None = None,
        bytes: int | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> AuditEvent:
        """Write this binding's audit event (its audit kind; sanitized resource id and message)."""
        self._check()
        b = self._binding
        return self._run.audit.write(
            b.audit_kind.value,
            success=success,
            binding_id=b.id,
            capability_id=b.capability,
            effect=int(b.effects),
            resource_id=resource_id if resource_id is not None else f"binding:{b.id}",
            error_code=None if success else (error_code or "BindingFailure"),
            message=message,
            bytes=bytes,
            fields=fields,
        )


def _non_negative(amount: int) -> int:
    if type(amount) is not int or amount < 0:
        raise ValueError("charges are non-negative integers")
    return amount
