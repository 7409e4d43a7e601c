"""``ExecutionResult``: what a host gets back from one run, and its JSON form.

The JSON form is the conformance ``expect`` shape (``stage``, ``outcome``, ``value``, ``error``,
``diagnostic``, ``fuelUsed``, ``usage``, ``bindingCalls``) plus the run's identity (run id, hashes,
backend), so ``dotboxd run --format json`` output can be compared with a case directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from dotboxd.core.frozen_state import frozen_state, restore_frozen_state
from dotboxd.core.read_only import EMPTY
from dotboxd.core.types import SandboxType, to_type_ref
from dotboxd.core.values import Value, encode_typed, frozen_constructor
from dotboxd.host.settled import SettledLater
from dotboxd.runtime.audit import AuditEvent, Observer
from dotboxd.runtime.command_batch import apply_batch
from dotboxd.runtime.commands import Command
from dotboxd.runtime.errors import ErrorInfo
from dotboxd.runtime.execution import RunRecord
from dotboxd.runtime.meter import ResourceUsage
from dotboxd.validator.plan import ExecutionPlan


@dataclass(frozen=True, slots=True)
class ExecutionResult(SettledLater):
    """The outcome of ``SandboxHost.execute``: a value or a sanitized error, never both.

    ``audit_events`` is the run's events in order (an immutable sequence equal to the tuple of the
    same events; the closing ``RunSummary`` may be built on first read, see ``AuditTrail``).
    ``stage`` is ``run`` for anything that reached the runtime, or ``import``/``validate`` for
    ``SandboxHost.run`` calls whose module was rejected before a plan existed. ``commands`` holds the
    run's queued host commands (empty unless the run succeeded); ``applied_commands`` those whose
    effect the host API left in place (all of the applicable ones, or - when applying failed with
    ``R-HOST-COMMAND`` - exactly those that could not be undone, usually none; see
    ``dotboxd.runtime.command_batch``) and ``commands_applied`` how many that is. ``backend`` is the backend the host was asked for; ``executed_by`` the
    execution tier that actually ran the entrypoint (``reference`` when an optimized backend fell
    back or ran a cold plan interpreted; empty when no run started).

    A result of a run that consumed fuel only may hold its fields other than ``ok``, ``value`` and
    ``error`` as its run's compact record until one of them is first read (``deferred_builder``,
    ``host.settled``): nothing a host can observe tells it from one built with every field.

    A result pickles, copies and converts with ``dataclasses.asdict``/``astuple`` (its mapping
    fields, here and in its events and commands, are read-only dicts: ``core.read_only``).
    """

    ok: bool
    value: Value
    error: ErrorInfo | None
    usage: ResourceUsage
    audit_events: Sequence[AuditEvent]
    module_hash: str
    plan_hash: str
    policy_hash: str
    run_id: str = ""
    backend: str = "reference"
    stage: str = "run"
    return_type: SandboxType | None = None
    commands: tuple[Command, ...] = ()
    commands_applied: int = 0
    binding_calls: Mapping[str, int] = field(default_factory=lambda: EMPTY)
    executed_by: str = ""
    applied_commands: tuple[Command, ...] = ()
    isolation_layers: tuple[str, ...] = ()
    """The OS isolation layers the run's worker had in force (``isolation="worker"``); empty for
    an in-process run."""

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle`` and ``copy`` carry: every field, ``binding_calls`` as a plain dict
        (``core.frozen_state``). A deferred result is settled first."""
        return frozen_state(self, _VIEWS)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The inverse of ``__getstate__``: ``binding_calls`` as a new read-only dict again."""
        restore_frozen_state(self, state, _VIEWS)

    @property
    def fuel_used(self) -> int:
        return self.usage.fuel_used

    def value_json(self) -> Any:
        """The value in the conformance typed encoding (None when the run failed)."""
        if not self.ok or self.return_type is None:
            return None
        return encode_typed(self.value, to_type_ref(self.return_type))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "stage": self.stage,
            "outcome": "ok" if self.ok else ("error" if self.stage == "run" else "rejected"),
        }
        if self.ok:
            out["value"] = self.value_json()
        elif self.error is not None:
            out["error"] = self.error.category
            out["code"] = self.error.code
            out["message"] = self.error.safe_message
            if self.error.diagnostic is not None:
                out["diagnostic"] = self.error.diagnostic.code
                if self.error.diagnostic.pointer:
                    out["pointer"] = self.error.diagnostic.pointer
            elif self.error.pointer:  # a run-time error raised by an operation: where it stands
                out["pointer"] = self.error.pointer
                if self.error.span is not None:
                    out["line"] = self.error.span.line
                    out["column"] = self.error.span.column
        if self.stage == "run":
            out["fuelUsed"] = self.usage.fuel_used
            out["usage"] = self.usage.to_json()
            out["bindingCalls"] = dict(sorted(self.binding_calls.items()))
        out["runId"] = self.run_id
        out["backend"] = self.backend
        out["moduleHash"] = self.module_hash
        out["planHash"] = self.plan_hash
        out["policyHash"] = self.policy_hash
        if self.isolation_layers:
            out["isolationLayers"] = list(self.isolation_layers)
        return out


_VIEWS = frozenset({"binding_calls"})
"""The fields of ``ExecutionResult`` held as read-only dicts (``core.read_only``, ``core.frozen_state``)."""

new_execution_result = frozen_constructor(ExecutionResult)
"""``ExecutionResult(...)`` without the frozen ``__init__`` (one per host call; see ``frozen_constructor``)."""


def result_of(
    plan: ExecutionPlan,
    backend: str,
    record: RunRecord,
    applied: tuple[Command, ...] = (),
    isolation_layers: tuple[str, ...] = (),
) -> ExecutionResult:
    """The result of one run of ``plan`` on ``backend`` from its ``RunRecord`` (``applied``: the
    commands whose effect the host left in place, see ``ExecutionResult``; ``isolation_layers``:
    those of the worker that ran it, if any)."""
    identity = (plan.module_hash, plan.plan_hash, plan.policy_hash)
    return new_execution_result(*_field_values(identity, backend, record, applied, isolation_layers))


def _field_values(
    identity: tuple[str, str, str],
    backend: str,
    record: RunRecord,
    applied: tuple[Command, ...] = (),
    isolation_layers: tuple[str, ...] = (),
) -> tuple[Any, ...]:
    """Every field of the result of ``record``, in ``ExecutionResult``'s field order (``identity``:
    the plan's module, plan and policy hashes)."""
    run_id, value, error, usage, events, commands, calls, return_type, executed_by = record
    module_hash, plan_hash, policy_hash = identity
    return (
        error is None,
        value,
        error,
        usage,
        events,
        module_hash,
        plan_hash,
        policy_hash,
        run_id,
        backend,
        "run",
        return_type,
        commands,
        len(applied),
        calls,
        executed_by,
        applied,
        isolation_layers,
    )


