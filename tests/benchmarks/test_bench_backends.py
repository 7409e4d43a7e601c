"""Reference vs optimized vs plain CPython on seven workloads, in one pytest-benchmark run.

    make bench        # or: pytest tests/benchmarks/test_bench_backends.py --benchmark-enable -s

Workloads (issue 7): ``arith_loop``, ``branchy_while`` (Collatz), ``list_build_sum``, ``map_count``,
``string_build``, ``call_heavy`` and ``predicate_dispatch`` (the per-call cost of an installed
kernel through ``SandboxHost.execute``). Every kernel runs on the reference interpreter, on the
optimized backend (exact metering, no proofs) and on the optimized backend with prover facts
(``GenOptions(proofs=True)`` under a policy whose ``inputBounds`` bound ``n``), next to the same
program written in plain CPython (idiomatic: mutable lists and dicts where the kernel builds
copies). The last test prints the ratio table (best round of each benchmark, which is the most
stable statistic on a shared machine; geometric means over the six loop workloads) and compile
latency per IR node, and records them in ``extra_info``.

With ``--benchmark-disable`` (the normal test run) every workload runs once at a small size and
all results are still checked against the plain CPython value. The heap that exists before the
benchmarks is frozen (``gc.freeze``) so that collections triggered by allocating workloads do not
walk the whole test session's heap.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.optimized import ArtifactCache, GenOptions, OptimizedBackend, compile_plan
from dotboxd.runtime.optimized.stubs import RunState
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

from .workloads import COLLATZ, LISTSUM, STRBUILD, collatz_py, roomy_policy
from .workloads import frozen_heap as frozen_heap

# --- workloads ------------------------------------------------------------------------------

ARITH = """module "arith" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n {
        if i % 3 == 0 { acc = (acc + i * 2) % 1000003; } else { acc = acc - 1; }
    }
    return acc;
}"""


def arith_py(n: int) -> int:
    acc = 0
    for i in range(n):
        if i % 3 == 0:  # noqa: SIM108 - the kernel's own shape, statement for statement
            acc = (acc + i * 2) % 1000003
        else:
            acc = acc - 1
    return acc


def listsum_py(n: int) -> int:
    xs = []
    for i in range(n):
        xs.append(i * 7 % 100)
    total = 0
    for i in range(len(xs)):
        total = total + xs[i]
    return total


MAPCOUNT = """module "mapcount" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    counts = map.empty[Map<I32, I32>]();
    for i in 0 .. n {
        k = i * 31 % 17;
        if map.containsKey(counts, k) { counts = map.set(counts, k, map.get(counts, k) + 1); }
        else { counts = map.set(counts, k, 1); }
    }
    return map.get(counts, 3);
}"""


def mapcount_py(n: int) -> int:
    counts: dict[int, int] = {}
    for i in range(n):
        k = i * 31 % 17
        if k in counts:
            counts[k] = counts[k] + 1
        else:
            counts[k] = 1
    return counts[3]


def strbuild_py(n: int) -> int:
    s = ""
    for i in range(n):
        s = s + str(i % 10)
    return len(s)


CALLS = """module "calls" version "1.0.0";
fn sq(x I32) -> I32 { return x * x + 1; }
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n { acc = (acc + sq(i % 100)) % 1000003; }
    return acc;
}"""


def _sq(x: int) -> int:
    return x * x + 1


def calls_py(n: int) -> int:
    acc = 0
    for i in range(n):
        acc = (acc + _sq(i % 100)) % 1000003
    return acc


PREDICATE = """module "pred" version "1.0.0";
entrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }"""


def predicate_py(hp: int, level: int) -> bool:
    return hp > 0 and level >= 10


# name -> (kernel, plain CPython twin, n for the benchmark run, n for a normal test run). Every
# workload runs at issue 16's full size (arith 1.5M iterations, Collatz to 20k, 1.5M list items,
# 500k map updates, a 20k-unit string, 1M calls): at small sizes a quadratic implementation looks
# linear, and a per-run constant looks like a per-iteration cost.
WORKLOADS: dict[str, tuple[str, Callable[[int], int], int, int]] = {
    "arith_loop": (ARITH, arith_py, 1_500_000, 2_000),
    "branchy_while": (COLLATZ, collatz_py, 20_000, 60),
    "list_build_sum": (LISTSUM, listsum_py, 1_500_000, 30),
    "map_count": (MAPCOUNT, mapcount_py, 500_000, 60),
    "string_build": (STRBUILD, strbuild_py, 20_000, 30),
    "call_heavy": (CALLS, calls_py, 1_000_000, 2_000),
}
LOOP_WORKLOADS = tuple(WORKLOADS)
BACKENDS = ("plain", "reference", "optimized", "proved")
ROUNDS = {"plain": 15, "reference": 2, "optimized": 15, "proved": 15}
COLLECTION_ROUNDS = 3
"""Rounds of a kernel backend on the full-size collection workloads (seconds per round each)."""
COLLECTION_WORKLOADS = frozenset({"list_build_sum", "map_count", "string_build"})

_BEST: dict[tuple[str, str], float] = {}
_PLANS: dict[tuple[str, bool], ExecutionPlan] = {}


def _policy(name: str, bounded: bool) -> Policy:
    builder = roomy_policy()
    if bounded:
        builder = builder.with_input_bounds("main", n=(0, WORKLOADS[name][2]))
    return builder.build()


_HOST = SandboxHost(
    backends={
        "optimized": OptimizedBackend(cache=ArtifactCache()),
        "proved": OptimizedBackend(cache=ArtifactCache(), options=GenOptions(proofs=True)),
    }
)


def _plan(name: str, bounded: bool) -> ExecutionPlan:
    key = (name, bounded)
    if key not in _PLANS:
        _PLANS[key] = _HOST.prepare(WORKLOADS[name][0], _policy(name, bounded))
    return _PLANS[key]


def _size(benchmark: Any, name: str) -> int:
    return WORKLOADS[name][3] if getattr(benchmark, "disabled", False) else WORKLOADS[name][2]


def _record(benchmark: Any, name: str, backend: str) -> None:
    if benchmark.stats is not None:
        _BEST[(name, backend)] = benchmark.stats.stats.min


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", LOOP_WORKLOADS)
def test_bench_workload(benchmark: Any, name: str, backend: str) -> None:
    benchmark.group = name
    n = _size(benchmark, name)
    twin = WORKLOADS[name][1]
    expected = twin(n)
    if backend == "plain":
        value = benchmark.pedantic(twin, args=(n,), rounds=ROUNDS[backend], iterations=1)
        assert value == expected
    else:
        plan = _plan(name, bounded=backend == "proved")
        _HOST.execute(plan, "main", [min(n, 10)], backend=backend)  # compile outside the timing
        rounds = ROUNDS[backend]
        if name in COLLECTION_WORKLOADS:
            rounds = min(rounds, COLLECTION_ROUNDS)
        result = benchmark.pedantic(
            _HOST.execute,
            args=(plan, "main", [n]),
            kwargs={"backend": backend},
            rounds=rounds,
            iterations=1,
        )
        assert result.ok and result.value == expected, result.error
    _record(benchmark, name, backend)


# --- predicate dispatch -----------------------------------------------------------------------

_PRED_PLAN = _HOST.prepare(PREDICATE)
_CALLS_PER_ROUND = 200


@pytest.mark.parametrize("backend", ["plain", "reference", "optimized"])
def test_bench_predicate_dispatch(benchmark: Any, backend: str) -> None:
    """``_CALLS_PER_ROUND`` calls of an installed predicate, arguments checked and a result object
    built for each (through ``SandboxHost.execute``), against a plain Python function call."""
    benchmark.group = "predicate_dispatch"

    def calls() -> int:
        hits = 0
        for hp in range(_CALLS_PER_ROUND):
            if backend == "plain":
                hits += predicate_py(hp, 12)
            else:
                result = _HOST.execute(_PRED_PLAN, "check", [hp, 12], backend=backend)
                hits += bool(result.value)
        return hits

    assert (
        benchmark.pedantic(calls, rounds=15 if backend != "reference" else 5, iterations=1)
        == _CALLS_PER_ROUND - 1
    )
    if benchmark.stats is not None:
        _BEST[("predicate_dispatch", backend)] = benchmark.stats.stats.min / _CALLS_PER_ROUND


def test_bench_predicate_kernel_only(benchmark: Any) -> None:
    """The generated predicate alone, called directly with a prepared run state: what dispatch
    would cost without the per-run host machinery (run context, meter, audit, result)."""
    benchmark.group = "predicate_dispatch"
    artifact = compile_plan(_PRED_PLAN)
    state = RunState(
        RunContext(_PRED_PLAN), artifact.sites, artifact.totals, artifact.texts, artifact.bindings
    )
    check = artifact.functions["check"]

    def calls() -> int:
        hits = 0
        for hp in range(_CALLS_PER_ROUND):
            value, _ = check(state, 10**6, 63, 0, hp, 12)
            hits += 1 if value else 0
        return hits

    assert benchmark.pedantic(calls, rounds=15, iterations=1) == _CALLS_PER_ROUND - 1
    if benchmark.stats is not None:
        _BEST[("predicate_dispatch", "kernel-only")] = benchmark.stats.stats.min / _CALLS_PER_ROUND


# --- compile latency ----------------------------------------------------------------------------


def _compile_latency() -> tuple[float, float, int]:
    """Microseconds per IR node of generate + verify + compile + verify code + bind, over the
    benchmark kernels (best of 5) and over 150 generated programs."""
    kernels = [_plan(name, False) for name in WORKLOADS] + [_PRED_PLAN]
    best = math.inf
    nodes = 0
    for _ in range(5):
        started = time.perf_counter()
        nodes = sum(compile_plan(plan).ir_nodes for plan in kernels)
        best = min(best, time.perf_counter() - started)
    from dotboxd.conformance.generator import RandomSource, build_program
    from dotboxd.conformance.stage_validate import validate_case

    plans = []
    for seed in range(150):
        program = build_program(RandomSource(f"bench-{seed}"))
        raw = {"policy": program.policy_json, "bindings": program.bindings_json}
        plans.append(validate_case(program.module, raw, None).plan)
    started = time.perf_counter()
    corpus_nodes = sum(compile_plan(plan).ir_nodes for plan in plans)
    corpus = time.perf_counter() - started
    return best / nodes * 1e6, corpus / corpus_nodes * 1e6, corpus_nodes


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def test_bench_report(benchmark: Any) -> None:
    """Print (and record) the ratio table; runs last in this file."""
    benchmark.group = "report"
    kernels_us, corpus_us, corpus_nodes = benchmark.pedantic(_compile_latency, rounds=1, iterations=1)
    assert kernels_us > 0 and corpus_us > 0 and corpus_nodes > 1000
    if benchmark.disabled or not _BEST:
        return
    rows = []
    ratios: dict[str, list[float]] = {"reference": [], "optimized": [], "proved": []}
    for name in LOOP_WORKLOADS:
        plain = _BEST.get((name, "plain"))
        if plain is None:
            continue
        cells = [f"{plain * 1e3:.2f} ms"]
        for backend in ("reference", "optimized", "proved"):
            median = _BEST.get((name, backend))
            if median is None:
                cells.append("-")
                continue
            ratios[backend].append(median / plain)
            cells.append(f"{median / plain:.2f}x")
        reference, optimized = _BEST.get((name, "reference")), _BEST.get((name, "optimized"))
        cells.append(f"{reference / optimized:.1f}x" if reference and optimized else "-")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    geo = {k: _geomean(v) for k, v in ratios.items() if v}
    arithmetic = ("arith_loop", "branchy_while", "call_heavy")
    arith_geo = {
        k: _geomean([r for name, r in zip(LOOP_WORKLOADS, v, strict=False) if name in arithmetic])
        for k, v in ratios.items()
        if len(v) == len(LOOP_WORKLOADS)
    }
    lines = [
        "| workload | plain CPython | reference | optimized | optimized + proofs | reference / optimized |",
        "|---|---|---|---|---|---|",
        *rows,
        "| **geomean (6 loop workloads)** | 1.00x | "
        + " | ".join(f"{geo[k]:.2f}x" if k in geo else "-" for k in ("reference", "optimized", "proved"))
        + " | |",
        "| geomean (arith_loop, branchy_while, call_heavy) | 1.00x | "
        + " | ".join(
            f"{arith_geo[k]:.2f}x" if k in arith_geo else "-" for k in ("reference", "optimized", "proved")
        )
        + " | |",
    ]
    pred = {
        b: _BEST.get(("predicate_dispatch", b)) for b in ("plain", "reference", "optimized", "kernel-only")
    }
    if all(v is not None for v in pred.values()):
        lines.append("")
        lines.append(
            "predicate dispatch per call: "
            + ", ".join(f"{b} {v * 1e6:.2f} us" for b, v in pred.items() if v is not None)
        )
    lines.append(
        f"compile latency: {kernels_us:.1f} us per IR node (benchmark kernels), "
        f"{corpus_us:.1f} us per IR node ({corpus_nodes} nodes of generated programs)"
    )
    table = "\n".join(lines)
    benchmark.extra_info["table"] = table
    benchmark.extra_info["geomean"] = {k: round(v, 3) for k, v in geo.items()}
    print("\n" + table)
