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

Everything that depends only on the plan and the entrypoint (the parameter checks, the bounds, the
meter limits, the sanitized constant fields of the ``RunSummary``, whether the plan reaches any
capability at all) is worked out once by ``EntryCall``; a host that calls the same entrypoint again
and again keeps its ``EntryCall`` and pays only for what each run must do. Every per-run step above
still happens on every run, in the same order, with the same results.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol

from dotboxd.core.ast import TypeRef
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.types import SandboxType, to_type_ref
from dotboxd.core.values import (
    I32_MAX,
    I32_MIN,
    I64_MAX,
    I64_MIN,
    ListValue,
    MapValue,
    SandboxFault,
    Value,
    coerce_host_value,
    decode_typed,
    frozen_constructor,
    shape_of,
    utf16_len,
)
from dotboxd.grammar import literals
from dotboxd.runtime.audit import AuditEvent, AuditTrail, Observer, new_event, safe_field
from dotboxd.runtime.commands import Command
from dotboxd.runtime.context import PlanRunFacts, RunContext
from dotboxd.runtime.errors import ErrorInfo, SandboxError, error_info_from_diagnostic
from dotboxd.runtime.meter import CancelToken, ResourceUsage
from dotboxd.validator.plan import ExecutionPlan

ArgEncoding = Literal["python", "json"]


class Backend(Protocol):
    """What an execution backend provides: run one entrypoint call under a RunContext and return its
    value, raising ``SandboxFault`` (or ``SandboxError``) on failure."""

    name: str

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value: ...


_NO_CALLS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """Everything a run produced. ``commands`` is empty unless the run succeeded. ``executed_by`` is
    the execution tier that actually ran the entrypoint (see ``RunContext.executed_by``); it is also
    the ``executionMode`` of the run's ``RunSummary``."""

    run_id: str
    value: Value
    error: ErrorInfo | None
    usage: ResourceUsage
    audit_events: Sequence[AuditEvent]
    commands: tuple[Command, ...]
    binding_calls: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    return_type: SandboxType | None = None
    executed_by: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


_new_outcome = frozen_constructor(RunOutcome)

RunRecord = tuple[
    str,
    Value,
    ErrorInfo | None,
    ResourceUsage,
    AuditTrail,
    tuple[Command, ...],
    Mapping[str, int],
    SandboxType | None,
    str,
]
"""The fields of a ``RunOutcome`` as a plain tuple, in field order (``EntryCall.run_record``)."""


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
    return EntryCall(plan, entrypoint, encoding).run(
        args, backend, cancel=cancel, observers=tuple(observers), run_id=run_id, clock=clock
    )


# --- input readers -------------------------------------------------------------------------------

InputReader = Callable[[object], Value]

# Types whose values all have the scalar shape: their inputs cost nothing to charge (spec/costs.md 3).
_SCALAR_INPUT_TYPES = frozenset({"Unit", "Bool", "I32", "I64", "F64", "Guid"})


def _general_reader(ref: TypeRef, encoding: ArgEncoding) -> InputReader:
    if encoding == "json":
        return lambda raw: decode_typed(raw, ref, literals)
    return lambda raw: coerce_host_value(raw, ref, literals)


def _input_reader(ref: TypeRef, encoding: ArgEncoding) -> InputReader:
    """The checker (and decoder) of one parameter. Common scalar inputs of the exact Python class are
    accepted by a direct test that gives the very value the general routine would; anything else -
    including every input the test does not accept - goes through the general routine, which also
    writes the error message."""
    general = _general_reader(ref, encoding)
    name = ref.name
    if name in ("I32", "I64"):
        lo, hi = (I32_MIN, I32_MAX) if name == "I32" else (I64_MIN, I64_MAX)

        def integer(raw: object) -> Value:
            if type(raw) is int and lo <= raw <= hi:
                return raw
            return general(raw)

        return integer
    if name == "Bool":
        return lambda raw: raw if type(raw) is bool else general(raw)
    if name == "F64":

        def number(raw: object) -> Value:
            if type(raw) is float and math.isfinite(raw):
                return raw
            return general(raw)

        return number
    if name == "String":

        def text(raw: object) -> Value:
            if type(raw) is str and raw.isascii():  # ASCII text holds no unpaired surrogate
                return raw
            return general(raw)

        return text
    if name == "Unit":
        return lambda raw: None if raw is None else general(raw)
    return general


def _bad_input(position: int, fault: SandboxFault) -> SandboxError:
    return SandboxError("R-VALUE-TYPE", f"input {position}: {fault.safe_message}")