def commands_to_apply(record: RunRecord, apply_commands_on_success: bool) -> bool:
    """Whether the run's command queue is to be applied: the run succeeded, the caller asked for
    it, and at least one queued command is applicable (the others are only reported)."""
    commands = record[5]
    return bool(
        commands and record[2] is None and apply_commands_on_success and any(c.applicable for c in commands)
    )


def applied_result(
    plan: ExecutionPlan,
    backend: str,
    record: RunRecord,
    audit_clock: Callable[[], float],
    observers: Iterable[Observer],
    isolation_layers: tuple[str, ...] = (),
) -> ExecutionResult:
    """The result of a successful run whose commands are to be applied: applied as one batch
    (``runtime.command_batch``), whose outcome joins the audit trail and may fail the run (its value
    is then dropped). The in-process host and the worker backend both finish runs here."""
    run_id, value, error, usage, events, commands, calls, return_type, executed_by = record
    report, events = apply_batch(commands, run_id, events, audit_clock, observers)
    error = report.error()
    return result_of(
        plan,
        backend,
        (
            run_id,
            value if error is None else None,
            error,
            usage,
            events,
            commands,
            calls,
            return_type,
            executed_by,
        ),
        report.applied,
        isolation_layers,
    )


def refused_result(plan: ExecutionPlan, error: ErrorInfo, backend: str) -> ExecutionResult:
    """The result of a run of ``plan`` refused before it started (a binding missing from the
    catalogue, a plan the host will not run, a busy or unusable worker): no value, no audit, no fuel
    used, the plan's identity."""
    return ExecutionResult(
        ok=False,
        value=None,
        error=error,
        usage=ResourceUsage(max_fuel=plan.policy.limits.max_fuel),
        audit_events=(),
        module_hash=plan.module_hash,
        plan_hash=plan.plan_hash,
        policy_hash=plan.policy_hash,
        backend=backend,
    )


