"""Failures of the optimized backend's own machinery (never of the kernel it runs).

``VerifierFailure``: generated code failed the verifier, so the artifact is quarantined and never
runs. ``CacheInvalid``: a cached artifact failed an integrity check (hash, manifest, key or
re-verification), so it is quarantined and the plan is compiled again. ``CompileFailure``: the
generator could not produce code for a plan (for example nesting deeper than Python's compiler
accepts); the backend falls back to the reference interpreter when that is allowed.
"""

from __future__ import annotations


class OptimizedBackendError(Exception):
    """Base class; ``reason`` is a short, host-safe description."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class VerifierFailure(OptimizedBackendError):
    pass


class CacheInvalid(OptimizedBackendError):
    pass


class CompileFailure(OptimizedBackendError):
    pass
