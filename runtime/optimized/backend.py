"""The ``optimized`` backend: execution modes, hotness, fallback and their audit trail.

Modes:

* ``reference``: always interpret (the reference interpreter; useful to pin a host to it);
* ``optimized``: compile on first use (through the artifact cache) and always run compiled code;
* ``auto``: interpret a plan's first ``hotness_threshold`` runs, then compile it and run compiled
  code from then on (a plan already in the cache runs compiled at once).

A plan the backend cannot compile (``CompileFailure``) or whose generated code fails verification
(``VerifierFailure``) runs on the reference interpreter only when ``allow_fallback`` is set; the run
then carries an ``ExecutionFallback`` audit event naming the reason. Without it the run fails with
``R-OPT-COMPILE`` (HostFailure) or ``R-OPT-VERIFIER`` (VerifierFailure). Fallback is decided before
any kernel code runs; a run never switches backends half way.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Literal

from dotboxd.core.values import Value
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.execution import EntryCall
from dotboxd.runtime.reference import ReferenceBackend
from dotboxd.validator.plan import ExecutionPlan

from .artifact import Artifact, ArtifactKey
from .cache import DEFAULT_CACHE, ArtifactCache
from .codegen import GenOptions
from .errors import CompileFailure, OptimizedBackendError, VerifierFailure
from .fastlane import FastLane

Mode = Literal["reference", "optimized", "auto"]
MODES: tuple[str, ...] = ("reference", "optimized", "auto")

_REFERENCE = ReferenceBackend()
_RECENT = 64
_RECENT_BYTES = 32 * 1024 * 1024


class OptimizedBackend:
    """A ``dotboxd.runtime.execution.Backend`` that runs verified generated Python."""

    def __init__(
        self,
        mode: Mode = "optimized",
        *,
        allow_fallback: bool = False,
        hotness_threshold: int = 2,
        cache: ArtifactCache | None = None,
        options: GenOptions | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
        if hotness_threshold < 0:
            raise ValueError("hotness_threshold must be >= 0")
        self.mode: Mode = mode
        self.name: str = "optimized" if mode == "optimized" else mode
        self.allow_fallback = allow_fallback
        self.hotness_threshold = hotness_threshold
        self.cache = cache if cache is not None else DEFAULT_CACHE
        self.options = options or GenOptions()
        self._heat: dict[str, int] = {}
        self._recent: dict[int, tuple[ExecutionPlan, Artifact, int]] = {}
        self._lock = threading.Lock()

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        plan = run.plan
        recent = self._recent.get(id(plan))
        if recent is not None and recent[0] is plan:
            # the per-call fast path: execute_plan has gated the plan (revocation, expiry) already
            return recent[1].run(run, function_id, args)
        if self.mode == "reference" or (self.mode == "auto" and not self._hot(run)):
            return _REFERENCE.run(run, function_id, args)
        try:
            artifact = self.cache.get_or_compile(plan, self.options, _reporter(run))
        except OptimizedBackendError as failure:
            return self._fallback(run, function_id, args, failure)
        self._remember(plan, artifact)
        return artifact.run(run, function_id, args)

    def release(self, plan: ExecutionPlan) -> None:
        """Forget ``plan`` (the host dropped it): its recent-run entry and the reference fallback's
        node cache. The artifact cache is keyed by content, bounded, and shared by equal plans, so
        it keeps its entry."""
        with self._lock:
            recent = self._recent.get(id(plan))
            if recent is not None and recent[0] is plan:
                del self._recent[id(plan)]
        _REFERENCE.release(plan)

    def fast_lane(self, entry: EntryCall) -> FastLane | None:
        """A ``FastLane`` for ``entry`` (runs that build their run context only when they need it),
        or None when ``entry`` does not qualify or this backend never runs compiled code. The lane
        runs a plan only while it is compiled here (``_recent``); otherwise the caller takes the
        ordinary path, which compiles it."""
        if self.mode == "reference" or type(self).run is not OptimizedBackend.run:
            return None
        if not FastLane.eligible(entry):
            return None
        return FastLane(entry, self._recent, self.name)

    def _remember(self, plan: ExecutionPlan, artifact: Artifact) -> None:
        """Keep the last few plans' artifacts (their bound ``run``) by plan identity (the plan object
        is held, so its id cannot be reused while the entry exists), sparing the key hash on every
        call. Bounded in entries and in bytes (``_RECENT_BYTES``), as the cache is: these entries
        keep their artifacts alive after the cache has evicted them."""
        with self._lock:
            self._recent.pop(id(plan), None)
            self._recent[id(plan)] = (plan, artifact, artifact.size_bytes)
            total = sum(entry[2] for entry in self._recent.values())
            while len(self._recent) > _RECENT or (total > _RECENT_BYTES and self._recent):
                _, _, size = self._recent.pop(next(iter(self._recent)))
                total -= size

    def _hot(self, run: RunContext) -> bool:
        """Auto mode: whether this plan has been run often enough to be worth compiling."""
        plan = run.plan
        if self.cache.peek(plan, self.options) is not None:
            return True
        digest = ArtifactKey.for_plan(plan, self.options).digest()
        with self._lock:
            count = self._heat.get(digest, 0) + 1
            self._heat[digest] = count
        return count > self.hotness_threshold

    def _fallback(
        self, run: RunContext, function_id: str, args: tuple[Value, ...], failure: OptimizedBackendError
    ) -> Value:
        verifier = isinstance(failure, VerifierFailure)
        if not self.allow_fallback:
            if verifier:
                raise SandboxError("R-OPT-VERIFIER", "generated code failed verification; it was not run")
            assert isinstance(failure, CompileFailure)
            raise SandboxError(
                "R-OPT-COMPILE", f"the optimized backend cannot compile this kernel: {failure.reason}"
            )
        run.audit.write(
            "ExecutionFallback",
            success=True,
            message="ran on the reference interpreter instead of the optimized backend",
            fields={
                "from": self.name,
                "to": "reference",
                "reason": "VerifierFailure" if verifier else "CompileFailure",
            },
        )
        return _REFERENCE.run(run, function_id, args)


def _reporter(run: RunContext) -> Any:
    def report(kind: str, message: str, fields: Mapping[str, Any]) -> None:
        run.audit.write(
            kind,
            success=kind != "VerifierFailure",
            error_code="VerifierFailure" if kind == "VerifierFailure" else None,
            message=message,
            fields=dict(fields),
        )

    return report


class AutoBackend(OptimizedBackend):
    """``OptimizedBackend(mode="auto")``: what ``SandboxHost`` loads for ``backend="auto"``."""

    def __init__(self, **options: Any) -> None:
        super().__init__("auto", **options)


BACKEND = OptimizedBackend()
"""A ready instance (mode ``optimized``, no fallback, the process-wide cache)."""
