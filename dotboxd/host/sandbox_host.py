"""``SandboxHost``: the one object a host program needs to install and run kernels safely.

    host = SandboxHost(bindings=[kill])                  # the host's bindings, checked once
    plan = host.prepare(kernel_text, policy)             # import + validate: DotBoxDError if refused
    result = host.execute(plan, "main", [[1, 2, 3]])     # metered run: never raises for kernel faults
    result = await host.execute_async(plan, "main", [[1, 2, 3]])   # the same, on the caller's loop

``prepare`` is the install step: a kernel that needs a capability the policy does not grant is
rejected there and never runs. ``execute`` gates the plan again (revocations, expired grants, a
binding catalogue that changed since ``prepare``), runs it on the chosen backend and, only when the
run succeeded, applies the host commands its bindings queued as one all-or-nothing batch
(``dotboxd.runtime.command_batch``; a ``HostCommands`` audit event records the outcome).

A plan belongs to the host that prepared it. It carries the binding descriptors it was validated
with, implementations included, so ``execute`` refuses (``E-PLAN-BINDINGS``) a plan whose bindings
are not this host's own objects: a plan prepared on host A and handed to host B would otherwise
call A's code and change A's state. Refusing is the safer of the two choices (re-binding by id
would run B's code under checks - grant validators, proofs - that A's descriptors passed); hosts
that share one catalogue share their plans.

Repeated calls are cheap: the first ``execute`` of a (plan, entrypoint, backend, encoding) keeps what
does not change between runs - the resolved backend, the binding-catalogue check (plan and
catalogue are both immutable, so its success cannot change), and the runtime's ``EntryCall`` with
its parameter checks - and later calls only do the per-run work, every check of which still runs.

``execute_async`` is ``execute`` for asyncio hosts: the run executes on the caller's event loop and
is suspended at each pending async binding result, which is awaited on that loop
(``dotboxd.runtime.suspend``); cancelling the awaiting task ends the run as Cancelled with nothing
applied and re-raises ``CancelledError``. The synchronous ``execute`` awaits async bindings on the
host's ``async_loop`` (an event loop running in another thread) or, without one, on the runtime's
shared loop thread (``dotboxd.runtime.awaiting``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dotboxd.core.ast import Module
from dotboxd.core.bindings import BindingCatalog, BindingDescriptor, BindingRegistry
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host.result import ExecutionResult, new_execution_result
from dotboxd.runtime.audit import Observer
from dotboxd.runtime.awaiting import Awaiter, LoopAwaiter, discard
from dotboxd.runtime.command_batch import apply_batch
from dotboxd.runtime.commands import Command
from dotboxd.runtime.errors import ErrorInfo, SandboxError, error_info_from_diagnostic
from dotboxd.runtime.execution import ArgEncoding, Backend, EntryCall
from dotboxd.runtime.facades import attach_standard_facades
from dotboxd.runtime.meter import CancelToken, ResourceUsage
from dotboxd.runtime.reference import ReferenceBackend
from dotboxd.runtime.suspend import drive
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

ModuleSource = Module | str | bytes | os.PathLike[str]

_BUNDLED_BACKENDS = ("optimized", "auto")
"""The backends besides the reference one, built on a host's first use (``_bundled_backend``)."""

DEFAULT_DISPATCH_CACHE_SIZE = 1024
"""How many (plan, entrypoint, backend, encoding) dispatch records a host keeps by default; the least
recently used is dropped first. A multi-tenant host that round-robins more distinct plans than this
should raise it (``SandboxHost(dispatch_cache_size=...)``): a miss re-runs the catalogue checks and
rebuilds the ``EntryCall``, roughly ten times the cost of a hit."""


class _Dispatch:
    """What a host keeps between calls of one entrypoint: the plan and catalogue it was checked
    against (compared by identity on every call), the backend object and the runtime's EntryCall."""

    __slots__ = ("backend", "catalog", "entry", "plan")

    def __init__(
        self, plan: ExecutionPlan, catalog: BindingCatalog, backend: Backend, entry: EntryCall
    ) -> None:
        self.plan = plan
        self.catalog = catalog
        self.backend = backend
        self.entry = entry


