"""The worker side of a job: rebuild the plan from a ``JobSpec``'s content and check every hash.

A worker trusts nothing that travelled: it imports the module's wire JSON strictly, reads the policy
and the binding manifest through their own strict readers, builds its host from the bindings its own
setup function returns, validates the module again, and compares every hash it computes with the one
the client sent. Any difference refuses the job with ``E-DIST-INTEGRITY`` before a kernel runs; a
setup function that cannot be found or fails refuses it with ``E-DIST-SETUP``.

Checked plans are cached per process under the spec's ``cache_key`` (a digest of everything as
received), so the check runs once per worker and job, not once per partition.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from collections.abc import Callable, Iterable
from threading import Lock
from typing import Any

from dotboxd.core.bindings import (
    BindingCatalog,
    BindingDescriptor,
    BindingRegistry,
    binding_manifest_hash,
    load_binding_manifest,
)
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.distributed.jobspec import JobSpec
from dotboxd.grammar.wire import import_module
from dotboxd.host.sandbox_host import SandboxHost
from dotboxd.validator.plan import ExecutionPlan, module_hash
from dotboxd.validator.policy import Policy

_CACHE_SIZE = 32
"""How many checked (host, plan) pairs one worker process keeps (oldest dropped)."""

_cache: OrderedDict[str, tuple[SandboxHost, ExecutionPlan]] = OrderedDict()
_lock = Lock()


def checked_plan(spec: JobSpec) -> tuple[SandboxHost, ExecutionPlan]:
    """The worker's host and plan for ``spec``, checked on first use (DotBoxDError on refusal)."""
    key = spec.cache_key()
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    built = _build(spec)
    with _lock:
        _cache[key] = built
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return built


def clear_cache() -> None:
    """Forget every checked plan of this process (tests; a host that rotates its bindings)."""
    with _lock:
        _cache.clear()


def _build(spec: JobSpec) -> tuple[SandboxHost, ExecutionPlan]:
    module = import_module(spec.module_wire)
    _same("module", module_hash(module), spec.module_hash)
    policy = Policy.from_json(spec.policy_json)
    _same("policy", policy.policy_hash, spec.policy_hash)
    shipped = binding_manifest_hash(load_binding_manifest(spec.manifest_json))
    _same("binding manifest", shipped, spec.binding_manifest_hash)
    host = SandboxHost(_worker_bindings(spec.setup))
    _same("worker's own binding manifest", host.catalog.manifest_hash, spec.binding_manifest_hash)
    plan = host.prepare(module, policy)
    _same("plan", plan.plan_hash, spec.plan_hash)
    return host, plan


def _same(what: str, computed: str, claimed: str) -> None:
    if computed != claimed:
        raise reject(
            "E-DIST-INTEGRITY",
            f"the {what} hash computed on the worker ({computed[:16]}...) differs from the job's "
            f"({claimed[:16]}...)",
            hint="the job was altered in transit, or the worker's setup provides other bindings "
            "than the client's host; the job does not run",
            what=what,
        )


def _worker_bindings(setup: str) -> BindingCatalog:
    """Call the named setup function and build its bindings into a catalogue."""
    module_name, _, function_name = setup.partition(":")
    try:
        function: Callable[[], Any] = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError, ValueError) as missing:
        raise reject(
            "E-DIST-SETUP",
            f"worker setup '{setup}' cannot be imported on this worker ({type(missing).__name__})",
            hint="install the module that defines it on every worker",
        ) from None
    try:
        provided = function()
    except DotBoxDError:
        raise
    except Exception as failed:
        raise reject(
            "E-DIST-SETUP",
            f"worker setup '{setup}' raised {type(failed).__name__}",
            hint="the setup function must return the worker's bindings without raising",
        ) from None
    if isinstance(provided, BindingCatalog):
        return provided
    if isinstance(provided, BindingRegistry):
        return provided.build()
    if isinstance(provided, Iterable):
        items = list(provided)
        if all(isinstance(item, BindingDescriptor) for item in items):
            return BindingRegistry(items).build()
    raise reject(
        "E-DIST-SETUP",
        f"worker setup '{setup}' returned {type(provided).__name__}, not bindings",
        hint="return a BindingCatalog, a BindingRegistry or a list of host_binding descriptors",
    )
