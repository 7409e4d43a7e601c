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
On the optimized backend, an entrypoint that reaches no binding, of a plan without capabilities,
also gets the backend's fast lane (``runtime/optimized/fastlane.py``): a run that never needs its run context
never builds one. ``execute_many`` runs a stream of rows, each its own run, through the same path.
The record used last is also kept apart (``_hot``), so a host calling one entrypoint in a tight
loop - a predicate per event - finds it with a few identity tests instead of a keyed lookup.

``execute_async`` is ``execute`` for asyncio hosts: the run executes on the caller's event loop and
is suspended at each pending async binding result, which is awaited on that loop
(``dotboxd.runtime.suspend``); cancelling the awaiting task ends the run as Cancelled with nothing
applied and re-raises ``CancelledError``. The synchronous ``execute`` awaits async bindings on the
host's ``async_loop`` (an event loop running in another thread) or, without one, on the runtime's
shared loop thread (``dotboxd.runtime.awaiting``).
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from dotboxd.core.ast import Module
from dotboxd.core.bindings import BindingCatalog, BindingDescriptor, BindingRegistry
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host.batch import BatchResults
from dotboxd.host.result import (
    DeferredBuilder,
    ExecutionResult,
    ResultBuilder,
    applied_result,
    commands_to_apply,
    deferred_builder,
    refused_result,
    result_builder,
)
from dotboxd.host.run_ids import check_run_id
from dotboxd.runtime.audit import Observer
from dotboxd.runtime.awaiting import Awaiter, LoopAwaiter, discard
from dotboxd.runtime.errors import SandboxError, error_info_from_diagnostic
from dotboxd.runtime.execution import ArgEncoding, Backend, EntryCall, RunRecord
from dotboxd.runtime.facades import attach_standard_facades
from dotboxd.runtime.meter import CancelToken, ResourceUsage
from dotboxd.runtime.reference import ReferenceBackend
from dotboxd.runtime.suspend import drive
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

if TYPE_CHECKING:
    from dotboxd.isolation.pool import WorkerPool

ModuleSource = Module | str | bytes | os.PathLike[str]

_BUNDLED_BACKENDS = ("optimized", "auto")
"""The backends besides the reference one, built on a host's first use (``_bundled_backend``)."""

BACKEND_NAMES: tuple[str, ...] = ("reference", *_BUNDLED_BACKENDS)
"""Every backend name ``execute`` knows (an optional one may still be unavailable at run time)."""

DEFAULT_DISPATCH_CACHE_SIZE = 1024
"""How many (plan, entrypoint, backend, encoding) dispatch records a host keeps by default; the least
recently used is dropped first. A multi-tenant host that round-robins more distinct plans than this
should raise it (``SandboxHost(dispatch_cache_size=...)``): a miss re-runs the catalogue checks and
rebuilds the ``EntryCall``, roughly ten times the cost of a hit."""


class FastRun(Protocol):
    """A backend's fast lane for one entrypoint (``OptimizedBackend.fast_lane``). Calling it runs
    one row: its record, or None when the lane cannot take the run right now (the ordinary path
    then runs it); ``run`` does the same but hands the record's fields to ``finish`` (the host's
    result builder), or a compact run's value, error and compact form to ``defer`` (the host's
    deferred builder). ``run_many`` runs rows until they end (None, taking no row, if it cannot);
    ``record`` gives the ``RunRecord`` of one of its compact rows."""

    def __call__(self, args: Sequence[object], run_id: str | None = None) -> RunRecord | None: ...

    def run(
        self, args: Sequence[object], run_id: str | None, finish: ResultBuilder, defer: DeferredBuilder
    ) -> ExecutionResult | None: ...

    def run_many(self, rows: Iterator[Sequence[object]], stop_on_error: bool) -> list[Any] | None: ...

    def record(self, compact: Any) -> RunRecord: ...


