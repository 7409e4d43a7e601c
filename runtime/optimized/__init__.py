"""The optimized backend: plans compiled to verified, metered Python (``spec/optimized.md``).

``OptimizedBackend(mode="optimized"|"auto"|"reference", allow_fallback=..., hotness_threshold=...,
cache=..., options=...)`` is a ``dotboxd.runtime.execution.Backend``; ``SandboxHost`` builds one on
first use of ``backend="optimized"`` (or ``"auto"``). ``compile_plan(plan)`` builds one verified
``Artifact``; ``ArtifactCache`` keeps them (in memory and optionally on disk).

The pipeline, one module a step: ``facts`` and ``signs`` (what the plan allows the generator to
assume), ``proofs`` (the prover's safe nodes, only when ``GenOptions.proofs`` asks), ``codegen``
with ``ledger``, ``pyast``, ``fastops``, ``work`` and ``cold`` (the generated functions, their fuel
ledger and the cold exact loop paths), ``verifier`` (the generated AST and bytecode admit only the
shapes the generator emits), ``stubs`` and ``tables`` (the only names and data generated code can
reach), ``artifact`` (compile, verify, bind) and ``cache``.

Invariants. Generated code is never trusted for being ours: nothing is compiled before the AST
verifier accepts it, nor bound before the code verifier does, and a generator failure is a
``CompileFailure`` (the run fails, or falls back to the reference interpreter where the host allows),
never an unverified run. Every run agrees exactly with the reference interpreter - value, error,
location, fuel and usage - because generated code calls the same ``dotboxd.core`` arithmetic and
``dotboxd.runtime.intrinsics`` and pays each charge in the same order; a check is dropped only where
a fact (sign analysis, or a PROVED proof fact) shows it can never fail. A change to the generated
code bumps ``COMPILER_VERSION``, so no cached artifact of older code is reused.
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
