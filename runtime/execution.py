"""One run of a plan, start to finish, on any backend: the part every backend shares.

Order (spec/semantics.md section 2):

1. gates: the plan must still be usable (no capability it reaches revoked, no grant expired);
2. the entrypoint must exist and be an entrypoint; inputs are decoded or checked against the
   declared parameter types (InvalidInput), checked against the policy's ``inputBounds`` and
   charged (their shapes) before any kernel code runs;
3. the wall-time deadline is checked (``maxWallTimeMs: 0`` is Timeout before the first statement),
   then the backend runs the entrypoint under the run's meter;
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
from typing import Any, Literal, Protocol, TypeVar

from dotboxd.core import literal_rules
from dotboxd.core.ast import TypeRef
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.event_maps import Snapshot, event_projector, event_reader
from dotboxd.core.read_only import EMPTY, ReadOnlyDict
from dotboxd.core.suggest import did_you_mean
from dotboxd.core.types import SandboxType, to_type_ref
from dotboxd.core.utf16 import close_scope, open_scope
from dotboxd.core.values import (
    I32_MAX,
    I32_MIN,
    I64_MAX,
    I64_MIN,
    ListValue,
    MapValue,
    SandboxFault,
    Shape,
    Value,
    coerce_host_value,
    decode_typed,
    frozen_constructor,
    shape_of,
    utf16_len,
)
from dotboxd.core.visible import clipped
from dotboxd.runtime.audit import AuditEvent, AuditTrail, Observer, new_summary_event, safe_field
from dotboxd.runtime.awaiting import Awaiter
from dotboxd.runtime.commands import Command
from dotboxd.runtime.context import PlanRunFacts, RunContext
from dotboxd.runtime.errors import ErrorInfo, SandboxError, error_info_from_diagnostic
from dotboxd.runtime.input_faults import (
    bad_input_error,
    host_check,
    input_bound_error,
    inputs_shape_error,
    typed_check,
)
from dotboxd.runtime.meter import CancelToken, ResourceUsage
from dotboxd.runtime.stack import HOST_RESERVE_FRAMES, call_with_headroom, run_frames
from dotboxd.validator.plan import ExecutionPlan

ArgEncoding = Literal["python", "json"]

_Derived = TypeVar("_Derived")


class Backend(Protocol):
    """What an execution backend provides: run one entrypoint call under a RunContext and return its
    value, raising ``SandboxFault`` (or ``SandboxError``) on failure."""

    name: str

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value: ...


NO_CALLS: Mapping[str, int] = EMPTY
"""The binding-call counts of a run that called no binding (shared: it is immutable)."""


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
    binding_calls: Mapping[str, int] = field(default_factory=lambda: EMPTY)
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
        return lambda raw: decode_typed(raw, ref, literal_rules)
    return lambda raw: coerce_host_value(raw, ref, literal_rules)


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
    if encoding == "python":
        collection = _collection_reader(ref, general)
        if collection is not None:
            return collection
    return general


_ElementTest = Callable[[object], bool]


def _element_test(ref: TypeRef) -> _ElementTest | None:
    """A direct test for one item, key or value of a collection input: True only for a value the
    general routine accepts and returns unchanged (the scalar fast tests of ``_input_reader``);
    None for a type without one."""
    name = ref.name
    if name in ("I32", "I64"):
        lo, hi = (I32_MIN, I32_MAX) if name == "I32" else (I64_MIN, I64_MAX)
        return lambda x: type(x) is int and lo <= x <= hi
    if name == "Bool":
        return lambda x: type(x) is bool
    if name == "F64":
        return lambda x: type(x) is float and math.isfinite(x)
    if name == "String":
        return lambda x: type(x) is str and x.isascii()
    return None


def _collection_reader(ref: TypeRef, general: InputReader) -> InputReader | None:
    """The reader of a ``List`` or ``Map`` input of scalars or texts, given as a Python list, tuple
    or dict (a host event): it takes a snapshot of the host's container (a host thread cannot change
    what was checked), tests every element directly and builds the sandbox value from the snapshot
    in one step - the value the general routine builds, without its per-element recursion. Anything
    the tests do not accept goes through the general routine, which also words the error."""
    args = ref.arguments
    if ref.name == "List" and len(args) == 1:
        item_ok = _element_test(args[0])
        if item_ok is None:
            return None

        def read_list(raw: object) -> Value:
            cls = type(raw)
            if cls is list or cls is tuple:
                items = list(raw)  # type: ignore[call-overload]  # a list or tuple
                if all(map(item_ok, items)):
                    return ListValue(items)
            return general(raw)

        return read_list
    if ref.name == "Map" and len(args) == 2:
        key_ok, value_ok = _element_test(args[0]), _element_test(args[1])
        if key_ok is None or value_ok is None:
            return None
        if args[0].name == "String" and args[1].name != "String":
            return _text_keyed_map_reader(value_ok, _integer_range(args[1]), general)

        def read_map(raw: object) -> Value:
            if type(raw) is dict:
                pairs = list(raw.items())  # distinct keys: exact-class scalars and texts
                for key, value in pairs:
                    if not (key_ok(key) and value_ok(value)):
                        return general(raw)
                return MapValue(pairs)
            return general(raw)

        return read_map
    return None


def _text_keyed_map_reader(
    value_ok: _ElementTest, int_range: tuple[int, int] | None, general: InputReader
) -> InputReader:
    """The reader of a ``Map<String, scalar>`` input given as a dict (a host event with named
    fields): ``core.event_maps`` reads it in one pass over a snapshot, with its shape kept per key
    set, into entries keyed by their tokens (``TokenEntries``: no trie for an event that is mostly
    only read). ASCII keys only: their UTF-16 length is their length. Anything that reader does not
    take goes through the general routine, which also words the error."""
    fast = event_reader(value_ok, int_range, _nothing)

    def read_map(raw: object) -> Value:
        found = fast(raw)
        return general(raw) if found is None else found[0]

    return read_map


def _nothing(shape: object) -> None:
    """What the ordinary path keeps per event key set besides its shape: nothing."""
    return None


def host_event_reader(
    ref: TypeRef, derive: Callable[[Shape], _Derived]
) -> Callable[[object], tuple[MapValue, _Derived] | None] | None:
    """The one-pass reader (``core.event_maps``) of a ``Map<String, scalar>`` parameter of type
    ``ref`` given as a dict, keeping ``derive`` of each key set's shape: what the ordinary path's
    reader of such an input uses (with nothing derived), for a caller that reads a host event
    itself (the optimized fast lane: the input's charges). None for any other type."""
    parts = _event_parts(ref)
    return None if parts is None else event_reader(*parts, derive)


def host_event_projector(
    ref: TypeRef, derive: Callable[[Shape], _Derived]
) -> Callable[[object], tuple[MapValue | Snapshot, _Derived] | None] | None:
    """``host_event_reader``'s projecting twin (``core.event_maps.event_projector``): the checked
    snapshot instead of the map, for an entry whose verifier admitted its event's projection."""
    parts = _event_parts(ref)
    return None if parts is None else event_projector(*parts, derive)


def host_scalar_test(ref: TypeRef) -> Callable[[object], bool] | None:
    """The direct test of a ``Bool``, ``I32``, ``I64`` or ``F64`` parameter: True only for an input
    its reader gives back unchanged (the test that reader makes first), for a caller that passes
    such inputs on itself (the optimized fast lane's event entries with other parameters besides
    the event); None for any other type."""
    return _element_test(ref) if ref.name in ("Bool", "I32", "I64", "F64") else None


def _event_parts(ref: TypeRef) -> tuple[_ElementTest, tuple[int, int] | None] | None:
    """The value test and integer range of a ``Map<String, scalar>`` type (None for another)."""
    args = ref.arguments
    if ref.name != "Map" or len(args) != 2 or args[0].name != "String" or args[1].name == "String":
        return None
    value_ok = _element_test(args[1])
    if value_ok is None:
        return None
    return value_ok, _integer_range(args[1])


Refusal = Callable[[int, object, SandboxFault], SandboxError]
"""Words the error of input ``position`` (1-based), given as ``raw``, refused with ``fault``."""


def _plain_refusal(position: int, raw: object, fault: SandboxFault) -> SandboxError:
    del raw  # only a located refusal (``_refusal``) looks at the input
    return SandboxError("R-VALUE-TYPE", f"input {position}: {fault.safe_message}")


def _refusal(refs: Sequence[TypeRef], names: Sequence[str], encoding: ArgEncoding) -> Refusal:
    """The error of a refused input, located (``runtime.input_faults``): worked out only once an
    input is refused, so the accepted path pays nothing for it."""
    check = typed_check if encoding == "json" else host_check

    def refuse(position: int, raw: object, fault: SandboxFault) -> SandboxError:
        index = position - 1
        return bad_input_error(position, names[index], refs[index], raw, fault, check, literal_rules)

    return refuse


AllInputs = Callable[[Sequence[object]], tuple[Value, ...]]

_TEXT_ARGS = (str, bytes, bytearray, memoryview)
"""Sequences that are never a run's inputs: a text would be read character by character."""


def _integer_range(ref: TypeRef) -> tuple[int, int] | None:
    """The accepted range of an integer parameter (None for any other type)."""
    if ref.name == "I32":
        return I32_MIN, I32_MAX
    if ref.name == "I64":
        return I64_MIN, I64_MAX
    return None


def _inputs_tuple(args: object, arity: int, entrypoint: str) -> tuple[object, ...]:
    """Inputs given as something other than a list or tuple, as a tuple of ``arity`` items - or the
    ``R-ENTRY-ARITY`` error: not a sequence (a number, ``None``, a set or mapping, whose order or
    items are not the parameters'), a text, a wrong length, or a sequence whose length or items
    cannot be read (its own code raised). Items are read by index, ``arity`` of them at most, so a
    sequence that lies about its length cannot make this loop run on."""
    if isinstance(args, _TEXT_ARGS) or not isinstance(args, Sequence):
        raise inputs_shape_error(entrypoint, arity, args, f"got {type(args).__name__}")
    try:
        count = len(args)
    except Exception:  # a host sequence's own failure is an input error
        raise inputs_shape_error(entrypoint, arity, args, "its length could not be read") from None
    if count != arity:
        raise inputs_shape_error(entrypoint, arity, args, f"got {count}")
    try:
        return tuple(args[index] for index in range(arity))
    except Exception:  # as above
        raise inputs_shape_error(entrypoint, arity, args, "its items could not be read") from None


def _all_inputs(
    readers: tuple[InputReader, ...],
    ranges: tuple[tuple[int, int] | None, ...],
    entrypoint: str,
    refuse: Refusal = _plain_refusal,
) -> AllInputs:
    """Check the arity, then read every input in parameter order; the first one that fails names its
    position (``refuse`` words its error). The common small arities get an unrolled reader (no loop,
    no intermediate list), and when every parameter is an integer one, a single inline test accepts
    a list or tuple of in-range ``int`` inputs - the very values the per-parameter readers would
    return - before any reader is called; whatever that test does not accept takes the general path,
    which also words the error. Inputs that are not a list or tuple go through ``_inputs_tuple``."""
    arity = len(readers)

    def arity_error(args: Sequence[object]) -> SandboxError:
        return inputs_shape_error(entrypoint, arity, args, f"got {len(args)}")

    if arity == 0:

        def read0(args: Sequence[object]) -> tuple[Value, ...]:
            cls = type(args)
            if cls is not list and cls is not tuple:
                args = _inputs_tuple(args, 0, entrypoint)
            if len(args) != 0:
                raise arity_error(args)
            return ()

        return read0
    if arity == 1:
        (r0,) = readers

        def read1(args: Sequence[object]) -> tuple[Value, ...]:
            cls = type(args)
            if cls is not list and cls is not tuple:
                args = _inputs_tuple(args, 1, entrypoint)
            if len(args) != 1:
                raise arity_error(args)
            (a0,) = args
            try:
                return (r0(a0),)
            except SandboxFault as fault:
                raise refuse(1, a0, fault) from None

        (range0,) = ranges
        if range0 is None:
            return read1
        lo0, hi0 = range0

        def read1_int(args: Sequence[object]) -> tuple[Value, ...]:
            cls = type(args)
            if (cls is list or cls is tuple) and len(args) == 1:
                (a0,) = args
                if type(a0) is int and lo0 <= a0 <= hi0:
                    return (a0,)
            return read1(args)

        return read1_int
    if arity == 2:
        r0, r1 = readers

        def read2(args: Sequence[object]) -> tuple[Value, ...]:
            cls = type(args)
            if cls is not list and cls is not tuple:
                args = _inputs_tuple(args, 2, entrypoint)
            if len(args) != 2:
                raise arity_error(args)
            a0, a1 = args
            try:
                v0 = r0(a0)
            except SandboxFault as fault:
                raise refuse(1, a0, fault) from None
            try:
                return (v0, r1(a1))
            except SandboxFault as fault:
                raise refuse(2, a1, fault) from None

        range0, range1 = ranges
        if range0 is None or range1 is None:
            return read2
        lo0, hi0 = range0
        lo1, hi1 = range1

        def read2_int(args: Sequence[object]) -> tuple[Value, ...]:
            cls = type(args)
            if (cls is list or cls is tuple) and len(args) == 2:
                a0, a1 = args
                if type(a0) is int and lo0 <= a0 <= hi0 and type(a1) is int and lo1 <= a1 <= hi1:
                    return (a0, a1)
            return read2(args)

        return read2_int

    def read(args: Sequence[object]) -> tuple[Value, ...]:
        cls = type(args)
        if cls is not list and cls is not tuple:
            args = _inputs_tuple(args, arity, entrypoint)
        if len(args) != arity:
            raise arity_error(args)
        values: list[Value] = []
        try:
            for reader, raw in zip(readers, args, strict=True):
                values.append(reader(raw))
        except SandboxFault as fault:  # the input that failed is the next one after those read
            position = len(values) + 1
            raise refuse(position, args[position - 1], fault) from None
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


def failure_info(exc: Exception) -> ErrorInfo:
    """The sanitized error of whatever a run raised: the one classification shared by every path
    that runs an entrypoint (``EntryCall.run_record`` and the optimized backend's fast lane). A
    kernel fault keeps its code; a refused plan its diagnostic; Python's own recursion limit is the
    call-depth quota; anything else is an internal fault that fails closed without detail."""
    if isinstance(exc, SandboxError):
        return exc.info()
    if isinstance(exc, SandboxFault):
        return SandboxError.from_fault(exc).info()
    if isinstance(exc, DotBoxDError):
        return error_info_from_diagnostic(exc.diagnostic)
    if isinstance(exc, RecursionError):
        return SandboxError("R-QUOTA-CALL-DEPTH", "nesting exceeds the interpreter's capacity").info()
    return SandboxError("R-HOST-INTERNAL", "internal runtime fault").info()


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
        "int_ranges",
        "known",
        "plan",
        "read_inputs",
        "return_type",
        "stack_frames",
        "summary_builder",
        "summary_fields",
    )

    def __init__(self, plan: ExecutionPlan, entrypoint: str, encoding: ArgEncoding = "python") -> None:
        self.plan = plan
        self.entrypoint = entrypoint
        self.encoding = encoding
        self.facts = PlanRunFacts(plan)
        self.stack_frames = run_frames(plan)  # Python stack a run may need (``runtime/stack.py``)
        # a plan that requests and requires no capability has nothing to revoke or expire
        self.gated = bool(plan.required_capabilities or plan.requested_capabilities)
        info = plan.functions.get(entrypoint)
        self.known = info is not None and entrypoint in plan.entrypoints
        self.return_type: SandboxType | None = info.return_type if info is not None else None
        self.arity = 0
        self.read_inputs: AllInputs = _all_inputs((), (), entrypoint)
        self.charged: tuple[int, ...] = ()
        self.int_ranges: tuple[tuple[int, int], ...] | None = None
        """When every parameter is an integer: each one's accepted range. For an input row that is
        a list or tuple of as many exact ``int`` values in these ranges, ``read_inputs`` gives those
        very values (its first test), so a caller may test such a row inline and skip the call."""
        self.bounds: tuple[tuple[int, str, int, int], ...] = ()
        if info is not None and self.known:
            refs = [to_type_ref(t) for t in info.parameter_types]
            self.arity = len(refs)
            ranges = tuple(_integer_range(ref) for ref in refs)
            names = tuple(param.name for param in info.function.parameters)
            self.read_inputs = _all_inputs(
                tuple(_input_reader(ref, encoding) for ref in refs),
                ranges,
                entrypoint,
                _refusal(refs, names, encoding),
            )
            if all(limits is not None for limits in ranges):
                self.int_ranges = tuple(limits for limits in ranges if limits is not None)
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
        self._modes: dict[str, dict[str, Any]] = {}
        self.summary_builder = self._summary_event  # bound once: every unobserved run hands it over

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
        awaiter: Awaiter | None = None,
    ) -> RunRecord:
        """``run`` returning the ``RunOutcome`` fields as a plain tuple, in field order (for a
        caller that builds its own result object from them, like ``SandboxHost.execute``).

        The steps of the module docstring, written out in one body: this is the per-call path of
        every host call, so the input checks are inlined here rather than spread over helper calls
        (``finish`` closes the run). ``awaiter`` drives the pending results of async bindings
        (``runtime.awaiting``; None: the synchronous default)."""
        plan = self.plan
        facts = self.facts
        run = RunContext(plan, run_id, cancel, observers, clock, facts)
        open_scope()  # the run's UTF-16 indices (``dotboxd.core.utf16``), dropped when it ends
        if awaiter is not None:
            run.awaiter = awaiter
        value: Value = None
        error: ErrorInfo | None = None
        return_type: SandboxType | None = None  # known once the run got past the entrypoint check
        try:
            if self.gated:
                plan.ensure_usable()
            if not self.known:
                suggestion = did_you_mean(self.entrypoint, plan.entrypoints)
                raise SandboxError(
                    "R-ENTRY-UNKNOWN",
                    # the name is the caller's (a server client's): quoted clipped and visible
                    f"no entrypoint named '{clipped(self.entrypoint)}'"
                    + (f"; {suggestion}" if suggestion else ""),
                )
            return_type = self.return_type
            # inputs: arity and types (``read_inputs``), then the bounds, then the shape charges
            values = self.read_inputs(args)
            if self.bounds:
                self._check_bounds(values)
            if self.charged:
                shape = run.meter.shape
                for index in self.charged:
                    shape(shape_of(values[index]))
            # the wall-time budget is checked once before the first statement, on every backend:
            # ``maxWallTimeMs: 0`` is a budget already spent (Timeout), as in DotBoxD
            run.meter.check_deadline()
            frames = self.stack_frames
            if frames <= HOST_RESERVE_FRAMES:
                value = backend.run(run, self.entrypoint, values)
            else:  # on a fresh helper thread when the host's stack is too deep (``runtime/stack.py``)
                value = call_with_headroom(frames, backend.run, run, self.entrypoint, values)
        except Exception as exc:
            error = failure_info(exc)
            if isinstance(exc, DotBoxDError) and exc.code == "E-POLICY-REVOKED":
                run.audit.write(
                    "CapabilityRevoked",
                    success=False,
                    capability_id=str(exc.diagnostic.evidence.get("capability", "")),
                    error_code="PolicyDenied",
                    message="a capability this plan reaches was revoked",
                )
        finally:
            close_scope()
        return self.finish(run, value, error, return_type, run.executed_by or backend.name)

    def finish(
        self,
        run: RunContext,
        value: Value,
        error: ErrorInfo | None,
        return_type: SandboxType | None,
        executed_by: str,
    ) -> RunRecord:
        """Close a run that has ended (``value`` or ``error``): hand over or drop its commands, read
        its usage, close its audit trail with the ``RunSummary``, and give the record's fields."""
        if error is not None:
            value = None
        commands = run.finish_commands(error is None)
        if not run.observers:
            return self.closed_record(
                run, value, error, return_type, executed_by, self.facts.audit_clock(), commands
            )
        meter = run.meter
        usage = meter.usage(self.facts.usage_memo)
        calls = meter.calls_by_binding
        return (
            run.run_id,
            value,
            error,
            usage,
            self._observed_summary(run, executed_by, error, usage),
            commands,
            ReadOnlyDict(calls) if calls else NO_CALLS,
            return_type,
            executed_by,
        )

    def closed_record(
        self,
        run: RunContext,
        value: Value,
        error: ErrorInfo | None,
        return_type: SandboxType | None,
        executed_by: str,
        stamp: float,
        commands: tuple[Command, ...],
    ) -> RunRecord:
        """The record of an unobserved run that ``finish`` closed at ``stamp`` (on the audit clock)
        with ``commands`` handed over (``value`` None when it failed). Everything it reads - the
        meter's counters, the audit log - is fixed once the run has ended, so it may be called then
        or later (the optimized fast lane builds a deferred result's record on first read)."""
        meter = run.meter
        usage = meter.usage(self.facts.usage_memo)
        calls = meter.calls_by_binding
        # nobody watches live: the RunSummary is built on first read, from what is fixed now
        log = run.audit_log
        logged = log.events if log is not None else ()
        return (
            run.run_id,
            value,
            error,
            usage,
            AuditTrail(
                logged, self.summary_builder, (run.run_id, stamp, len(logged), executed_by, error, usage)
            ),
            commands,
            ReadOnlyDict(calls) if calls else NO_CALLS,
            return_type,
            executed_by,
        )

    def _check_bounds(self, values: tuple[Value, ...]) -> None:
        """``inputBounds``: an integer parameter must lie in [lo, hi]; for a list, map or string the
        bound applies to its size. Out of bounds is InvalidInput (it keeps a proof sound)."""
        for index, name, lo, hi in self.bounds:
            measure = _measure(values[index])
            if measure is not None and not lo <= measure <= hi:
                raise input_bound_error(index, name)

    def _observed_summary(
        self, run: RunContext, mode: str, error: ErrorInfo | None, usage: ResourceUsage
    ) -> AuditTrail:
        """Observers get the ``RunSummary`` now, as every event: it is written to the run's log."""
        fields = self._summary_fields(mode, error, usage)
        observed = run.audit
        observed.write_safe_fields(
            "RunSummary",
            success=error is None,
            error_code=None if error is None else error.category,
            fields=fields,
        )
        return AuditTrail(observed.events)

    def _summary_fields(self, mode: str, error: ErrorInfo | None, usage: ResourceUsage) -> dict[str, Any]:
        """The summary's fields: the entrypoint's constant ones with the sanitized mode (one template
        per mode, kept), then this run's error code and usage, in the event's key order."""
        template = self._modes.get(mode)
        if template is None:
            template = self.summary_fields.copy()
            template["executionMode"] = safe_field(mode)
            self._modes[mode] = template
        fields = template.copy()
        if error is not None:
            fields["code"] = safe_field(error.code)
        fields["fuelUsed"] = usage.fuel_used
        fields["maxFuel"] = usage.max_fuel
        fields["allocationCharged"] = usage.allocated_bytes
        fields["hostCalls"] = usage.host_calls
        return fields

    def _summary_event(
        self,
        run_id: str,
        timestamp: float,
        sequence: int,
        mode: str,
        error: ErrorInfo | None,
        usage: ResourceUsage,
    ) -> AuditEvent:
        """The ``RunSummary`` of an unobserved run, from the values fixed when it ended."""
        fields = self._summary_fields(mode, error, usage)
        category = None if error is None else error.category
        return new_summary_event(run_id, timestamp, sequence, category, ReadOnlyDict(fields))


__all__ = [
    "NO_CALLS",
    "ArgEncoding",
    "Backend",
    "EntryCall",
    "RunOutcome",
    "RunRecord",
    "execute_plan",
    "failure_info",
]
