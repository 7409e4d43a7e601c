"""Inside the isolated worker: rebuild each plan from its content, check it, run kernels, relay bindings.

This module runs only in a worker process that the bootstrap has already put behind every layer of
its profile (namespaces, uid drop, rlimits, no-new-privs, seccomp); ``serve`` is its whole life. It
trusts nothing from the host it did not check itself: a plan arrives as content (the module's wire
JSON, the policy JSON, the binding manifest) with the hashes the host computed, and the worker
imports the module strictly, validates it again against the manifest's contracts and refuses the
run (``R-WORKER-INTEGRITY``) unless the module, policy, binding-manifest and plan hashes it computes
are the host's. Checked plans are kept under a digest of the content as received.

The worker holds no binding implementation and no host state. Every host-binding call of a run is
sent to the host whole (``RunContext.relay``): the binding id, the arguments in the typed encoding
and the run's meter; the host makes the call (checks, charges, audit, command queue) and answers
with the value or the error and the meter as it left it. The entrypoint's checks, the run summary
and the command batch stay in the host too: the worker only runs the entrypoint's body.

Frames (length-prefixed JSON, ``frames``): host -> worker ``run`` (and ``plan`` when asked with
``need``) and ``reply``; worker -> host ``need``, ``call``, ``done`` and ``refused``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dotboxd.core import literal_rules
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.types import to_type_ref
from dotboxd.core.utf16 import close_scope, open_scope
from dotboxd.core.values import SandboxFault, Value, decode_typed, encode_typed
from dotboxd.grammar.wire import import_module
from dotboxd.isolation import frames
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.execution import Backend
from dotboxd.validator.api import validate
from dotboxd.validator.plan import ExecutionPlan, module_hash
from dotboxd.validator.policy import VOUCHED_ROOTS, Policy

PLAN_CACHE = 32
"""Checked plans one worker keeps (least recently used dropped)."""

SPEC_KEYS = (
    "module",
    "policy",
    "manifest",
    "withoutValidator",
    "hostRoots",
    "moduleHash",
    "policyHash",
    "manifestHash",
    "planHash",
)
"""A plan's content: ``withoutValidator`` lists (comma-separated) the bindings declared with no
grant validator at all, which the manifest form cannot say (it reads a missing one as the
parameterless validator) and the manifest hash tells apart. ``hostRoots`` (a JSON list) names the
file-grant roots the host checked on its own filesystem, which the worker cannot see
(``validator.policy.VOUCHED_ROOTS``)."""


def spec_key(spec: dict[str, str]) -> str:
    """The SHA-256 a plan's content is kept under, on both sides: every field, length-prefixed."""
    digest = hashlib.sha256()
    for name in SPEC_KEYS:
        encoded = str(spec[name]).encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return digest.hexdigest()


class Refused(Exception):
    """The worker will not run this plan (``code``: ``R-WORKER-INTEGRITY``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_plan(spec: dict[str, Any]) -> ExecutionPlan:
    """The plan ``spec`` describes, rebuilt here: strict import, strict policy and manifest
    readers, validation, and every hash compared with the host's (Refused on any difference)."""
    if set(spec) != set(SPEC_KEYS) or not all(isinstance(spec[k], str) for k in SPEC_KEYS):
        raise Refused("the plan content has the wrong fields")
    try:
        module = import_module(spec["module"])
        _same("module", module_hash(module), spec["moduleHash"])
        roots = json.loads(spec["hostRoots"])
        if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
            raise Refused("the host's file-grant roots are malformed")
        VOUCHED_ROOTS.update(roots)
        policy = Policy.from_json(spec["policy"])
        _same("policy", policy.policy_hash, spec["policyHash"])
        bare = set(filter(None, spec["withoutValidator"].split(",")))
        declared = [
            replace(d, grant_validator=None) if d.id in bare else d
            for d in load_binding_manifest(spec["manifest"])
        ]
        catalog = BindingRegistry(declared).build()
        _same("binding manifest", catalog.manifest_hash, spec["manifestHash"])
        plan = validate(module, policy, catalog, prove=False)  # the host proved it (strict mode)
        _same("plan", plan.plan_hash, spec["planHash"])
    except DotBoxDError as refused:
        raise Refused(f"the worker refused the plan ({refused.code})") from None
    except ValueError:  # the roots' JSON
        raise Refused("the plan content is malformed") from None
    return plan