ResultBuilder = Callable[..., ExecutionResult]
"""Builds the result of a run from its ``RunRecord`` fields, given in order (``result_builder``)."""


def _blank_result_class() -> Callable[[], Any] | None:
    """A class whose instances are blank ``ExecutionResult`` objects that take plain slot stores,
    for builders that fill every field themselves and then retype the object (``__class__``) to
    ``ExecutionResult``: a subclass adding no slot, with ``object``'s C ``__init__``,
    ``__setattr__`` and ``__delattr__`` in place of the frozen ones.

    Why a subclass of the result itself rather than the frozen-record twin (``frozen_constructor``,
    a sibling class with the same slots): CPython accepts a ``__class__`` change between two
    classes whose layouts it can prove equal; from a subclass that adds nothing to its base the
    proof is one step, while between siblings it compares their slot-name tuples - about 600
    instructions per result (cachegrind). The frozen ``__delattr__`` has to go as well as the
    ``__setattr__``: either one left in the class makes every slot store a Python call. Such an
    object never leaves its builder before it is retyped. None where the retype is refused
    (another interpreter): the callers then build through the frozen-record constructor."""
    final = ExecutionResult
    blank: Callable[[], Any] = type(
        "_BlankExecutionResult",
        (final,),
        {
            "__slots__": (),
            "__init__": object.__init__,
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
        },
    )
    try:
        probe = blank()
        probe.ok = True
        probe.__class__ = final
    except (TypeError, AttributeError):
        return None
    return blank if type(probe) is final and probe.ok is True else None


_BLANK_RESULT = _blank_result_class()


def result_builder(plan: ExecutionPlan, backend: str) -> ResultBuilder:
    """``result_of(plan, backend, record)`` for a record without applied commands, taking the
    record's fields as arguments, with the plan's fields read once: what a host keeps per
    entrypoint and calls once per run (``SandboxHost``; a fast lane calls it directly)."""
    module_hash, plan_hash, policy_hash = plan.module_hash, plan.plan_hash, plan.policy_hash
    if _DIRECT_BUILDS:
        assert _BLANK_RESULT is not None
        return _direct_builder(_BLANK_RESULT, module_hash, plan_hash, policy_hash, backend)
    new = new_execution_result

    def build(
        run_id: str,
        value: Value,
        error: ErrorInfo | None,
        usage: ResourceUsage,
        events: Sequence[AuditEvent],
        commands: tuple[Command, ...],
        calls: Mapping[str, int],
        return_type: SandboxType | None,
        executed_by: str,
    ) -> ExecutionResult:
        return new(
            error is None,
            value,
            error,
            usage,
            events,
            module_hash,
            plan_hash,
            policy_hash,
            run_id,
            backend,
            "run",
            return_type,
            commands,
            0,
            calls,
            executed_by,
            (),
        )

    return build


