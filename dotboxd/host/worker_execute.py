"""``SandboxHost.execute(..., isolation="worker")``: the host's side of a kernel run in an isolated worker.

Defense in depth for hard multi-tenant hosts: the kernel's own work (the interpreter or the
generated code walking the kernel) happens in a worker process behind the OS boundary of
``dotboxd.isolation`` (strict profile unless the pool was given a lowered one), so a flaw in a
backend that a hostile kernel could reach meets seccomp, namespaces, a dropped uid and rlimits
instead of the host's address space.

Everything that touches host state stays here, in the host's ordinary ``EntryCall`` pipeline: the
plan's gates, the entrypoint and input checks and their charges, every host-binding call (checks,
charges, the real binding, its audit events), the command queue and its all-or-nothing batch, the
``RunSummary``. The only thing that differs from an in-process run is the backend: a
``WorkerBackend`` that hands the entrypoint's body to a pooled worker, serves the worker's binding
calls, and takes the meter back at the end, so fuel and every usage counter are the ones an
in-process run reports.

The worker is never trusted. Each frame from it is checked before anything is done with it: a
binding call must name a binding of the plan with arguments of its declared types; a meter it
reports must be well formed, within the policy's limits, with no counter gone backwards and no
host binding's call count changed (the host counts those itself); a value must decode at the
entrypoint's return type; an error must carry a registered run-time code. Anything else - a
malformed or oversized frame, a forged call, a worker that dies or overstays its wall time - ends
the run as a HostFailure (``R-WORKER-*``) with nothing applied, and the worker is retired.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dotboxd.core import literal_rules
from dotboxd.core.codes import all_codes
from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.core.limits import LIMITS
from dotboxd.core.types import to_type_ref
from dotboxd.core.values import SandboxFault, Value, decode_typed, encode_typed
from dotboxd.grammar.wire import dumps_wire
from dotboxd.host.result import (
    ExecutionResult,
    applied_result,
    commands_to_apply,
    refused_result,
    result_of,
)
from dotboxd.isolation.kernel_worker import PLAN_CACHE, error_frame, fault_from_frame, spec_key
from dotboxd.isolation.pool import PREPARE_MS, KernelWorker, WorkerLost, WorkerPool
from dotboxd.runtime.binding_call import call_binding
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import SandboxError, error_info_from_diagnostic
from dotboxd.runtime.execution import ArgEncoding, EntryCall
from dotboxd.runtime.locations import operation_nodes
from dotboxd.runtime.meter import STATE_COUNTERS, CancelToken, MeterLimits
from dotboxd.validator.plan import ExecutionPlan

if TYPE_CHECKING:
    from dotboxd.host.sandbox_host import SandboxHost

ISOLATION_MODES = ("none", "worker")
WORKER_BACKENDS = ("reference", "optimized", "auto")
"""Backends a worker can build by name (a host's own backend objects stay in the host)."""

WATCHDOG_GRACE_S = 2.0
"""How long past the run's wall-time deadline the host waits for the worker's own Timeout before
its watchdog retires the worker (the worker's meter checks the same deadline first)."""

_ATTEMPT_COUNTERS = frozenset({"loop_iterations", "host_calls", "log_events"})
_LIMIT_OF = {spec.counter: spec.name for spec in LIMITS if spec.counter is not None}
"""Each meter counter and the limit that bounds it (the core limit table's ``counter`` column)."""
_MONOTONE = frozenset(_LIMIT_OF) - {"call_depth", "loop_iterations"}
_IN_FLIGHT = frozenset({"loop_iterations"})
"""Counters a backend may hold ahead of the truth while a binding call is in flight: the optimized
backend charges a loop's iterations in advance and takes back the unused ones after the call
(``runtime/optimized/stubs.py``), so the host's meter holds the same value in process. Checked
against the limit only in the final meter, and never for going backwards."""

_default_pool: WorkerPool | None = None
_default_lock = threading.Lock()


def default_pool() -> WorkerPool:
    """The process-wide pool ``isolation="worker"`` uses when no ``worker_pool`` is given (strict
    profile, started on first use, closed at interpreter exit)."""
    global _default_pool
    with _default_lock:
        if _default_pool is None:
            _default_pool = WorkerPool()
        return _default_pool


class _Specs:
    """Each plan's content as the worker receives it, built once per plan (identity-checked)."""

    def __init__(self, size: int = 64) -> None:
        self._specs: OrderedDict[int, tuple[ExecutionPlan, dict[str, str], str]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def of(self, plan: ExecutionPlan) -> tuple[dict[str, str], str]:
        with self._lock:
            found = self._specs.get(id(plan))
            if found is not None and found[0] is plan:
                self._specs.move_to_end(id(plan))
                return found[1], found[2]
        spec = {
            "module": dumps_wire(plan.module, indent=None),
            "policy": json.dumps(plan.policy.to_json(), sort_keys=True, separators=(",", ":")),
            "manifest": json.dumps(plan.catalog.to_manifest(), sort_keys=True, separators=(",", ":")),
            "withoutValidator": ",".join(
                sorted(k for k, d in plan.catalog.items() if d.grant_validator is None)
            ),
            "hostRoots": json.dumps(
                sorted({g.parameters["root"] for g in plan.policy.grants if "root" in g.parameters})
            ),
            "moduleHash": plan.module_hash,
            "policyHash": plan.policy_hash,
            "manifestHash": plan.binding_manifest_hash,
            "planHash": plan.plan_hash,
        }
        key = spec_key(spec)
        with self._lock:
            self._specs[id(plan)] = (plan, spec, key)
            while len(self._specs) > self._size:
                self._specs.popitem(last=False)
        return spec, key


_SPECS = _Specs()


class WorkerBackend:
    """The backend of an isolated run: the named backend, run by ``session``'s worker, which
    already holds the checked plan. ``healthy`` says whether the worker answered cleanly (a value
    or the kernel's own error) and may be kept."""

    def __init__(self, name: str, session: _Session, key: str) -> None:
        self.name = name
        self.session = session
        self.key = key
        self.healthy = False

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        info = run.plan.functions[function_id]
        meter = run.meter
        request = {
            "t": "run",
            "key": self.key,
            "runId": run.run_id,
            "backend": self.name,
            "fn": function_id,
            "args": [
                encode_typed(a, to_type_ref(t)) for a, t in zip(args, info.parameter_types, strict=True)
            ],
            "meter": meter.state(),
            "seconds": meter.seconds_left(),
        }
        try:
            value = self.session.drive(run, request, info.return_type)
        except WorkerLost as lost:
            raise SandboxError(lost.code, lost.message) from None
        except SandboxError:
            self.healthy = True  # the kernel's own error, cleanly reported
            raise
        self.healthy = True
        return value


class _Session:
    """A run's conversation with its worker: the plan first (outside the run's meter: getting a
    worker ready is the host's overhead, not the kernel's), then the run itself."""

    def __init__(self, worker: KernelWorker, spec: dict[str, str]) -> None:
        self.worker = worker
        self.spec = spec
        self.run: RunContext = None  # type: ignore[assignment]  # set by ``drive``
        self.known: dict[str, Any] = {}

    def prepare(self, key: str) -> None:
        """Make sure the worker holds the checked plan (it asks for the content when it does not)."""
        worker = self.worker
        held = worker.plans
        if key in held:  # checked on an earlier run (the worker keeps the same LRU): no round trip
            held.move_to_end(key)
            return
        worker.send({"t": "prepare", "key": key})
        deadline = time.monotonic() + PREPARE_MS / 1000
        frame = worker.receive(deadline)
        if frame == {"t": "need"}:
            worker.send({"t": "plan", "spec": self.spec})
            frame = worker.receive(deadline)
        if frame != {"t": "ready"}:
            self._refused(frame)
        held[key] = None
        while len(held) > PLAN_CACHE:
            held.popitem(last=False)

    def _refused(self, frame: dict[str, Any]) -> None:
        if frame.get("t") == "refused" and frame.get("code") == "R-WORKER-INTEGRITY":
            message = frame.get("message")
            raise WorkerLost(
                "R-WORKER-INTEGRITY",
                message[:300] if isinstance(message, str) else "the worker refused the plan",
            )
        raise _bad("an unexpected frame")

    def drive(self, run: RunContext, request: dict[str, Any], return_type: Any) -> Value:
        self.run = run
        self.known = run.meter.state()
        worker = self.worker
        # one deadline for the whole run, fixed now: a worker that keeps calling bindings (each
        # refused once the run's time is spent) cannot keep the host serving it
        deadline = time.monotonic() + max(0.0, run.meter.seconds_left()) + WATCHDOG_GRACE_S
        asked = False
        worker.send(request)
        while True:
            if time.monotonic() >= deadline:
                raise WorkerLost("R-WORKER-TIMEOUT", "the watchdog stopped the worker at its wall-time limit")
            frame = worker.receive(deadline)
            kind = frame.get("t")
            if kind == "need":  # the worker no longer holds the plan the host thought it did
                if asked:
                    raise _bad("a second request for the plan")
                asked = True
                deadline += PREPARE_MS / 1000
                self.worker.send({"t": "plan", "spec": self.spec})
            elif kind == "call":
                self._serve_call(frame)
            elif kind == "done":
                return self._finish(frame, return_type)
            else:
                self._refused(frame)

    def _serve_call(self, frame: dict[str, Any]) -> None:
        run = self.run
        if set(frame) != {"t", "id", "args", "meter", "events"} or not isinstance(frame["id"], str):
            raise _bad("a malformed binding call")
        desc = run.plan.binding(frame["id"])
        if desc is None:
            raise _bad(f"a call of binding {frame['id'][:80]!r}, which is not in the plan")
        raw_args = frame["args"]
        if not isinstance(raw_args, list) or len(raw_args) != len(desc.parameters):
            raise _bad(f"a call of binding {desc.id!r} with the wrong number of arguments")
        try:
            args = tuple(
                decode_typed(a, to_type_ref(t), literal_rules)
                for a, t in zip(raw_args, desc.parameters, strict=True)
            )
        except (SandboxFault, ValueError, TypeError, KeyError, IndexError):
            raise _bad(f"a call of binding {desc.id!r} with arguments of the wrong types") from None
        self._take_meter(frame["meter"], final=False)
        self._write_events(frame["events"])
        reply: dict[str, Any]
        try:
            value = call_binding(run, desc.id, args)
            reply = {"t": "reply", "ok": True, "value": encode_typed(value, to_type_ref(desc.return_type))}
        except SandboxFault as fault:
            reply = {"t": "reply", "ok": False, "error": error_frame(fault)}
        self.known = run.meter.state()
        reply["meter"] = self.known
        self.worker.send(reply)

    def _finish(self, frame: dict[str, Any], return_type: Any) -> Value:
        run = self.run
        self._take_meter(frame.get("meter"), final=True)
        self._write_events(frame.get("events"))
        cpu = frame.get("cpuMs")
        if type(cpu) is int and cpu >= 0:
            self.worker.cpu_ms = cpu
        executed_by = frame.get("executedBy")
        if executed_by not in WORKER_BACKENDS:
            raise _bad("an unknown execution tier")
        run.executed_by = str(executed_by)
        if frame.get("ok") is True:
            try:
                value: Value = decode_typed(frame.get("value"), to_type_ref(return_type), literal_rules)
            except (SandboxFault, ValueError, TypeError, KeyError, IndexError):
                raise _bad("a result that is not of the entrypoint's return type") from None
            return value
        if frame.get("ok") is not False:
            raise _bad("a malformed result")
        raise self._error(frame.get("error"))

    def _error(self, data: Any) -> SandboxError:
        try:
            error = fault_from_frame(data)
        except ValueError:
            raise _bad("a malformed error") from None
        if (
            not error.code.startswith("R-")
            or error.code not in all_codes()
            or error.code.startswith("R-WORKER-")
        ):
            raise _bad("an error with a code the runtime does not raise")
        pointer = data.get("pointer")
        if isinstance(pointer, str):
            span = _spans(self.run.plan).get(pointer, _NOWHERE)
            if span is _NOWHERE:
                raise _bad("an error located at a node the kernel does not have")
            error.location = (pointer, span)
        return error

    def _take_meter(self, state: Any, *, final: bool) -> None:
        """Load the worker's meter after checking it against what the host knows."""
        run = self.run
        if not isinstance(state, dict):
            raise _bad("a malformed meter")
        limits = run.meter.limits
        known = self.known
        try:
            for name in STATE_COUNTERS:
                value = state.get(name)
                if type(value) is not int or value < 0:
                    raise ValueError(name)
                limit_name = _LIMIT_OF.get(name)
                if limit_name is not None and (final or name not in _IN_FLIGHT):
                    limit = getattr(limits, limit_name) + (1 if name in _ATTEMPT_COUNTERS else 0)
                    if value > limit:
                        raise ValueError(name)
                if name in _MONOTONE and value < known[name]:
                    raise ValueError(name)
            calls = state.get("calls_by_binding")
            if not isinstance(calls, dict):
                raise ValueError("calls_by_binding")
            before = known["calls_by_binding"]
            for binding_id in run.plan.bindings:
                if calls.get(binding_id, 0) != before.get(binding_id, 0):
                    raise ValueError(binding_id)  # only the host calls host bindings
            for binding_id, count in calls.items():
                if type(count) is not int or count < before.get(binding_id, 0):
                    raise ValueError(binding_id)
            run.meter.load_state(state)
        except ValueError:
            raise _bad("a meter the host cannot accept") from None

    def _write_events(self, events: Any) -> None:
        if not isinstance(events, list):
            raise _bad("malformed audit events")
        for event in events:
            if not isinstance(event, dict) or event.get("kind") not in _WORKER_EVENT_KINDS:
                raise _bad("an audit event the worker may not write")
            fields = event.get("fields")
            if not isinstance(fields, dict) or not isinstance(event.get("success"), bool):
                raise _bad("a malformed audit event")
            message = event.get("message")
            code = event.get("errorCode")
            self.run.audit.write(
                str(event["kind"]),
                success=bool(event["success"]),
                error_code=code if isinstance(code, str) else None,
                message=message if isinstance(message, str) else None,
                fields={str(k): v for k, v in fields.items() if isinstance(v, str | int | float | bool)},
            )


_WORKER_EVENT_KINDS = frozenset(
    {"ExecutionFallback", "VerifierFailure", "CacheInvalidated", "CompiledExecutionFailed"}
)
"""The events a backend writes on its own (not a binding's, which the host writes itself)."""

_NOWHERE: Any = object()
_SPAN_CACHE: OrderedDict[int, tuple[ExecutionPlan, dict[str, Span | None]]] = OrderedDict()


def _spans(plan: ExecutionPlan) -> dict[str, Span | None]:
    """JSON pointer -> span of every operation node of the host's own module (for locating a
    worker's error at the line and column the host's source has)."""
    found = _SPAN_CACHE.get(id(plan))
    if found is not None and found[0] is plan:
        return found[1]
    spans = {node.pointer: node.span for node in operation_nodes(plan.module)}
    _SPAN_CACHE[id(plan)] = (plan, spans)
    while len(_SPAN_CACHE) > 16:
        _SPAN_CACHE.popitem(last=False)
    return spans


def _bad(what: str) -> WorkerLost:
    return WorkerLost("R-WORKER-RESULT", f"the worker sent {what}; it was refused and retired")


__all__ = ["ISOLATION_MODES", "WORKER_BACKENDS", "WorkerBackend", "default_pool", "execute_isolated"]


# --- the host entry point ----------------------------------------------------------------------

_ENTRIES: OrderedDict[tuple[int, str, str], tuple[ExecutionPlan, EntryCall]] = OrderedDict()
_ENTRIES_LOCK = threading.Lock()


def _entry(plan: ExecutionPlan, entrypoint: str, encoding: ArgEncoding) -> EntryCall:
    """The runtime's ``EntryCall`` of (plan, entrypoint, encoding), kept for repeated runs."""
    key = (id(plan), entrypoint, encoding)
    with _ENTRIES_LOCK:
        found = _ENTRIES.get(key)
        if found is not None and found[0] is plan:
            _ENTRIES.move_to_end(key)
            return found[1]
    entry = EntryCall(plan, entrypoint, encoding)
    with _ENTRIES_LOCK:
        _ENTRIES[key] = (plan, entry)
        while len(_ENTRIES) > 256:
            _ENTRIES.popitem(last=False)
    return entry


def refuse_async(isolation: str) -> None:
    """``execute_async`` with an isolation mode: refused with a clear error."""
    raise reject(
        "E-ISOLATION-PROFILE",
        f"execute_async does not run kernels with isolation={isolation!r}",
        hint="call host.execute(..., isolation='worker') in a thread (asyncio.to_thread)",
    )


def execute_isolated(
    host: SandboxHost,
    plan: ExecutionPlan,
    entrypoint: str,
    args: Sequence[object],
    backend: str,
    encoding: ArgEncoding,
    cancel: CancelToken | None,
    apply_commands_on_success: bool,
    run_id: str | None,
    isolation: str,
    worker_pool: WorkerPool | None,
) -> ExecutionResult:
    """``SandboxHost.execute`` with ``isolation="worker"``: the host's checks, the ``EntryCall``
    pipeline and the command batch, exactly as in process, with a ``WorkerBackend``. Raises
    IsolationUnavailable when the pool's first worker cannot start with its required layers."""
    if isolation != "worker":
        raise reject(
            "E-ISOLATION-PROFILE",
            f"unknown isolation mode {isolation!r}",
            hint="one of " + ", ".join(ISOLATION_MODES) + " (pass worker_pool only with 'worker')",
        )
    try:
        plan.check_bindings(host.catalog)
        plan.check_implementations(host.catalog)
    except DotBoxDError as refused:
        return refused_result(plan, error_info_from_diagnostic(refused.diagnostic), backend)
    if backend not in WORKER_BACKENDS:
        missing = SandboxError("R-BACKEND-UNAVAILABLE", f"backend '{backend}' is not available in a worker")
        return refused_result(plan, missing.info(), backend)
    pool = worker_pool if worker_pool is not None else default_pool()
    wait_s = MeterLimits.from_object(plan.policy.limits).wall_time_ms / 1000 + WATCHDOG_GRACE_S
    try:
        worker = pool.acquire(wait_s)  # IsolationUnavailable propagates: nothing ran
    except WorkerLost as busy:
        return refused_result(plan, SandboxError(busy.code, busy.message).info(), backend)
    healthy = False
    try:
        spec, key = _SPECS.of(plan)
        session = _Session(worker, spec)
        try:
            if _usable(plan):  # else the run fails at the host's gate, as in process, unprepared
                session.prepare(key)
        except WorkerLost as lost:
            healthy = lost.code == "R-WORKER-INTEGRITY"  # a clean refusal: the worker is sound
            refusal = SandboxError(lost.code, lost.message).info()
            return replace(refused_result(plan, refusal, backend), isolation_layers=worker.layers)
        remote = WorkerBackend(backend, session, key)
        result = _run(
            host, plan, entrypoint, args, encoding, cancel, apply_commands_on_success, run_id, remote
        )
        healthy = remote.healthy or session.run is None  # None: the run never reached the worker
        return result
    finally:
        pool.release(worker, healthy=healthy)


def _usable(plan: ExecutionPlan) -> bool:
    """Whether the plan passes its run-time gate now (no capability revoked, no grant expired);
    when it does not, the worker is not asked to check it, so the run fails with the gate's own
    code, exactly as in process, rather than with the worker's refusal."""
    try:
        plan.ensure_usable()
    except DotBoxDError:
        return False
    return True


def _run(
    host: SandboxHost,
    plan: ExecutionPlan,
    entrypoint: str,
    args: Sequence[object],
    encoding: ArgEncoding,
    cancel: CancelToken | None,
    apply_commands_on_success: bool,
    run_id: str | None,
    remote: WorkerBackend,
) -> ExecutionResult:
    """The host's ``EntryCall`` pipeline and command batch (as ``SandboxHost.execute``) with the
    worker as the backend."""
    entry = _entry(plan, entrypoint, encoding)
    observers = host._observers
    record = entry.run_record(args, remote, cancel, observers, run_id, awaiter=host._sync_awaiter)
    layers = remote.session.worker.layers
    if commands_to_apply(record, apply_commands_on_success):
        return applied_result(plan, remote.name, record, entry.facts.audit_clock, observers, layers)
    return result_of(plan, remote.name, record, (), layers)