AllInputs = Callable[[Sequence[object]], tuple[Value, ...]]


def _all_inputs(readers: tuple[InputReader, ...]) -> AllInputs:
    """Read every input in parameter order; the first one that fails names its position. The common
    small arities get an unrolled reader (no loop, no intermediate list)."""
    if len(readers) == 0:
        return lambda args: ()
    if len(readers) == 1:
        (r0,) = readers

        def read1(args: Sequence[object]) -> tuple[Value, ...]:
            (a0,) = args
            try:
                return (r0(a0),)
            except SandboxFault as fault:
                raise _bad_input(1, fault) from None

        return read1
    if len(readers) == 2:
        r0, r1 = readers

        def read2(args: Sequence[object]) -> tuple[Value, ...]:
            a0, a1 = args
            try:
                v0 = r0(a0)
            except SandboxFault as fault:
                raise _bad_input(1, fault) from None
            try:
                return (v0, r1(a1))
            except SandboxFault as fault:
                raise _bad_input(2, fault) from None

        return read2

    def read(args: Sequence[object]) -> tuple[Value, ...]:
        values: list[Value] = []
        try:
            for reader, raw in zip(readers, args, strict=True):
                values.append(reader(raw))
        except SandboxFault as fault:  # the input that failed is the next one after those read
            raise _bad_input(len(values) + 1, fault) from None
        return tuple(values)

    return read


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


# --- the prepared entrypoint ---------------------------------------------------------------------

_SUMMARY_KEYS = (
    "moduleId",
    "moduleHash",
    "policyId",
    "policyHash",
    "planHash",
    "bindingManifestHash",
    "executionMode",
    "executionDispatched",
    "code",
    "fuelUsed",
    "maxFuel",
    "allocationCharged",
    "hostCalls",
)