class _Dispatch:
    """What a host keeps between calls of one entrypoint: the plan and catalogue it was checked
    against (compared by identity on every call), the backend object, the runtime's EntryCall, the
    backend's fast lane for it, if it has one (only for hosts without live observers: a lane
    never writes the ``RunSummary`` to an observer), and the builders of its results (the deferred
    one, for the lane's runs that consumed fuel only, only with a lane)."""

    __slots__ = ("backend", "catalog", "defer", "entry", "fast", "plan", "result")

    def __init__(
        self,
        plan: ExecutionPlan,
        catalog: BindingCatalog,
        backend: Backend,
        entry: EntryCall,
        fast: FastRun | None,
        backend_name: str,
    ) -> None:
        self.plan = plan
        self.catalog = catalog
        self.backend = backend
        self.entry = entry
        self.fast = fast
        self.result: ResultBuilder = result_builder(plan, backend_name)
        self.defer: DeferredBuilder | None = (
            None if fast is None else deferred_builder(plan, backend_name, fast.record)
        )


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
        fast_lanes: bool = True,
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
        ``execute`` and ``execute_async`` alike (one LRU; at least 1, else ValueError).

        ``fast_lanes`` lets runs take a backend's fast lane where it offers one
        (``OptimizedBackend.fast_lane``: runs that build their run context only when they need it).
        A lane changes nothing a host can observe - results, usage, audit trails and errors are
        those of the ordinary path - only the time a run takes; ``fast_lanes=False`` runs every
        call on the ordinary path (to compare the two, or to rule the lane out when debugging).
        It is read when a dispatch record is built: set it before the first ``execute``."""
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
        self.fast_lanes = bool(fast_lanes)
        self._hot: tuple[ExecutionPlan, str, str, str, BindingCatalog, _Dispatch] | None = None
        """The dispatch record used last, with what it was found by (see the module docstring).
        Kept only while it is the LRU's most recent entry: every other record's use replaces it."""

    # --- install ---------------------------------------------------------------------------

    def prepare(
        self, module: ModuleSource, policy: Policy | None = None, *, now_unix_ms: int | None = None
    ) -> ExecutionPlan:
        """Import (a Module, wire JSON text, the readable text form, or a path) and validate against
        ``policy`` (default: pure computation only). Raises DotBoxDError when refused."""
        from dotboxd.grammar.spelling import spelled_for
        from dotboxd.validator.api import validate

        loaded, kind = _load(module)
        try:
            plan: ExecutionPlan = validate(
                loaded, policy or Policy.default(), self.catalog, now_unix_ms=now_unix_ms
            )
        except DotBoxDError as error:
            raise spelled_for(error, kind) from None
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
        isolation: str = "none",
        worker_pool: WorkerPool | None = None,
    ) -> ExecutionResult:
        """Run ``entrypoint`` with ``args`` (one per parameter; Python values, or the conformance
        JSON encoding with ``encoding="json"``). Kernel faults come back as a failed result.

        ``isolation="worker"`` runs the kernel's body in an isolated worker process
        (``dotboxd.host.worker_execute``; ``worker_pool`` or the strict default pool) while
        bindings, commands and audit stay in this process; the result lists the layers in force.

        ``run_id`` None gives the run a fresh id; a chosen one must follow ``dotboxd.host.run_ids``
        (E-HOST-RUN-ID before the run otherwise)."""
        if run_id is not None:
            check_run_id(run_id)
        hot = self._hot
        if hot is not None and cancel is None and worker_pool is None and isolation == "none":
            # unpacked once: each test below is then a comparison of two locals
            hot_plan, hot_entry, hot_backend, hot_encoding, hot_catalog, dispatch = hot
            if (
                hot_plan is plan
                and hot_entry == entrypoint
                and hot_backend == backend
                and hot_encoding == encoding
                and hot_catalog is self.catalog
                and (run_id is None or (type(run_id) is str and run_id))  # see ``_execute``
            ):
                fast = dispatch.fast
                if fast is not None:  # the lane's runs queue no commands: nothing to apply
                    result = fast.run(args, run_id, dispatch.result, dispatch.defer)  # type: ignore[arg-type]
                    if result is not None:
                        return result
        if isolation != "none" or worker_pool is not None:
            from dotboxd.host.worker_execute import execute_isolated

            return execute_isolated(
                self, plan, entrypoint, args, backend, encoding, cancel, apply_commands_on_success,
                run_id, isolation, worker_pool,
            )  # fmt: skip
        return self._execute(
            plan, entrypoint, args, backend, encoding, cancel, apply_commands_on_success, run_id, None
        )

    def execute_many(
        self,
        plan: ExecutionPlan,
        entrypoint: str = "main",
        rows: Iterable[Sequence[object]] = (),
        *,
        backend: str = "reference",
        encoding: ArgEncoding = "python",
        cancel: CancelToken | None = None,
        apply_commands_on_success: bool = True,
        stop_on_error: bool = False,
    ) -> BatchResults:
        """Run ``entrypoint`` once per row of ``rows`` (each row is the ``args`` of one ``execute``)
        and return the results in row order (``BatchResults``, built when read).

        Every row is its own run, exactly as a separate ``execute`` of it: its own run id, limits,
        meter, usage, audit trail and commands (applied when that row succeeds). A row that fails
        is that row's result and the next row runs anyway; with ``stop_on_error`` the batch ends
        after the first failed row (the results then end with it; later rows are not taken from
        ``rows``). On the optimized backend, an entrypoint that can take the fast lane (one that
        reaches no binding; another entry of the plan may call bindings) runs its rows there,
        without a per-row dispatch lookup."""
        items: list[Any] = []
        lane_of: _Dispatch | None = None  # the entry whose lane ran the rows after the first
        remaining = iter(rows)
        for args in remaining:
            result = self._execute(
                plan, entrypoint, args, backend, encoding, cancel, apply_commands_on_success, None, None
            )
            items.append(result)
            if stop_on_error and not result.ok:
                break
            dispatch = self._dispatch.get((id(plan), entrypoint, backend, encoding))
            if cancel is not None or dispatch is None or dispatch.fast is None:
                continue
            if dispatch.plan is not plan or dispatch.catalog is not self.catalog:
                continue
            lane = dispatch.fast
            done = lane.run_many(remaining, stop_on_error)
            if done is not None:  # the lane took every remaining row
                items.extend(done)
                lane_of = dispatch
                break
        if lane_of is None:
            return BatchResults(items, None, None)
        return BatchResults(items, lane_of.result, lane_of.defer)

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
        isolation: str = "none",
    ) -> ExecutionResult:
        """``execute`` on the running event loop: the same checks, charges, audit trail and result,
        with every pending async binding result awaited on this loop (within the run's wall time)
        while other tasks proceed. Sync bindings and the kernel's own work run inline on the loop.

        Cancelling the task that awaits this ends the run at the binding call it waits in: the run
        fails Cancelled (``R-CANCELLED``), its commands are dropped, its ``RunSummary`` (code
        ``R-CANCELLED``) goes to the observers, and ``asyncio.CancelledError`` propagates.

        ``isolation="worker"`` is refused here (``E-ISOLATION-PROFILE``): a worker's pipe would
        block the loop; call ``execute`` in a thread (``asyncio.to_thread``) instead."""
        if run_id is not None:
            check_run_id(run_id)  # the rule of ``execute``
        if isolation != "none":
            from dotboxd.host.worker_execute import refuse_async

            refuse_async(isolation)

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
        catalog = self.catalog
        dispatch = self._dispatch.get(key)
        if dispatch is not None and dispatch.plan is plan and dispatch.catalog is catalog:
            # not ``contextlib.suppress``: its context manager costs more than the move itself
            try:  # noqa: SIM105
                self._dispatch.move_to_end(key)  # most recently used
            except KeyError:  # dropped by a concurrent call: this run keeps it
                pass
        else:
            prepared = self._prepare_dispatch(plan, entrypoint, backend, encoding)
            if isinstance(prepared, ExecutionResult):
                return prepared
            dispatch = prepared
        self._hot = (plan, entrypoint, backend, encoding, catalog, dispatch)
        fast = dispatch.fast
        if (
            fast is not None
            and cancel is None
            and (awaiter is None or awaiter is _no_await)
            and (run_id is None or (type(run_id) is str and run_id))
        ):
            # the entry reaches no binding: nothing is awaited, no command queued. A lane takes a
            # run id that is None (a fresh one) or a non-empty text only: it keeps a fresh id as its
            # number (an int) and spells it when read, so an int given by the caller would be
            # spelled as a generated id, another object would fail there, and "" would be kept where
            # the ordinary path (``RunContext``) gives a fresh id; those take the ordinary path
            result = fast.run(args, run_id, dispatch.result, dispatch.defer)  # type: ignore[arg-type]
            if result is not None:
                return result
        record = dispatch.entry.run_record(
            args,
            dispatch.backend,
            cancel,
            self._observers,
            run_id,
            awaiter=self._sync_awaiter if awaiter is None else awaiter,
        )
        if record[5] and commands_to_apply(record, apply_commands_on_success):  # [5]: commands
            return applied_result(plan, backend, record, dispatch.entry.facts.audit_clock, self._observers)
        return dispatch.result(*record)

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
            return refused_result(plan, error_info_from_diagnostic(refused.diagnostic), backend)
        if chosen is None:
            missing = SandboxError("R-BACKEND-UNAVAILABLE", f"backend '{backend}' is not available")
            return refused_result(plan, missing.info(), backend)
        entry = EntryCall(plan, entrypoint, encoding)
        lane = getattr(chosen, "fast_lane", None)
        fast: FastRun | None = None
        if lane is not None and self.fast_lanes and not self._observers:
            fast = lane(entry)
        dispatch = _Dispatch(plan, catalog, chosen, entry, fast, backend)
        if not entry.known:
            # each run of an entrypoint the plan lacks reports R-ENTRY-UNKNOWN; its record is not
            # kept, so a caller naming many (or megabyte-long) unknown names cannot fill the LRU
            # with them or push out the records of real entrypoints (a server's tenant can)
            return dispatch
        key = (id(plan), entrypoint, backend, encoding)
        self._dispatch.pop(key, None)  # a stale record of a dead plan whose id was reused
        while len(self._dispatch) >= self._dispatch_limit:
            try:
                self._dispatch.popitem(last=False)  # least recently used
            except KeyError:
                break  # emptied by a concurrent call
        self._dispatch[key] = dispatch
        return dispatch

    @property
    def dispatch_records(self) -> int:
        """How many per-entrypoint dispatch records the host keeps now (bounded by the LRU size)."""
        return len(self._dispatch)

    def release(self, plan: ExecutionPlan) -> int:
        """Forget the dispatch records kept for ``plan`` and return how many were dropped.

        A host that installs and uninstalls kernels (an event hub, a server) calls this when it
        drops a plan: otherwise the LRU would keep up to ``dispatch_cache_size`` dead plans, each
        with its module and catalogue, alive until newer runs push them out. Each backend that keeps
        per-plan state (``release(plan)``: the reference interpreter's node caches, the optimized
        backend's recent runs) forgets the plan too."""
        hot = self._hot
        if hot is not None and hot[0] is plan:
            self._hot = None
        stale = [key for key, record in self._dispatch.items() if record.plan is plan]
        for key in stale:
            self._dispatch.pop(key, None)
        for backend in list(self._backends.values()):
            forget = getattr(backend, "release", None)  # backends that cache per plan offer it
            if callable(forget):
                forget(plan)
        return len(stale)

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


def _load(module: ModuleSource) -> tuple[Module, str]:
    """The module and the form it came from (``"ast"`` for a Module given as such)."""
    if isinstance(module, Module):
        return module, "ast"
    import os

    from dotboxd.grammar.source import kind_for, parse_source, read_source

    data: str | bytes
    if isinstance(module, os.PathLike):
        data, name = read_source(module), os.fsdecode(module)
    else:
        data, name = module, ""
    kind = kind_for(name, data)
    return parse_source(data, kind, name or "<input>"), kind


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
