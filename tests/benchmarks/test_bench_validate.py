"""Validation of a realistic ~1k-node module (target: <= 10 ms median), and a ~10k-node one.

``test_bench_validate_1k`` is the number the validator issue tracks: the whole ``validate()`` call,
all eleven passes plus the module/policy/manifest/plan hashes. ``test_bench_validate_passes_only_1k``
runs the ten analysis passes without building the plan, and ``test_bench_module_hash_1k`` times the
canonical module hash (``dotboxd.grammar.canonical``) alone, so the split is visible.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.core import ast
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.grammar.canonical import module_hash
from dotboxd.grammar.text import parse_text
from dotboxd.validator.api import PASSES, validate
from dotboxd.validator.context import Context
from dotboxd.validator.policy import Policy

BINDING = {
    "id": "game.world.kill",
    "parameters": ["I32"],
    "returnType": "Bool",
    "effects": ["Cpu", "HostStateWrite"],
    "capability": "game.world.monster.write.kill",
    "cost": {"baseFuel": 10},
    "audit": "PerCall",
    "safety": "SideEffectingExternal",
}
CATALOG = BindingRegistry(load_binding_manifest([BINDING])).build()
POLICY = Policy.builder().grant("game.world.monster.write.kill").build()


def kernel_text(functions: int) -> str:
    parts = ['module "bench" version "1.0.0";']
    for k in range(functions):
        call_prev = f"f{k - 1}(a, b)" if k else "0"
        parts.append(
            f"""fn f{k}(a I32, b I32) -> I32 {{
    acc = 0;
    for i in 0 .. a {{
        if (i % 3 == 0) && (b > 2) || (a < 10) {{
            acc = acc + i * b - (a / 2);
        }} else {{
            acc = acc - 1;
        }}
    }}
    xs = list.of(a, b, acc);
    while acc > 100 {{
        acc = acc - list.get(xs, 0) - math.abs(b);
        if acc < 0 {{ break; }}
    }}
    if game.world.kill(acc) {{ acc = acc + 1; }}
    return acc + {call_prev};
}}"""
        )
    parts.append(f"entrypoint fn main(a I32, b I32) -> I32 {{ return f{functions - 1}(a, b); }}")
    return "\n".join(parts)


def count_nodes(node: object) -> int:
    total = 1
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name, None)
        children = value if isinstance(value, tuple) else (value,)
        total += sum(count_nodes(c) for c in children if isinstance(c, ast.Node))
    return total


MODULE_1K = parse_text(kernel_text(13))
MODULE_10K = parse_text(kernel_text(130))


def test_benchmark_modules_have_the_advertised_size() -> None:
    assert 900 <= count_nodes(MODULE_1K) <= 1100
    assert 9_000 <= count_nodes(MODULE_10K) <= 11_000
    assert validate(MODULE_1K, POLICY, CATALOG).required_capabilities == ("game.world.monster.write.kill",)


@pytest.mark.benchmark(group="validate")
def test_bench_validate_1k(benchmark: Any) -> None:
    plan = benchmark(validate, MODULE_1K, POLICY, CATALOG)
    assert plan.entrypoints == ("main",)


def analyse(module: ast.Module) -> Context:
    """The ten analysis passes alone (no plan object, so no canonical module hash)."""
    ctx = Context(module, POLICY, CATALOG, 0)
    for _name, run in PASSES:
        run(ctx)
    assert not ctx.diagnostics
    return ctx


@pytest.mark.benchmark(group="validate")
def test_bench_validate_passes_only_1k(benchmark: Any) -> None:
    ctx = benchmark(analyse, MODULE_1K)
    assert ctx.required_capabilities


@pytest.mark.benchmark(group="validate")
def test_bench_module_hash_1k(benchmark: Any) -> None:
    assert len(benchmark(module_hash, MODULE_1K)) == 64


@pytest.mark.benchmark(group="validate")
def test_bench_validate_10k(benchmark: Any) -> None:
    plan = benchmark(validate, MODULE_10K, POLICY, CATALOG)
    assert len(plan.functions) == 131