def _same(what: str, computed: str, claimed: str) -> None:
    if computed != claimed:
        raise Refused(f"the {what} hash computed in the worker differs from the host's")


_BACKENDS: dict[str, Backend] = {}


def _backend(name: str) -> Backend:
    """The worker's backend of that name, built once (each keeps per-plan caches: the reference's
    resolved call targets, the optimized backend's compiled artifacts)."""
    found = _BACKENDS.get(name)
    if found is None:
        found = _BACKENDS[name] = _new_backend(name)
    return found


def _new_backend(name: str) -> Backend:
    if name == "reference":
        from dotboxd.runtime.reference import ReferenceBackend

        return ReferenceBackend()
    from dotboxd.runtime.optimized import AutoBackend, OptimizedBackend

    if name == "auto":
        return AutoBackend()
    if name == "optimized":
        return OptimizedBackend()
    raise Refused(f"backend {name!r} is not available in the worker")


def error_frame(fault: SandboxFault) -> dict[str, Any]:
    """A run-time error as a frame field: code, safe message and the JSON pointer of where it
    happened (the host looks the pointer up in its own module for the line and column)."""
    out: dict[str, Any] = {"code": fault.code, "message": fault.safe_message}
    if fault.location is not None:
        out["pointer"] = fault.location[0]
    diagnostic = getattr(fault, "diagnostic", None)
    if diagnostic is not None:
        out["diagnostic"] = {
            "code": diagnostic.code,
            "message": diagnostic.message,
            "pointer": diagnostic.pointer,
        }
    return out


def fault_from_frame(data: Any) -> SandboxError:
    """The SandboxError a peer's error field describes (ValueError when it is malformed)."""
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("code"), str)
        or not isinstance(data.get("message"), str)
    ):
        raise ValueError("malformed error")
    return SandboxError(data["code"], data["message"][:500])


class _Link:
    """The worker's two pipe ends and the frames in flight."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd

    def send(self, frame: dict[str, Any]) -> None:
        data = memoryview(frames.encode(frame))
        while data:
            data = data[os.write(self.write_fd, data) :]

    def receive(self) -> dict[str, Any] | None:
        return frames.read_frame(self.read_fd)


def _events_since(run: RunContext, sent: list[int]) -> list[dict[str, Any]]:
    """The audit events the worker's own code wrote (a backend's fallback or verifier report)
    since the last frame, for the host to write into the run's real trail in order."""
    log = run.audit_log
    if log is None:
        return []
    events = log.events[sent[0] :]
    sent[0] += len(events)
    return [
        {
            "kind": e.kind,
            "success": e.success,
            "bindingId": e.binding_id,
            "capabilityId": e.capability_id,
            "effect": e.effect,
            "resourceId": e.resource_id,
            "errorCode": e.error_code,
            "message": e.message,
            "bytes": e.bytes,
            "fields": {str(k): v for k, v in e.fields.items() if isinstance(v, str | int | float | bool)},
        }
        for e in events
    ]


def _relay(link: _Link, sent: list[int]) -> Callable[[RunContext, str, tuple[Value, ...]], Value]:
    def relay(run: RunContext, binding_id: str, args: tuple[Value, ...]) -> Value:
        desc = run.plan.binding(binding_id)
        if desc is None:  # what the host's own call sequence says first, without asking it
            raise SandboxError(
                "R-PLAN-BINDING", f"binding '{binding_id}' is not referenced by the execution plan"
            )
        link.send(
            {
                "t": "call",
                "id": binding_id,
                "args": [encode_typed(a, to_type_ref(t)) for a, t in zip(args, desc.parameters, strict=True)],
                "meter": run.meter.state(),
                "events": _events_since(run, sent),
            }
        )
        reply = link.receive()
        if reply is None or reply.get("t") != "reply":
            os._exit(4)  # the host is gone or confused: nothing sensible is left to do
        run.meter.load_state(reply["meter"])
        if reply.get("ok") is True:
            value: Value = decode_typed(reply["value"], to_type_ref(desc.return_type), literal_rules)
            return value
        raise fault_from_frame(reply.get("error"))

    return relay


