"""The host-binding call sequence (spec/semantics.md section 7), identical for every backend.

Order, each step failing closed:

1. audit checkpoint;
2. the binding must be in the plan (else ValidationError ``R-PLAN-BINDING``);
3. its capability must be granted *now* (else PermissionDenied plus a PolicyDenied audit event);
4. one host call against ``maxHostCalls`` and the binding's ``maxCallsPerRun``;
5. its base fuel;
6. async backstop: an async binding without ``dotboxd.runtime.async`` is PermissionDenied; the
   deadline is checked;
7. invoke (context first when the binding asks for it); a pending awaitable is resolved per
   ``awaiting`` (never awaited without the grant; with it, by the run's ``awaiter``: on the
   caller's loop under ``execute_async``, on the host's loop thread under ``execute``);
8. cancellation and deadline check;
9. the return value is rebuilt and checked against the declared type (a wrong type, NaN, a ``../``
   path, a uri with userinfo, a host object: BindingFailure ``R-BINDING-RETURN``), its shape is
   charged, then ``perByteFuel`` x its string bytes;
10. audit: Summary/PerCall/FullInputOutput bindings get a success event from the runtime;
    PerResource bindings must have written one themselves (else ``R-BINDING-AUDIT``).

On any failure an audited binding gets a sanitized failure event (``binding:<id>``) unless it
wrote one, and the original error is kept. Host exceptions never leak to the kernel: their text,
type, path and traceback are dropped and the kernel sees ``R-BINDING-FAILED`` ("binding '<id>'
failed"). The trusted host still gets them, because a host cannot fix a binding it cannot see
fail: each is logged with its traceback on the ``dotboxd.binding`` logger (``LOGGER``), and the
observers' copy of the failure event carries it as ``host_exception``. The exception rides on the
``SandboxError`` only until that audit write and is cleared before the error travels on.
"""

from __future__ import annotations

import logging
from typing import Any

from dotboxd.core import costs, literal_rules
from dotboxd.core.bindings import ASYNC_CAPABILITY, AuditLevel, BindingDescriptor
from dotboxd.core.types import to_type_ref
from dotboxd.core.values import SandboxFault, Value, coerce_host_value, shape_of
from dotboxd.runtime import awaiting
from dotboxd.runtime.context import BindingContext, RunContext
from dotboxd.runtime.errors import BindingError, SandboxError

LOGGER = logging.getLogger("dotboxd.binding")
"""Where a binding's own exception is reported to the host (level ERROR, with ``exc_info``; the
record's ``dotboxd_binding_id`` and ``dotboxd_run_id`` attributes say which call failed)."""

_AUTO_AUDITED = frozenset({AuditLevel.SUMMARY, AuditLevel.PER_CALL, AuditLevel.FULL_INPUT_OUTPUT})


def call_binding(run: RunContext, binding_id: str, args: tuple[Value, ...]) -> Value:
    """Call the plan's binding ``binding_id`` with already-evaluated sandbox ``args``.

    In an isolated worker the run's ``relay`` makes the whole call (every step above) in the host
    process, which holds the bindings, the audit trail and the command queue."""
    relay = run.relay
    if relay is not None:
        value: Value = relay(run, binding_id, args)
        return value
    checkpoint = run.audit.checkpoint()
    desc = run.plan.binding(binding_id)
    if desc is None:
        raise SandboxError(
            "R-PLAN-BINDING", f"binding '{binding_id}' is not referenced by the execution plan"
        )
    try:
        return _call(run, desc, args, checkpoint)
    except SandboxError as error:
        host_exception, error.host_exception = error.host_exception, None
        _failure_audit(run, desc, checkpoint, error, host_exception)
        raise


def _call(run: RunContext, desc: BindingDescriptor, args: tuple[Value, ...], checkpoint: int) -> Value:
    meter = run.meter
    if desc.capability is not None:
        run.require_capability(desc.capability, desc.id)
    cost = desc.cost
    meter.host_call(desc.id, cost.max_calls_per_run if cost else None)
    if cost is not None and cost.base_fuel:
        meter.fuel(cost.base_fuel)
    if desc.is_async and not run.async_enabled:
        raise SandboxError(
            "R-ASYNC-DENIED", f"binding '{desc.id}' requires the '{ASYNC_CAPABILITY}' capability"
        )
    meter.check_deadline()
    raw = _invoke(run, desc, args)
    meter.check_deadline()
    value = _accept_return(run, desc, raw)
    if desc.audit in _AUTO_AUDITED:
        _binding_event(run, desc, success=True)
    elif desc.audit is AuditLevel.PER_RESOURCE and not run.audit.has_binding_event_since(
        desc.id, checkpoint, True
    ):
        raise SandboxError("R-BINDING-AUDIT", f"binding '{desc.id}' did not emit a required audit event")
    return value


