"""The optimized backend: plans compiled to verified, metered Python (``spec/optimized.md``).

``OptimizedBackend(mode="optimized"|"auto"|"reference", allow_fallback=..., hotness_threshold=...,
cache=..., options=...)`` is a ``dotboxd.runtime.execution.Backend``; ``SandboxHost`` loads it
lazily for ``backend="optimized"``. ``compile_plan(plan)`` builds one verified ``Artifact``;
``ArtifactCache`` keeps them (in memory and optionally on disk).
"""

from dotboxd.runtime.optimized.artifact import COMPILER_VERSION, Artifact, ArtifactKey, compile_plan
from dotboxd.runtime.optimized.backend import BACKEND, MODES, AutoBackend, OptimizedBackend
from dotboxd.runtime.optimized.cache import DEFAULT_CACHE, ArtifactCache
from dotboxd.runtime.optimized.codegen import GenOptions, generate
from dotboxd.runtime.optimized.errors import CacheInvalid, CompileFailure, VerifierFailure
from dotboxd.runtime.optimized.verifier import VERIFIER_VERSION

__all__ = [
    "BACKEND",
    "COMPILER_VERSION",
    "DEFAULT_CACHE",
    "MODES",
    "VERIFIER_VERSION",
    "Artifact",
    "ArtifactCache",
    "ArtifactKey",
    "AutoBackend",
    "CacheInvalid",
    "CompileFailure",
    "GenOptions",
    "OptimizedBackend",
    "VerifierFailure",
    "compile_plan",
    "generate",
]