def _run(link: _Link, plan: ExecutionPlan, request: dict[str, Any]) -> dict[str, Any]:
    function_id = str(request["fn"])
    info = plan.functions[function_id]
    values = tuple(
        decode_typed(raw, to_type_ref(t), literal_rules)
        for raw, t in zip(request["args"], info.parameter_types, strict=True)
    )
    run = RunContext(plan, str(request["runId"]))
    run.meter.load_state(request["meter"])
    run.meter.deadline_in(float(request["seconds"]))
    sent = [0]
    run.relay = _relay(link, sent)
    backend = _backend(str(request["backend"]))
    open_scope()
    try:
        value = backend.run(run, function_id, values)
        outcome: dict[str, Any] = {"ok": True, "value": encode_typed(value, to_type_ref(info.return_type))}
    except SandboxFault as fault:
        outcome = {"ok": False, "error": error_frame(fault)}
    except RecursionError:
        outcome = {
            "ok": False,
            "error": {"code": "R-QUOTA-CALL-DEPTH", "message": "nesting exceeds the interpreter's capacity"},
        }
    except Exception:
        outcome = {"ok": False, "error": {"code": "R-HOST-INTERNAL", "message": "internal runtime fault"}}
    finally:
        close_scope()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "t": "done",
        **outcome,
        "meter": run.meter.state(),
        "events": _events_since(run, sent),
        "executedBy": run.executed_by or backend.name,
        "cpuMs": int((usage.ru_utime + usage.ru_stime) * 1000),
    }


def serve(read_fd: int, write_fd: int) -> None:
    """Say ``up``, then answer ``prepare`` and ``run`` frames until the host closes the pipe (or
    sends anything else). The backends are built first, so a worker is ready when it says so."""
    link = _Link(read_fd, write_fd)
    for name in ("reference", "optimized"):
        with contextlib.suppress(ImportError, Refused):
            _backend(name)
    link.send({"t": "up"})
    plans: OrderedDict[str, ExecutionPlan] = OrderedDict()
    while True:
        request = link.receive()
        kind = None if request is None else request.get("t")
        if request is None or kind not in ("prepare", "run"):
            return
        key = str(request.get("key"))
        if kind == "prepare":
            if key not in plans and not _prepare(link, plans):
                continue
            plans.move_to_end(key)
            link.send({"t": "ready"})
            continue
        if key not in plans and not _prepare(link, plans):  # the host thought it was here
            continue
        plans.move_to_end(key)
        link.send(_run(link, plans[key], request))


def _prepare(link: _Link, plans: OrderedDict[str, ExecutionPlan]) -> bool:
    """Ask for a plan's content, check it and keep it under a SHA-256 of what arrived (never the
    key the host claimed): True when kept, False when refused (the host was told)."""
    link.send({"t": "need"})
    answer = link.receive()
    if answer is None or answer.get("t") != "plan" or not isinstance(answer.get("spec"), dict):
        os._exit(4)
    spec = answer["spec"]
    try:
        plan = check_plan(spec)
    except Refused as refused:
        link.send({"t": "refused", "code": "R-WORKER-INTEGRITY", "message": refused.message})
        return False
    plans[spec_key(spec)] = plan
    while len(plans) > PLAN_CACHE:
        plans.popitem(last=False)
    return True


__all__ = [
    "PLAN_CACHE",
    "SPEC_KEYS",
    "Refused",
    "check_plan",
    "error_frame",
    "fault_from_frame",
    "serve",
    "spec_key",
]
