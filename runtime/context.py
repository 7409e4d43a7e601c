"""The state of one run, shared by every backend, and the narrow view of it a binding receives.

``RunContext`` owns the meter, the audit log and the command buffer of a run and answers the
run-time policy questions (is a capability granted now? may async bindings run?). Backends hold a
``RunContext``; bindings never do. A binding declared with ``context=True`` receives a
``BindingContext`` instead (run id, its grant's parameters, audit, command queue, fuel
and allocation charges, cancellation and remaining wall time) and nothing else - no policy object,
no meter, no other binding, no way to reach the kernel's values.
"""

from __future__ import annotations

import itertools
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dotboxd.core.bindings import ASYNC_CAPABILITY, BindingDescriptor
from dotboxd.core.values import utf16_len
from dotboxd.runtime.audit import AuditEvent, AuditLog, Observer
from dotboxd.runtime.awaiting import Awaiter
from dotboxd.runtime.commands import Command, CommandBuffer, PlannedState, Prepare
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import CancelToken, Meter, MeterLimits, ResourceUsage

if TYPE_CHECKING:
    from dotboxd.validator.plan import ExecutionPlan


@lru_cache(maxsize=256)
def _meter_limits(limits: object) -> MeterLimits:
    """The meter's view of a policy's (frozen, hashable) limits, computed once per limits value."""
    return MeterLimits.from_object(limits)


# --- run ids ---------------------------------------------------------------------------------------
# 32 lowercase hex digits: a random per-process prefix (the high 64 bits) and a counter (the low 64
# bits). Unique within the process and, with 64 random bits per process, across processes. The two
# halves live in one integer counter so that an id is one ``next`` and one ``bytes.hex`` - a uuid4,
# or formatting the halves separately, costs a visible share of a small kernel's whole call. Run ids
# name runs in audit logs; they are not secrets or capabilities.

_RUN_COUNTER = itertools.count((secrets.randbits(64) << 64) + 1)


def _reseed_run_ids() -> None:
    """A forked child must not repeat its parent's run ids."""
    global _RUN_COUNTER
    _RUN_COUNTER = itertools.count((secrets.randbits(64) << 64) + 1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_run_ids)


def new_run_id() -> str:
    """A fresh run id (32 lowercase hex digits)."""
    return next(_RUN_COUNTER).to_bytes(16, "big").hex()


def next_run_number() -> int:
    """A fresh run id as its number: ``run_id_text`` spells it. For a caller that may never need
    the text of most of the ids it takes (a batch of runs whose results are read lazily)."""
    return next(_RUN_COUNTER)


def run_number_source() -> Callable[[], int]:
    """``next_run_number`` without the call around it, for a loop that takes one number per row:
    the counter's own ``__next__``, read when asked (a forked child gets a new counter)."""
    return _RUN_COUNTER.__next__


def run_id_text(number: int) -> str:
    """The run id of a number from ``next_run_number`` (what ``new_run_id`` would have returned)."""
    return number.to_bytes(16, "big").hex()


class PlanRunFacts:
    """What every run of one plan shares, computed once: the meter's limits, the audit clock,
    whether any grant of the policy could ever cover ``dotboxd.runtime.async``, and the memo of the
    usage records of runs that consumed nothing but fuel (all under the same ``max_fuel``).

    Only facts that cannot change while the plan exists belong here (the policy's limits, grants and
    determinism settings are immutable). Whether the async capability is granted *now* is not: it
    depends on revocation and expiry, so a run still asks the policy - unless no grant could match
    at all, in which case the answer is "no" forever and the question is skipped.
    """

    __slots__ = ("async_possible", "audit_clock", "limits", "usage_memo")

    def __init__(self, plan: ExecutionPlan) -> None:
        policy = plan.policy
        self.limits = _meter_limits(policy.limits)
        # the ResourceUsage of the plan's runs that consumed only fuel, by fuel used (``Meter.usage``)
        self.usage_memo: dict[int, ResourceUsage] = {}
        if policy.deterministic:
            logical = (policy.logical_now_unix_ms or 0) / 1000.0
            self.audit_clock: Callable[[], float] = lambda: logical
        else:
            self.audit_clock = time.time
        self.async_possible = any(grant.matches(ASYNC_CAPABILITY) for grant in policy.grants)


_CLOSED_QUEUE = CommandBuffer()
_CLOSED_QUEUE.close()  # shared by finished runs that never queued anything: refuses every enqueue
_LAZY = threading.Lock()