def _direct_builder(
    blank: Callable[[], Any], module_hash: str, plan_hash: str, policy_hash: str, backend: str
) -> ResultBuilder:
    """``result_builder``'s builder as one plain function: a blank result (``_blank_result_class``),
    every field stored with a plain slot store, then retyped to ``ExecutionResult`` - one Python
    frame per result instead of three (the wrapper, the frozen-record builder's ``__init__``, its
    ``__post_init__``). The object is the one ``result_of`` builds: same type, fields, equality,
    hash and repr (``tests/host/test_result_builder.py``)."""
    final = ExecutionResult

    def build(
        run_id: str,
        value: Value,
        error: ErrorInfo | None,
        usage: ResourceUsage,
        events: Sequence[AuditEvent],
        commands: tuple[Command, ...],
        calls: Mapping[str, int],
        return_type: SandboxType | None,
        executed_by: str,
    ) -> ExecutionResult:
        result = blank()
        result.ok = error is None
        result.value = value
        result.error = error
        result.usage = usage
        result.audit_events = events
        result.module_hash = module_hash
        result.plan_hash = plan_hash
        result.policy_hash = policy_hash
        result.run_id = run_id
        result.backend = backend
        result.stage = "run"
        result.return_type = return_type
        result.commands = commands
        result.commands_applied = 0
        result.binding_calls = calls
        result.executed_by = executed_by
        result.applied_commands = ()
        result.isolation_layers = ()
        result.__class__ = final
        return result  # type: ignore[no-any-return]

    return build


def _direct_builds_every_field() -> bool:
    """Whether ``_direct_builder``'s results have every field of ``ExecutionResult`` (a field added to
    the class since, which the builder does not store, turns the direct builder off)."""
    if _BLANK_RESULT is None:
        return False
    build = _direct_builder(_BLANK_RESULT, "", "", "", "")
    probe = build("", None, None, ResourceUsage(), (), (), EMPTY, None, "")
    return type(probe) is ExecutionResult and all(hasattr(probe, f.name) for f in fields(ExecutionResult))


_DIRECT_BUILDS = _direct_builds_every_field()


DeferredBuilder = Callable[[Value, "ErrorInfo | None", Any], ExecutionResult]
"""Builds the result of a run from its value, error and compact record (``deferred_builder``)."""


def deferred_builder(
    plan: ExecutionPlan, backend: str, record_of: Callable[[Any], RunRecord]
) -> DeferredBuilder:
    """``result_of(plan, backend, record_of(compact))`` for a run known by a compact record (a fast
    lane's run that consumed fuel only), called as ``build(value, error, compact)``: the result
    stores ``ok``, ``value`` and ``error`` and keeps ``compact``; its other fields are settled from
    ``record_of(compact)`` when one of them is first read (``host.settled``). A full ``RunRecord``
    (9 fields, every one immutable) may be given for ``compact``: it is its own record. Equal, field by field,
    to the eager result (``tests/host/test_result_builder.py``).

    The builder is a plain function, not a class with an ``__init__``: calling a class whose
    ``__init__`` is Python code goes through the type's init slot (a method lookup and a bound
    call), about 50 ns more per result than a function that makes a blank result
    (``_blank_result_class``), stores five slots and retypes it. Where the retype is refused the
    result is built eagerly."""
    identity = (plan.module_hash, plan.plan_hash, plan.policy_hash)

    def settle(compact: Any) -> tuple[Any, ...]:
        return _field_values(identity, backend, compact if len(compact) == 9 else record_of(compact))

    blank = _BLANK_RESULT
    if blank is not None:
        final = ExecutionResult

        def direct(value: Value, error: ErrorInfo | None, compact: Any) -> ExecutionResult:
            result = blank()
            result.ok = error is None
            result.value = value
            result.error = error
            result._pending = compact
            result._settle = settle
            result.__class__ = final
            return result  # type: ignore[no-any-return]

        return direct

    def eager(value: Value, error: ErrorInfo | None, compact: Any) -> ExecutionResult:
        return new_execution_result(*settle(compact))

    return eager