class EntryCall:
    """One entrypoint of one plan, prepared for any number of runs (see the module docstring).

    Holds nothing that can change while the plan exists: revocation, grant expiry, cancellation and
    the deadline are still checked on every run, by the run. An unknown entrypoint is not an error
    here: each run reports it (``R-ENTRY-UNKNOWN``) after the gates, as it always has.
    """

    __slots__ = (
        "_modes",
        "arity",
        "bounds",
        "charged",
        "encoding",
        "entrypoint",
        "facts",
        "gated",
        "known",
        "plan",
        "read_inputs",
        "return_type",
        "summary_fields",
    )

    def __init__(self, plan: ExecutionPlan, entrypoint: str, encoding: ArgEncoding = "python") -> None:
        self.plan = plan
        self.entrypoint = entrypoint
        self.encoding = encoding
        self.facts = PlanRunFacts(plan)
        # a plan that requests and requires no capability has nothing to revoke or expire
        self.gated = bool(plan.required_capabilities or plan.requested_capabilities)
        info = plan.functions.get(entrypoint)
        self.known = info is not None and entrypoint in plan.entrypoints
        self.return_type: SandboxType | None = info.return_type if info is not None else None
        self.arity = 0
        self.read_inputs: AllInputs = _all_inputs(())
        self.charged: tuple[int, ...] = ()
        self.bounds: tuple[tuple[int, str, int, int], ...] = ()
        if info is not None and self.known:
            refs = [to_type_ref(t) for t in info.parameter_types]
            self.arity = len(refs)
            self.read_inputs = _all_inputs(tuple(_input_reader(ref, encoding) for ref in refs))
            self.charged = tuple(i for i, ref in enumerate(refs) if ref.name not in _SCALAR_INPUT_TYPES)
            declared = plan.policy.input_bounds.get(entrypoint) or {}
            self.bounds = tuple(
                (index, param.name, *declared[param.name])
                for index, param in enumerate(info.function.parameters)
                if param.name in declared
            )
        summary: dict[str, Any] = dict.fromkeys(_SUMMARY_KEYS)
        summary.update(
            moduleId=safe_field(plan.module.id),
            moduleHash=safe_field(plan.module_hash),
            policyId=safe_field(plan.policy.policy_id),
            policyHash=safe_field(plan.policy_hash),
            planHash=safe_field(plan.plan_hash),
            bindingManifestHash=safe_field(plan.binding_manifest_hash),
            executionDispatched=True,
        )
        self.summary_fields = summary
        self._modes: dict[str, Any] = {}

    def run(
        self,
        args: Sequence[object],
        backend: Backend,
        *,
        cancel: CancelToken | None = None,
        observers: tuple[Observer, ...] = (),
        run_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> RunOutcome:
        """One run of the entrypoint with ``args`` on ``backend``."""
        return _new_outcome(*self.run_record(args, backend, cancel, observers, run_id, clock))

    def run_record(
        self,
        args: Sequence[object],
        backend: Backend,
        cancel: CancelToken | None = None,
        observers: tuple[Observer, ...] = (),
        run_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> RunRecord:
        """``run`` returning the ``RunOutcome`` fields as a plain tuple, in field order (for a
        caller that builds its own result object from them, like ``SandboxHost.execute``)."""
        plan = self.plan
        run = RunContext(plan, run_id, cancel, observers, clock, self.facts)
        value: Value = None
        error: ErrorInfo | None = None
        return_type: SandboxType | None = None  # known once the run got past the entrypoint check
        try:
            if self.gated:
                plan.ensure_usable()
            if not self.known:
                raise SandboxError("R-ENTRY-UNKNOWN", f"no entrypoint named '{self.entrypoint}'")
            return_type = self.return_type
            value = backend.run(run, self.entrypoint, self._inputs(run, args))
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
        if error is not None:
            value = None
        commands = run.finish_commands(error is None)
        meter = run.meter
        usage = meter.usage()
        executed_by = run.executed_by or backend.name
        calls = meter.calls_by_binding
        return (
            run.run_id,
            value,
            error,
            usage,
            self._audit_trail(run, executed_by, error, usage),
            commands,
            MappingProxyType(dict(calls)) if calls else _NO_CALLS,
            return_type,
            executed_by,
        )

    def _inputs(self, run: RunContext, args: Sequence[object]) -> tuple[Value, ...]:
        """Decode or check every input, then the bounds, then charge the shapes (spec 2, step 3)."""
        if isinstance(args, str | bytes) or len(args) != self.arity:
            raise SandboxError("R-ENTRY-ARITY", f"entrypoint '{self.entrypoint}' takes {self.arity} input(s)")
        values = self.read_inputs(args)
        if self.bounds:
            for index, name, lo, hi in self.bounds:
                # ``inputBounds``: an integer parameter must lie in [lo, hi]; for a list, map or string
                # the bound applies to its size. Out of bounds is InvalidInput (keeps a proof sound).
                measure = _measure(values[index])
                if measure is not None and not lo <= measure <= hi:
                    raise SandboxError("R-INPUT-BOUND", f"input '{name}' is outside its declared bounds")
        if self.charged:
            shape = run.meter.shape
            for index in self.charged:
                shape(shape_of(values[index]))
        return values

    def _audit_trail(
        self, run: RunContext, mode: str, error: ErrorInfo | None, usage: ResourceUsage
    ) -> AuditTrail:
        """The run's events closed by its ``RunSummary``. Observers get the summary now, as every
        event; without observers it is built when first read, from what is fixed here."""
        safe_mode = self._modes.get(mode)
        if safe_mode is None:
            safe_mode = self._modes[mode] = safe_field(mode)
        if error is None:
            code = category = None
        else:
            code = safe_field(error.code)
            category = error.category
        if run.observers:
            fields = self._summary_fields(safe_mode, code, usage)
            observed = run.audit
            observed.write_safe_fields(
                "RunSummary", success=error is None, error_code=category, fields=fields
            )
            return AuditTrail(observed.events)
        log = run.audit_log
        events = log.events if log is not None else ()
        args = (
            run.run_id,
            self.facts.audit_clock(),
            error is None,
            len(events),
            category,
            safe_mode,
            code,
            usage,
        )
        return AuditTrail(events, self._summary_event, args)

    def _summary_fields(self, safe_mode: Any, code: Any, usage: ResourceUsage) -> dict[str, Any]:
        fields = self.summary_fields.copy()  # keeps the key order of the event's fields
        fields["executionMode"] = safe_mode
        fields["code"] = code
        fields["fuelUsed"] = usage.fuel_used
        fields["maxFuel"] = usage.max_fuel
        fields["allocationCharged"] = usage.allocated_bytes
        fields["hostCalls"] = usage.host_calls
        return fields

    def _summary_event(
        self,
        run_id: str,
        timestamp: float,
        success: bool,
        sequence: int,
        category: str | None,
        safe_mode: Any,
        code: Any,
        usage: ResourceUsage,
    ) -> AuditEvent:
        fields = self._summary_fields(safe_mode, code, usage)
        return new_event(
            run_id, "RunSummary", timestamp, success, sequence, category, MappingProxyType(fields)
        )


__all__ = ["ArgEncoding", "Backend", "EntryCall", "RunOutcome", "RunRecord", "execute_plan"]