class RunContext:
    """Everything a backend needs besides the plan's code: meter, audit, commands, policy gates.

    The audit log and the command queue are created when first used (most runs of small kernels
    write no event and queue no command before the run's end); ``finish_commands`` ends the queue.

    ``executed_by`` names the execution tier that actually ran the entrypoint when it differs from
    the backend that was asked (an optimized backend that fell back to, or in auto mode started on,
    the reference interpreter). The reference interpreter sets it to ``"reference"``; compiled code
    should set it to its own tier. None means "the backend that was asked".
    """

    __slots__ = (
        "_commands",
        "async_enabled",
        "audit_log",
        "awaiter",
        "executed_by",
        "facts",
        "meter",
        "observers",
        "plan",
        "relay",
        "run_id",
    )

    def __init__(
        self,
        plan: ExecutionPlan,
        run_id: str | None = None,
        cancel: CancelToken | None = None,
        observers: Iterable[Observer] = (),
        clock: Callable[[], float] = time.monotonic,
        facts: PlanRunFacts | None = None,
        started: float | None = None,
    ) -> None:
        """``run_id`` defaults to a fresh one; ``facts`` to the plan's (pass them when running the
        same plan repeatedly); ``started`` (on ``clock``) to now: the run's wall time counts from
        there. The arguments may be given by position, in this order."""
        if facts is None:
            facts = PlanRunFacts(plan)
        self.plan = plan
        self.facts = facts
        self.run_id = run_id or next(_RUN_COUNTER).to_bytes(16, "big").hex()  # new_run_id(), inlined
        self.meter = Meter(facts.limits, cancel, clock, started)
        self.observers = observers if type(observers) is tuple else tuple(observers)
        self.audit_log: AuditLog | None = None
        self._commands: CommandBuffer | None = None
        self.async_enabled = facts.async_possible and plan.policy.is_granted(ASYNC_CAPABILITY)
        self.executed_by: str | None = None
        # how a pending awaitable of an async binding is driven (``runtime.awaiting``); None: the
        # synchronous default. ``execute_async`` sets the suspending one of ``runtime.suspend``.
        self.awaiter: Awaiter | None = None
        # set only in an isolated worker (``dotboxd.isolation.kernel_worker``): every host-binding
        # call is handed to it whole, to be made by the host, never by this process
        self.relay: Callable[[RunContext, str, tuple[Any, ...]], Any] | None = None

    @property
    def audit(self) -> AuditLog:
        """The run's audit log, created on first use (``audit_log`` is None until then). Host
        ``observers`` receive every event as it is written."""
        log = self.audit_log
        if log is None:
            with _LAZY:
                log = self.audit_log
                if log is None:
                    log = self.audit_log = AuditLog(self.run_id, self.facts.audit_clock, self.observers)
        return log

    @property
    def commands(self) -> CommandBuffer:
        """The run's command queue (created on first use; closed for good once the run finished)."""
        queue = self._commands
        if queue is None:
            with _LAZY:
                queue = self._commands
                if queue is None:
                    queue = self._commands = CommandBuffer(self.facts.limits.max_commands)
        return queue

    def finish_commands(self, success: bool) -> tuple[Command, ...]:
        """End the run's queue: hand the commands over when the run succeeded, drop them all when it
        failed. Either way nothing can be queued afterwards."""
        queue = self._commands
        self._commands = _CLOSED_QUEUE
        if queue is None or queue is _CLOSED_QUEUE:
            return ()
        if success:
            return queue.close()
        queue.discard()
        return ()

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


def _metered(charge: Callable[[Meter, int], None], what: str) -> Callable[[BindingContext, int], None]:
    """A ``BindingContext.charge_*`` method: ``charge`` on the run's meter, for a context still in
    its call and an amount that is a non-negative integer."""

    def method(self: BindingContext, amount: int) -> None:
        self._check()
        charge(self._run.meter, _non_negative(amount))

    method.__doc__ = f"Charge ``amount`` {what} to the run (its quota error when that passes the limit)."
    return method


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
    def deterministic(self) -> tuple[bool, int | None, int | None]:
        """The policy's determinism settings: ``(deterministic, logicalNowUnixMillis, randomSeed)``.
        A binding that reads time or randomness must use the logical values when the first is true
        (the standard clock and random facades do)."""
        policy = self._run.plan.policy
        return (policy.deterministic, policy.logical_now_unix_ms, policy.random_seed)

    @property
    def calls_so_far(self) -> int:
        """How many calls of this binding the run has made, the current one included (the runtime
        counts a call before it invokes the binding, on every backend): run-local state a binding can
        key replayable behaviour on without sharing anything between runs."""
        return self._run.meter.calls_by_binding.get(self._binding.id, 0)

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

    # what a binding may charge to the run: each a meter counter, refused once the call returned
    charge_fuel = _metered(Meter.fuel, "fuel")
    charge_allocation = _metered(Meter.alloc, "allocated bytes")
    charge_file_read = _metered(Meter.file_read, "file bytes read")
    charge_file_write = _metered(Meter.file_write, "file bytes written")
    charge_network_read = _metered(Meter.network_read, "network bytes read")
    charge_network_write = _metered(Meter.network_write, "network bytes written")

    def charge_log_event(self, message: str) -> None:
        self._check()
        self._run.meter.log_event(utf16_len(message))

    def enqueue(
        self,
        kind: str,
        payload: Mapping[str, Any] | None = None,
        apply: Callable[[], None] | None = None,
        *,
        prepare: Prepare | None = None,
    ) -> Command:
        """Queue a host-state change; it is applied only if the whole run succeeds. Give ``prepare``
        for a change that can be staged and rolled back (all-or-nothing with the rest of the batch),
        or ``apply`` for one that cannot (it runs after every staged change committed and is
        reported exactly if it fails; see ``dotboxd.runtime.command_batch``)."""
        self._check()
        return self._run.commands.enqueue(kind, payload, apply, self._binding.id, prepare)

    @property
    def planned(self) -> PlannedState:
        """What the commands queued so far in this run will do (keys chosen by each command kind),
        so a call-time check can refuse a change that conflicts with an earlier queued one."""
        self._check()
        return self._run.commands.planned

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