class SandboxHost:
    """A host's bindings, backends and audit observers; prepares and executes kernels."""

    def __init__(
        self,
        bindings: BindingRegistry | BindingCatalog | Iterable[BindingDescriptor] | None = None,
        *,
        backends: Mapping[str, Backend] | None = None,
        observers: Iterable[Observer] = (),
        standard_facades: bool = True,
        async_loop: asyncio.AbstractEventLoop | None = None,
        dispatch_cache_size: int = DEFAULT_DISPATCH_CACHE_SIZE,
    ) -> None:
        """Build the binding catalogue (DotBoxDError ``E-BINDING-*`` for a bad binding). With
        ``standard_facades`` a standard binding registered without an invoker (``file.readText``,
        ``file.writeText``, ``time.nowUnixMillis``, ``random.nextI32``, ``log.info``, ``log.warn``)
        gets the runtime's safe facade (``dotboxd.runtime.facades``), ``net.http.get`` included (a
        pinned, allowlisted GET; a host may still register its own invoker, which is never replaced).

        ``async_loop`` is where the synchronous ``execute`` awaits async bindings: an event loop
        the host runs in another thread (work tied to that loop then completes). Without it they
        are awaited on the runtime's one shared loop thread. ``execute_async`` ignores it: it
        always awaits on the caller's loop.

        ``dispatch_cache_size`` bounds the per-entrypoint records kept between calls, by
        ``execute`` and ``execute_async`` alike (one LRU; at least 1, else ValueError)."""
        if isinstance(dispatch_cache_size, bool) or not isinstance(dispatch_cache_size, int):
            raise TypeError("dispatch_cache_size must be an int")
        if dispatch_cache_size < 1:
            raise ValueError("dispatch_cache_size must be at least 1")
        self.catalog = _build_catalog(bindings)
        if standard_facades:
            self.catalog = attach_standard_facades(self.catalog)
        reference: Backend = ReferenceBackend()
        self._backends: dict[str, Backend] = {"reference": reference}
        if backends:
            self._backends.update(backends)
        self._observers = tuple(observers)
        self._dispatch: OrderedDict[tuple[int, str, str, str], _Dispatch] = OrderedDict()
        self._dispatch_limit = dispatch_cache_size
        self._sync_awaiter: Awaiter | None = None if async_loop is None else LoopAwaiter(async_loop)

    # --- install ---------------------------------------------------------------------------

    def prepare(
        self, module: ModuleSource, policy: Policy | None = None, *, now_unix_ms: int | None = None
    ) -> ExecutionPlan:
        """Import (a Module, wire JSON text, the readable text form, or a path) and validate against
        ``policy`` (default: pure computation only). Raises DotBoxDError when refused."""
        from dotboxd.validator.api import validate

        plan: ExecutionPlan = validate(
            _load(module), policy or Policy.default(), self.catalog, now_unix_ms=now_unix_ms
        )
        return plan

    # --- run -------------------------------------------------------------------------------

    def execute(
        self,
        plan: ExecutionPlan,
        entrypoint: str = "main",
        args: Sequence[object] = (),
        *,
        backend: str = "reference",
        encoding: ArgEncoding = "python",
        cancel: CancelToken | None = None,
        apply_commands_on_success: bool = True,
        run_id: str | None = None,
    ) -> ExecutionResult:
        """Run ``entrypoint`` with ``args`` (one per parameter; Python values, or the conformance
        JSON encoding with ``encoding="json"``). Kernel faults come back as a failed result."""
        return self._execute(
            plan, entrypoint, args, backend, encoding, cancel, apply_commands_on_success, run_id, None
        )

    async def execute_async(
        self,
        plan: ExecutionPlan,
        entrypoint: str = "main",
        args: Sequence[object] = (),
        *,
        backend: str = "reference",
        encoding: ArgEncoding = "python",
        cancel: CancelToken | None = None,
        apply_commands_on_success: bool = True,
        run_id: str | None = None,
    ) -> ExecutionResult:
        """``execute`` on the running event loop: the same checks, charges, audit trail and result,
        with every pending async binding result awaited on this loop (within the run's wall time)
        while other tasks proceed. Sync bindings and the kernel's own work run inline on the loop.

        Cancelling the task that awaits this ends the run at the binding call it waits in: the run
        fails Cancelled (``R-CANCELLED``), its commands are dropped, its ``RunSummary`` (code
        ``R-CANCELLED``) goes to the observers, and ``asyncio.CancelledError`` propagates."""

        if not any(binding.is_async for binding in plan.bindings.values()):
            # nothing in this plan can be awaited (only a binding declared async ever is): the run
            # cannot suspend, so it runs inline as it is, without a greenlet
            return self._execute(
                plan,
                entrypoint,
                args,
                backend,
                encoding,
                cancel,
                apply_commands_on_success,
                run_id,
                _no_await,
            )

        def work(awaiter: Awaiter) -> ExecutionResult:
            return self._execute(
                plan, entrypoint, args, backend, encoding, cancel, apply_commands_on_success, run_id, awaiter
            )

        result, cancelled = await drive(work)
        if cancelled:
            # exactly CancelledError, not a subclass: asyncio.timeout and TaskGroup test the type
            # by identity; the cancelled run's outcome is in its audit trail (observers)
            raise asyncio.CancelledError()
        return result

    def _execute(
        self,
        plan: ExecutionPlan,
        entrypoint: str,
        args: Sequence[object],
        backend: str,
        encoding: ArgEncoding,
        cancel: CancelToken | None,
        apply_commands_on_success: bool,
        run_id: str | None,
        awaiter: Awaiter | None,
    ) -> ExecutionResult:
        """The body of ``execute`` and ``execute_async``: they differ only in ``awaiter``."""
        key = (id(plan), entrypoint, backend, encoding)
        dispatch = self._dispatch.get(key)
        if dispatch is not None and dispatch.plan is plan and dispatch.catalog is self.catalog:
            with contextlib.suppress(KeyError):  # dropped by a concurrent call: this run keeps it
                self._dispatch.move_to_end(key)  # most recently used
        else:
            prepared = self._prepare_dispatch(plan, entrypoint, backend, encoding)
            if isinstance(prepared, ExecutionResult):
                return prepared
            dispatch = prepared
        run_id, value, error, usage, events, commands, calls, return_type, executed_by = (
            dispatch.entry.run_record(
                args,
                dispatch.backend,
                cancel,
                self._observers,
                run_id,
                awaiter=self._sync_awaiter if awaiter is None else awaiter,
            )
        )
        applied: tuple[Command, ...] = ()
        if error is None and commands and apply_commands_on_success and any(c.applicable for c in commands):
            report, events = apply_batch(
                commands, run_id, events, dispatch.entry.facts.audit_clock, self._observers
            )
            applied = report.applied
            error = report.error()
            if error is not None:
                value = None
        return new_execution_result(
            error is None,
            value,
            error,
            usage,
            events,
            plan.module_hash,
            plan.plan_hash,
            plan.policy_hash,
            run_id,
            backend,
            "run",
            return_type,
            commands,
            len(applied),
            calls,
            executed_by,
            applied,
        )

    def _prepare_dispatch(
        self, plan: ExecutionPlan, entrypoint: str, backend: str, encoding: ArgEncoding
    ) -> _Dispatch | ExecutionResult:
        """The checks that depend only on the plan, the catalogue and the backend name, in their
        order: the backend is resolved, the plan's bindings are checked against the catalogue -
        the same contracts, and the very implementations the plan was prepared with, so a plan
        from another host is refused rather than calling that host's code (E-PLAN-BINDINGS) -
        an unavailable backend is refused. A refusal is returned as a failed
        result and never kept, so it is checked again on the next call."""
        chosen = self._backend(backend)
        catalog = self.catalog
        try:
            plan.check_bindings(catalog)
            plan.check_implementations(catalog)
        except DotBoxDError as refused:
            return _failed(plan, error_info_from_diagnostic(refused.diagnostic), backend)
        if chosen is None:
            missing = SandboxError("R-BACKEND-UNAVAILABLE", f"backend '{backend}' is not available")
            return _failed(plan, missing.info(), backend)
        dispatch = _Dispatch(plan, catalog, chosen, EntryCall(plan, entrypoint, encoding))
        key = (id(plan), entrypoint, backend, encoding)
        self._dispatch.pop(key, None)  # a stale record of a dead plan whose id was reused
        while len(self._dispatch) >= self._dispatch_limit:
            try:
                self._dispatch.popitem(last=False)  # least recently used
            except KeyError:
                break  # emptied by a concurrent call
        self._dispatch[key] = dispatch
        return dispatch

    def run(
        self,
        module: ModuleSource,
        entrypoint: str = "main",
        args: Sequence[object] = (),
        policy: Policy | None = None,
        **options: Any,
    ) -> ExecutionResult:
        """``prepare`` then ``execute``; a rejected module becomes a failed result whose ``stage`` is
        ``import`` or ``validate`` (the kernel never ran)."""
        try:
            plan = self.prepare(module, policy)
        except DotBoxDError as refused:
            stage = "import" if refused.code.startswith(("E-JSON-", "E-IR-", "E-TEXT-")) else "validate"
            return _rejected(refused, stage, options.get("backend", "reference"))
        return self.execute(plan, entrypoint, args, **options)

    def backend_names(self) -> tuple[str, ...]:
        """The backends this host can run (the reference one always)."""
        names = set(self._backends)
        names.update(name for name in _BUNDLED_BACKENDS if self._backend(name) is not None)
        return tuple(sorted(names))

    def _backend(self, name: str) -> Backend | None:
        found = self._backends.get(name)
        if found is not None or name not in _BUNDLED_BACKENDS:
            return found
        backend = self._backends[name] = _bundled_backend(name)
        return backend


