"""How the collection workloads scale: time each at n, 2n, 4n, 8n on both backends, fit the exponent.

    python -m tests.benchmarks.scaling              # the table for README's Measurements
    python -m tests.benchmarks.scaling --quick      # small sizes, a few seconds

A workload whose real cost per operation is amortized O(1) scales with exponent ~1 (time ~ n^e, e
fitted by least squares on log time against log n); a copy per step shows as e ~ 2 once the copies
dominate. Each point is the best of ``k`` runs in CPU time (``time.process_time``: on a shared
machine another process's load inflates wall time but far less the CPU time of this one), with
sizes big enough that one run's fixed cost (prepare is outside the timing; argument checks, meter
and result objects are inside) is small against the loop. The fit is reported, not asserted: under
load even CPU time drifts (cache and frequency sharing), so a hard threshold here would be flaky;
``tests/optimized/test_collection_growth.py`` asserts the operation counts instead.

Workloads: ``list_build_sum`` and ``string_build`` are those of ``test_bench_backends``;
``map_grow`` counts ``n`` keys of which ``n / 2 + 1`` are distinct, so the map itself grows with
``n`` (``test_bench_backends``' ``map_count`` has 17 keys whatever ``n`` is, so a map copy per
update would not show there).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.validator.plan import ExecutionPlan
from tests.benchmarks.workloads import LISTSUM, STRBUILD, roomy_policy

MAPGROW = """module "mapgrow" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    counts = map.empty[Map<I32, I32>]();
    distinct = n / 2 + 1;
    for i in 0 .. n {
        k = i * 31 % distinct;
        if map.containsKey(counts, k) { counts = map.set(counts, k, map.get(counts, k) + 1); }
        else { counts = map.set(counts, k, 1); }
    }
    return map.count(counts) * 1000 + map.get(counts, 0);
}"""


def listsum_py(n: int) -> int:
    return sum(i * 7 % 100 for i in range(n))


def mapgrow_py(n: int) -> int:
    counts: dict[int, int] = {}
    distinct = n // 2 + 1
    for i in range(n):
        k = i * 31 % distinct
        counts[k] = counts.get(k, 0) + 1
    return len(counts) * 1000 + counts[0]


def strbuild_py(n: int) -> int:
    return n


@dataclass(frozen=True)
class Workload:
    name: str
    kernel: str
    twin: Callable[[int], int]
    base: int
    """n of the full run (the sizes are n, 2n, 4n, 8n)."""
    quick: int
    """n of a quick run (and of the test that keeps this module working)."""


WORKLOADS = (
    Workload("list_build_sum", LISTSUM, listsum_py, 25_000, 500),
    Workload("map_grow", MAPGROW, mapgrow_py, 10_000, 400),
    Workload("string_build", STRBUILD, strbuild_py, 5_000, 300),
)
BACKENDS = ("reference", "optimized")
FACTORS = (1, 2, 4, 8)

POLICY = roomy_policy().build()


def make_host() -> SandboxHost:
    return SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})


def run_once(host: SandboxHost, plan: ExecutionPlan, backend: str, n: int) -> tuple[int, float]:
    """One run's value and CPU seconds."""
    started = time.process_time()
    result = host.execute(plan, "main", [n], backend=backend)
    elapsed = time.process_time() - started
    if not result.ok:
        raise RuntimeError(f"{plan.module.name} n={n} on {backend}: {result.error}")
    value = result.value
    assert isinstance(value, int)
    return value, elapsed


def fit_exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """The least-squares slope of log(seconds) against log(size)."""
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(t, 1e-9)) for t in seconds]
    mx = sum(xs) / len(xs)
    my = sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


@dataclass(frozen=True)
class Row:
    workload: str
    backend: str
    sizes: tuple[int, ...]
    seconds: tuple[float, ...]

    @property
    def exponent(self) -> float:
        return fit_exponent(self.sizes, self.seconds)


def measure(workload: Workload, backend: str, base: int, best_of: int, host: SandboxHost) -> Row:
    """Best-of-``best_of`` CPU time at each size; every value is checked against the CPython twin."""
    plan = host.prepare(workload.kernel, POLICY)
    host.execute(plan, "main", [1], backend=backend)  # compile outside the timing
    sizes = tuple(base * f for f in FACTORS)
    seconds = []
    for n in sizes:
        expected = workload.twin(n)
        best = math.inf
        for _ in range(best_of):
            value, elapsed = run_once(host, plan, backend, n)
            if value != expected:
                raise AssertionError(f"{workload.name} n={n} on {backend}: {value} != {expected}")
            best = min(best, elapsed)
        seconds.append(best)
    return Row(workload.name, backend, sizes, tuple(seconds))


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| workload | backend | n | 2n | 4n | 8n | fitted exponent |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = " | ".join(f"{t * 1e3:.0f} ms" for t in row.seconds)
        lines.append(
            f"| {row.workload} (n = {row.sizes[0]:,}) | {row.backend} | {cells} | {row.exponent:.2f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds, not minutes)")
    parser.add_argument("--best-of", type=int, default=3)
    parser.add_argument("--only", action="append", help="a workload name (repeatable)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every base size")
    args = parser.parse_args(argv)
    host = make_host()
    rows = []
    load_before = os.getloadavg()
    for workload in WORKLOADS:
        if args.only and workload.name not in args.only:
            continue
        base = max(1, round((workload.quick if args.quick else workload.base) * args.scale))
        for backend in BACKENDS:
            row = measure(workload, backend, base, args.best_of, host)
            print(f"{row.workload} {row.backend}: exponent {row.exponent:.2f}", flush=True)
            rows.append(row)
    load_after = os.getloadavg()
    print()
    print(table(rows))
    print(
        f"\nload average (1/5/15 min) before {'/'.join(f'{x:.1f}' for x in load_before)}, "
        f"after {'/'.join(f'{x:.1f}' for x in load_after)}; {os.cpu_count()} CPUs; best of {args.best_of}"
    )


if __name__ == "__main__":
    main()