def _invoke(run: RunContext, desc: BindingDescriptor, args: tuple[Value, ...]) -> Any:
    """Run the host function; translate whatever it does into a value or a SandboxError."""
    fn = desc.invoke
    if fn is None:
        raise SandboxError("R-BINDING-FAILED", f"binding '{desc.id}' failed")
    context = BindingContext(run, desc) if desc.takes_context else None
    try:
        raw = fn(context, *args) if context is not None else fn(*args)
        if awaiting.is_awaitable(raw):
            # Only a binding declared async may be awaited, and only under the async grant: a sync
            # binding that hands back a pending awaitable fails at once (T-NEG-003).
            may_await = run.async_enabled and desc.is_async
            raw = awaiting.resolve(raw, may_await, run.meter.remaining_seconds(), run.awaiter)
        return raw
    except SandboxError:
        raise  # the runtime's own errors (a charge through the context, a pending result, a timeout)
    except BindingError as refusal:
        raise refusal.to_sandbox_error() from None
    except SandboxFault as fault:  # a core value fault raised by host code: keep only the category
        raise _host_failure(run, desc, fault, f"binding '{desc.id}' failed ({fault.category})") from None
    except Exception as exc:
        raise _host_failure(run, desc, exc, f"binding '{desc.id}' failed") from None
    finally:
        if context is not None:
            context.close()


def _host_failure(
    run: RunContext, desc: BindingDescriptor, exc: BaseException, safe_message: str
) -> SandboxError:
    """The kernel's sanitized ``R-BINDING-FAILED`` for a binding that raised ``exc``; the host's log
    gets ``exc`` with its traceback now, its observers get it on the failure event."""
    LOGGER.error(
        "binding '%s' raised %s in run %s",
        desc.id,
        type(exc).__name__,
        run.audit.run_id,
        exc_info=(type(exc), exc, exc.__traceback__),
        extra={"dotboxd_binding_id": desc.id, "dotboxd_run_id": run.audit.run_id},
    )
    error = SandboxError("R-BINDING-FAILED", safe_message)
    error.host_exception = exc
    return error


def _accept_return(run: RunContext, desc: BindingDescriptor, raw: Any) -> Value:
    try:
        value = coerce_host_value(raw, to_type_ref(desc.return_type), literal_rules)
    except Exception:  # a SandboxFault from the coercion, or whatever a hostile value's methods raise
        raise SandboxError(
            "R-BINDING-RETURN", f"binding '{desc.id}' returned an unexpected value type"
        ) from None
    shape = shape_of(value)
    run.meter.shape(shape)
    cost = desc.cost
    if cost is not None:
        if cost.allocation_from_return_bytes and shape.string_bytes:
            run.meter.alloc(shape.string_bytes)
        extra = costs.binding_return_fuel(cost.per_byte_fuel, shape.string_bytes)
        if extra:
            run.meter.fuel(extra)
    return value


def _binding_event(run: RunContext, desc: BindingDescriptor, *, success: bool, **outcome: Any) -> None:
    """The audit event the runtime writes for a call of ``desc`` (success, or failure with the
    ``outcome`` fields): the binding's kind, id, capability, effects and resource, stated once."""
    run.audit.write(
        desc.audit_kind.value,
        success=success,
        binding_id=desc.id,
        capability_id=desc.capability,
        effect=int(desc.required_effects),
        resource_id=f"binding:{desc.id}",
        **outcome,
    )


def _failure_audit(
    run: RunContext,
    desc: BindingDescriptor,
    checkpoint: int,
    error: SandboxError,
    host_exception: BaseException | None,
) -> None:
    if desc.audit is AuditLevel.NONE or run.audit.has_binding_event_since(desc.id, checkpoint, False):
        return
    _binding_event(
        run,
        desc,
        success=False,
        error_code=error.category,
        message="binding failed",
        fields={"code": error.code},
        host_exception=host_exception,
    )
