"""One run of a plan, start to finish, on any backend: the part every backend shares.

Order (digest 6.1, 7.2, 9.2):

1. gates: the plan must still be usable (no capability it reaches revoked, no grant expired);
2. the entrypoint must exist and be an entrypoint; inputs are decoded or checked against the
   declared parameter types (InvalidInput), checked against the policy's ``inputBounds`` and
   charged (their shapes) before any kernel code runs;
3. the backend runs the entrypoint under the run's meter;
4. success: the command queue is closed and handed back; failure: every queued command is dropped;
5. a ``RunSummary`` audit event closes the run either way.

Whatever happens, the outcome is a value or a sanitized ``SandboxError``: internal faults fail
closed as HostFailure, never as a traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Protocol

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.types import SandboxType, to_type_ref
from dotboxd.core.values import (
    ListValue,
    MapValue,
    SandboxFault,
    Value,
    coerce_host_value,
    decode_typed,
    shape_of,
    utf16_len,
)
from dotboxd.grammar import literals
from dotboxd.runtime.audit import AuditEvent, Observer
from dotboxd.runtime.commands import Command
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import ErrorInfo, SandboxError, error_info_from_diagnostic
from dotboxd.runtime.meter import CancelToken, ResourceUsage
from dotboxd.validator.plan import ExecutionPlan

ArgEncoding = Literal["python", "json"]


class Backend(Protocol):
    """What an execution backend provides: run one entrypoint call under a RunContext and return its
    value, raising ``SandboxFault`` (or ``SandboxError``) on failure."""

    name: str

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value: ...


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """Everything a run produced. ``commands`` is empty unless the run succeeded."""

    run_id: str
    value: Value
    error: ErrorInfo | None
    usage: ResourceUsage
    audit_events: tuple[AuditEvent, ...]
    commands: tuple[Command, ...]
    binding_calls: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    return_type: SandboxType | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def execute_plan(
    plan: ExecutionPlan,
    entrypoint: str,
    args: Sequence[object],
    backend: Backend,
    *,
    encoding: ArgEncoding = "python",
    cancel: CancelToken | None = None,
    observers: Iterable[Observer] = (),
    run_id: str | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> RunOutcome:
    """Run ``entrypoint`` of ``plan`` with ``args`` (one per parameter) on ``backend``."""
    run = RunContext(plan, run_id=run_id, cancel=cancel, observers=observers, clock=clock)
    value: Value = None
    error: ErrorInfo | None = None
    return_type: SandboxType | None = None
    try:
        _gate(plan)
        info = plan.functions.get(entrypoint)
        if info is None or entrypoint not in plan.entrypoints:
            raise SandboxError("R-ENTRY-UNKNOWN", f"no entrypoint named '{entrypoint}'")
        return_type = info.return_type
        inputs = _inputs(run, entrypoint, info.parameter_types, args, encoding)
        value = backend.run(run, entrypoint, inputs)
    except SandboxError as exc:
        error = exc.info()
    except SandboxFault as fault:
        error = SandboxError.from_fault(fault).info()
    except DotBoxDError as rejected:
        error = error_info_from_diagnostic(rejected.diagnostic)
        if rejected.code == "E-POLICY-REVOKED":
            run.audit.write(
                "CapabilityRevoked",
                success=False,
                capability_id=str(rejected.diagnostic.evidence.get("capability", "")),
                error_code="PolicyDenied",
                message="a capability this plan reaches was revoked",
            )
    except RecursionError:
        error = SandboxError("R-QUOTA-CALL-DEPTH", "nesting exceeds the interpreter's capacity").info()
    except Exception:
        error = SandboxError("R-HOST-INTERNAL", "internal runtime fault").info()
    if error is None:
        commands = run.commands.close()
    else:
        value = None
        run.commands.discard()
        commands = ()
    usage = run.meter.usage()
    _summary(run, backend.name, error, usage)
    return RunOutcome(
        run_id=run.run_id,
        value=value,
        error=error,
        usage=usage,
        audit_events=run.audit.events,
        commands=commands,
        binding_calls=MappingProxyType(dict(run.meter.calls_by_binding)),
        return_type=return_type,
    )


def _gate(plan: ExecutionPlan) -> None:
    plan.ensure_usable()


def _inputs(
    run: RunContext,
    entrypoint: str,
    parameter_types: tuple[SandboxType, ...],
    args: Sequence[object],
    encoding: ArgEncoding,
) -> tuple[Value, ...]:
    if isinstance(args, str | bytes) or len(args) != len(parameter_types):
        raise SandboxError(
            "R-ENTRY-ARITY", f"entrypoint '{entrypoint}' takes {len(parameter_types)} input(s)"
        )
    values: list[Value] = []
    for index, (raw, t) in enumerate(zip(args, parameter_types, strict=True)):
        ref = to_type_ref(t)
        try:
            value = (
                decode_typed(raw, ref, literals)
                if encoding == "json"
                else coerce_host_value(raw, ref, literals)
            )
        except SandboxFault as fault:
            raise SandboxError("R-VALUE-TYPE", f"input {index + 1}: {fault.safe_message}") from None
        values.append(value)
    _check_bounds(run, entrypoint, values)
    for value in values:
        run.meter.shape(shape_of(value))
    return tuple(values)


def _check_bounds(run: RunContext, entrypoint: str, values: list[Value]) -> None:
    """``inputBounds``: an integer parameter must lie in [lo, hi]; for a list, map or string the
    bound applies to its size. Out of bounds is InvalidInput, which keeps a static proof sound."""
    bounds = run.plan.policy.input_bounds.get(entrypoint)
    if not bounds:
        return
    function = run.plan.functions[entrypoint].function
    for param, value in zip(function.parameters, values, strict=True):
        bound = bounds.get(param.name)
        if bound is None:
            continue
        lo, hi = bound
        measure = _measure(value)
        if measure is not None and not lo <= measure <= hi:
            raise SandboxError("R-INPUT-BOUND", f"input '{param.name}' is outside its declared bounds")


def _measure(value: Value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, ListValue | MapValue):
        return len(value)
    if isinstance(value, str):
        return utf16_len(value)
    return None


def _summary(run: RunContext, mode: str, error: ErrorInfo | None, usage: ResourceUsage) -> None:
    plan = run.plan
    run.audit.write(
        "RunSummary",
        success=error is None,
        error_code=error.category if error else None,
        fields={
            "moduleId": plan.module.id,
            "moduleHash": plan.module_hash,
            "policyId": plan.policy.policy_id,
            "policyHash": plan.policy_hash,
            "planHash": plan.plan_hash,
            "bindingManifestHash": plan.binding_manifest_hash,
            "executionMode": mode,
            "executionDispatched": True,
            "code": error.code if error else None,
            "fuelUsed": usage.fuel_used,
            "maxFuel": usage.max_fuel,
            "allocationCharged": usage.allocated_bytes,
            "hostCalls": usage.host_calls,
        },
    )


__all__ = ["ArgEncoding", "Backend", "RunOutcome", "execute_plan"]