def _bundled_backend(name: str) -> Backend:
    """A new optimized (or ``auto``) backend for one host. Imported here rather than with this module
    so that hosts that only ever run the reference interpreter never load the code generator and its
    verifier (a large share of the package's import time)."""
    from dotboxd.runtime.optimized import AutoBackend, OptimizedBackend

    return AutoBackend() if name == "auto" else OptimizedBackend()


def _no_await(value: object, timeout_seconds: float) -> object:
    """The awaiter of an ``execute_async`` run whose plan has no async binding: never called (only
    an async binding's result is ever awaited); fails closed if it were."""
    discard(value)
    raise SandboxError("R-HOST-INTERNAL", "internal runtime fault")


def _build_catalog(
    bindings: BindingRegistry | BindingCatalog | Iterable[BindingDescriptor] | None,
) -> BindingCatalog:
    if isinstance(bindings, BindingCatalog):
        return bindings
    if isinstance(bindings, BindingRegistry):
        return bindings.build()
    return BindingRegistry(list(bindings or ())).build()


def _load(module: ModuleSource) -> Module:
    if isinstance(module, Module):
        return module
    from dotboxd.grammar.source import load_module

    loaded, _ = load_module(module)
    return loaded


def _failed(plan: ExecutionPlan, error: ErrorInfo, backend: str) -> ExecutionResult:
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


def _rejected(refused: DotBoxDError, stage: str, backend: str) -> ExecutionResult:
    return ExecutionResult(
        ok=False,
        value=None,
        error=error_info_from_diagnostic(refused.diagnostic),
        usage=ResourceUsage(),
        audit_events=(),
        module_hash="",
        plan_hash="",
        policy_hash="",
        backend=backend,
        stage=stage,
    )
