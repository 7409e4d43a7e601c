"""Execution modes (reference | optimized | auto), hotness, and fallback only when allowed."""

from __future__ import annotations

import pytest

from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized import artifact as artifact_module
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.validator.plan import ExecutionPlan

from .differential import differences, observe
from .kernels import FEATURES, double, prepare

ARGS = [25, ["ab", "c"]]


def _run(backend: OptimizedBackend, plan: ExecutionPlan) -> ExecutionResult:
    host = SandboxHost(bindings=[double], backends={backend.name: backend})
    return host.execute(plan, "main", ARGS, backend=backend.name)


def _reference(plan: ExecutionPlan) -> ExecutionResult:
    return SandboxHost(bindings=[double]).execute(plan, "main", ARGS)


def test_the_host_loads_the_optimized_backend_lazily() -> None:
    plan = prepare(FEATURES)
    host = SandboxHost(bindings=[double])
    assert "optimized" in host.backend_names()
    result = host.execute(plan, "main", ARGS, backend="optimized")
    assert not differences(observe(_reference(plan)), observe(result))


def test_optimized_mode_compiles_once_and_reuses() -> None:
    cache = ArtifactCache()
    backend = OptimizedBackend("optimized", cache=cache)
    plan = prepare(FEATURES)
    for _ in range(3):
        assert _run(backend, plan).ok
    assert cache.stats.compiles == 1 and len(cache) == 1


def test_reference_mode_never_compiles() -> None:
    cache = ArtifactCache()
    backend = OptimizedBackend("reference", cache=cache)
    plan = prepare(FEATURES)
    result = _run(backend, plan)
    assert result.ok and cache.stats.compiles == 0 and len(cache) == 0
    assert not differences(observe(_reference(plan)), observe(result))


def test_auto_mode_interprets_until_the_plan_is_hot() -> None:
    cache = ArtifactCache()
    backend = OptimizedBackend("auto", hotness_threshold=3, cache=cache)
    plan = prepare(FEATURES)
    expected = observe(_reference(plan))
    for run in range(1, 6):
        result = _run(backend, plan)
        assert not differences(expected, observe(result))
        compiled = cache.peek(plan) is not None
        assert compiled == (run > 3), run
    assert cache.stats.compiles == 1


def test_auto_mode_runs_a_cached_plan_compiled_at_once() -> None:
    cache = ArtifactCache()
    plan = prepare(FEATURES)
    cache.get_or_compile(plan)
    backend = OptimizedBackend("auto", hotness_threshold=100, cache=cache)
    assert _run(backend, plan).ok
    assert cache.stats.hits == 1


def _fail_verification(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise VerifierFailure("refused for the test")

    monkeypatch.setattr(artifact_module, "verify_module", refuse)


def _fail_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RecursionError

    monkeypatch.setattr(artifact_module, "generate", explode)


@pytest.mark.parametrize(
    ("breaker", "category", "code"),
    [
        (_fail_verification, "VerifierFailure", "R-OPT-VERIFIER"),
        (_fail_generation, "HostFailure", "R-OPT-COMPILE"),
    ],
)
def test_without_fallback_a_failed_compilation_fails_the_run(
    monkeypatch: pytest.MonkeyPatch, breaker: object, category: str, code: str
) -> None:
    breaker(monkeypatch)  # type: ignore[operator]
    plan = prepare(FEATURES)
    result = _run(OptimizedBackend(cache=ArtifactCache(), allow_fallback=False), plan)
    assert not result.ok and result.error is not None
    assert (result.error.category, result.error.code) == (category, code)
    assert result.usage.fuel_used == 0  # nothing ran
    kinds = [e.kind for e in result.audit_events]
    assert "ExecutionFallback" not in kinds


@pytest.mark.parametrize("breaker", [_fail_verification, _fail_generation])
def test_with_fallback_the_reference_runs_and_the_result_says_so(
    monkeypatch: pytest.MonkeyPatch, breaker: object
) -> None:
    breaker(monkeypatch)  # type: ignore[operator]
    plan = prepare(FEATURES)
    result = _run(OptimizedBackend(cache=ArtifactCache(), allow_fallback=True), plan)
    reference = _reference(plan)
    assert result.ok and result.value == reference.value and result.usage == reference.usage
    fallbacks = [e for e in result.audit_events if e.kind == "ExecutionFallback"]
    assert len(fallbacks) == 1
    assert fallbacks[0].fields["to"] == "reference"
    assert fallbacks[0].fields["reason"] in ("VerifierFailure", "CompileFailure")


def test_invalid_options_are_refused() -> None:
    with pytest.raises(ValueError):
        OptimizedBackend("fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OptimizedBackend("auto", hotness_threshold=-1)


def test_the_host_loads_auto_mode_by_name() -> None:
    plan = prepare(FEATURES)
    host = SandboxHost(bindings=[double])
    assert "auto" in host.backend_names()
    for _ in range(4):
        result = host.execute(plan, "main", ARGS, backend="auto")
        assert not differences(observe(_reference(plan)), observe(result))
