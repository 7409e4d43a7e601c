"""Compilation is bounded before anything is metered: generated size, the host's compile budget and
the artifact cache's memory.

The attack: every call inlined into a bulk loop copies the callee, so a few kilobytes of calls to a
large helper expanded into hundreds of thousands of generated nodes and seconds of CPU (larger ones
reached gigabytes) before the run's first charge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, CompileFailure, GenOptions, OptimizedBackend, generate
from dotboxd.runtime.optimized import codegen as codegen_module
from dotboxd.runtime.optimized.facts import INLINE_BUDGET_FLOOR, INLINE_BUDGET_PER_NODE, analyze
from dotboxd.validator.plan import ExecutionPlan

from .differential import differences, observe
from .kernels import FEATURES, double, prepare

GENERATED_PER_IR_NODE = 40
"""Python nodes per IR node the generator may emit for a plan (typical plans: about 8 to 13)."""

_HELPER = " + ".join(f"(x * {i} + {i}) % 7" for i in range(1, 12))


def _inlining_bomb(calls: int, nested: bool = False) -> str:
    """A loop of ``calls`` calls to a ~100-node helper, in statements of ten (the text form limits
    nesting) side by side or nested (``h(h(...h(i)...))``), about 3 KB of text for 300 calls."""
    if nested:
        line = "acc = (acc + " + "h(" * 10 + "i" + ")" * 10 + ") % 1000;"
    else:
        line = "acc = (acc + " + " + ".join(["h(i)"] * 10) + ") % 1000;"
    body = " ".join([line] * (calls // 10))
    return f"""module "bomb" version "1.0.0";
fn h(x I32) -> I32 {{ return {_HELPER}; }}
entrypoint fn main(n I32) -> I32 {{
    acc = 0;
    for i in 0 .. n {{ {body} }}
    return acc;
}}
"""


def _size(plan: ExecutionPlan, options: GenOptions | None = None) -> tuple[int, int]:
    generated = generate(plan, options)
    return sum(1 for _ in ast.walk(generated.module)), generated.ir_nodes


@pytest.mark.parametrize("nested", [False, True], ids=["side-by-side", "nested"])
def test_an_inlining_bomb_compiles_to_size_proportional_to_its_ir(nested: bool) -> None:
    plan = prepare(_inlining_bomb(300, nested), bindings=())
    facts = analyze(plan)
    assert facts.inlined_nodes <= max(INLINE_BUDGET_FLOOR, INLINE_BUDGET_PER_NODE * facts.plan_nodes)
    python_nodes, ir_nodes = _size(plan)
    assert python_nodes <= GENERATED_PER_IR_NODE * ir_nodes, (python_nodes, ir_nodes)


def test_an_inlining_bomb_still_agrees_with_the_reference() -> None:
    plan = prepare(_inlining_bomb(300), bindings=())
    backend = OptimizedBackend(cache=ArtifactCache())
    host = SandboxHost(backends={"opt": backend})
    expected = observe(host.execute(plan, "main", [7]))
    assert not differences(expected, observe(host.execute(plan, "main", [7], backend="opt")))


def test_small_loops_keep_their_inlining_within_the_budget() -> None:
    plan = prepare(FEATURES)
    facts = analyze(plan)
    assert facts.inlined_nodes > 0  # the helpers of FEATURES are still inlined
    assert any(loop.fast for loop in facts.loops.values())


def test_the_generator_fails_closed_when_inlining_outruns_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = prepare(FEATURES)

    def under_planned(plan: ExecutionPlan, *, inline: bool = True) -> object:
        facts = analyze(plan, inline=inline)
        facts.inlined_nodes = 0  # the generator must not trust this to stop it: it counts itself
        return facts

    monkeypatch.setattr(codegen_module, "analyze", under_planned)
    with pytest.raises(CompileFailure, match="inline budget"):
        generate(plan)


def test_the_compile_budget_fails_the_run_closed_without_fallback() -> None:
    plan = prepare(FEATURES)
    backend = OptimizedBackend(cache=ArtifactCache(), options=GenOptions(max_compile_nodes=50))
    host = SandboxHost(bindings=[double], backends={"opt": backend})
    result = host.execute(plan, "main", [25, ["ab", "c"]], backend="opt")
    assert result.error is not None
    assert (result.error.category, result.error.code) == ("HostFailure", "R-OPT-COMPILE")
    assert "compile budget" in result.error.safe_message
    assert result.usage.fuel_used == 0
    assert backend.cache.stats.compiles == 1 and len(backend.cache) == 0


def test_the_compile_budget_falls_back_to_the_reference_when_allowed() -> None:
    plan = prepare(FEATURES)
    backend = OptimizedBackend(
        cache=ArtifactCache(), allow_fallback=True, options=GenOptions(max_compile_nodes=50)
    )
    host = SandboxHost(bindings=[double], backends={"opt": backend})
    result = host.execute(plan, "main", [25, ["ab", "c"]], backend="opt")
    reference = host.execute(plan, "main", [25, ["ab", "c"]])
    assert result.ok and result.value == reference.value and result.usage == reference.usage
    reasons = [e.fields["reason"] for e in result.audit_events if e.kind == "ExecutionFallback"]
    assert reasons == ["CompileFailure"]


def test_the_compile_budget_is_validated_and_does_not_change_the_key() -> None:
    with pytest.raises(ValueError):
        GenOptions(max_compile_nodes=0)
    assert GenOptions(max_compile_nodes=10).key() == GenOptions().key()


def test_the_artifact_cache_is_bounded_in_bytes() -> None:
    plans = [prepare(FEATURES.replace('"features"', f'"features{i}"')) for i in range(4)]
    probe = ArtifactCache()
    one = probe.get_or_compile(plans[0]).size_bytes
    assert one > 0
    cache = ArtifactCache(capacity=100, max_bytes=2 * one + one // 2)
    for plan in plans:
        cache.get_or_compile(plan)
        assert cache.memory_bytes <= cache.max_bytes
    assert len(cache) == 2 and cache.stats.evicted == 2
    assert cache.peek(plans[-1]) is not None and cache.peek(plans[0]) is None


def test_an_artifact_larger_than_the_cache_is_run_but_not_kept() -> None:
    plan = prepare(FEATURES)
    cache = ArtifactCache(max_bytes=1)
    artifact = cache.get_or_compile(plan)
    assert artifact.size_bytes > 1
    assert len(cache) == 0 and cache.memory_bytes == 0
    backend = OptimizedBackend(cache=cache)
    host = SandboxHost(bindings=[double], backends={"opt": backend})
    assert host.execute(plan, "main", [25, ["ab", "c"]], backend="opt").ok


def test_the_artifact_cache_directory_is_bounded_in_bytes(tmp_path: Path) -> None:
    plans = [prepare(FEATURES.replace('"features"', f'"features{i}"')) for i in range(4)]
    probe = ArtifactCache(directory=tmp_path / "probe")
    probe.get_or_compile(plans[0])
    one = sum(f.stat().st_size for f in (tmp_path / "probe").glob("*.json"))
    assert one > 0
    directory = tmp_path / "bounded"
    cache = ArtifactCache(directory=directory, max_disk_bytes=2 * one + one // 2)
    for plan in plans:
        cache.get_or_compile(plan)
        assert sum(f.stat().st_size for f in directory.rglob("*") if f.is_file()) <= cache.max_disk_bytes
    assert len(list(directory.glob("*.json"))) == 2 and cache.stats.disk_pruned == 2
    cache.clear_memory()
    cache.get_or_compile(plans[-1])  # the newest is still on disk
    assert cache.stats.disk_hits == 1
