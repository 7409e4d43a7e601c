"""Report the prover's numbers on the corpus: verdict shares, tightness, time per function.

    .venv/bin/python -m tests.prover.measure [--generated N]

* corpus: every run case of ``conformance/cases`` (its own input);
* generated: N programs of the conformance generator (seeded, deterministic) with 3 inputs each.

Tightness is the median of (static fuel bound / actual fuel) over successful runs. Time is wall
time of ``prove_plan`` divided by the number of functions of the module (measured, never asserted).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from collections.abc import Iterable

from dotboxd.conformance.generator import RandomSource, build_program, draw_inputs
from dotboxd.validator.prover import ProofReport

from .corpus import corpus
from .harness import check_program, prepare


def _shares(reports: Iterable[ProofReport]) -> dict[str, collections.Counter[str]]:
    out: dict[str, collections.Counter[str]] = {
        "functions": collections.Counter(),
        "entrypoints": collections.Counter(),
        "entrypoints with loops": collections.Counter(),
    }
    for report in reports:
        for f in report.functions:
            out["functions"][f.verdict.value] += 1
            if f.entrypoint:
                out["entrypoints"][f.verdict.value] += 1
                if f.loops:
                    out["entrypoints with loops"][f.verdict.value] += 1
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def print_tightness(by_resource: dict[str, list[float]]) -> None:
    """p50 / p90 / max of bound / actual per resource, over successful runs that used some."""
    for resource, values in sorted(by_resource.items()):
        if values:
            print(
                f"  tightness {resource} (bound / actual): p50 {_percentile(values, 0.5):.2f}, "
                f"p90 {_percentile(values, 0.9):.2f}, max {max(values):.1f} over {len(values)} runs"
            )


def _print_block(
    title: str, reports: list[ProofReport], per_function: list[float], ratios: list[float]
) -> None:
    print(f"== {title}")
    for name, counter in _shares(reports).items():
        total = sum(counter.values()) or 1
        parts = ", ".join(f"{k} {v} ({100 * v / total:.1f}%)" for k, v in sorted(counter.items()))
        print(f"  {name}: {total} - {parts}")
    if ratios:
        print(
            f"  tightness (fuel bound / actual): median {statistics.median(ratios):.3f} over {len(ratios)} runs"
        )
    if per_function:
        ordered = sorted(per_function)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        print(
            f"  prover time per function: median {1000 * statistics.median(ordered):.2f} ms, "
            f"p90 {1000 * p90:.2f} ms, max {1000 * ordered[-1]:.2f} ms"
        )


def measure_corpus() -> None:
    reports: list[ProofReport] = []
    per_function: list[float] = []
    ratios: list[float] = []
    violations = 0
    for result in corpus():
        reports.append(result.report)
        per_function += [result.seconds / max(1, result.functions)] * result.functions
        if result.ratio is not None:
            ratios.append(result.ratio)
        violations += len(result.violations)
    _print_block(
        f"conformance corpus ({len(reports)} run cases; {violations} soundness violations)",
        reports,
        per_function,
        ratios,
    )


def measure_generated(count: int) -> None:
    by_resource: dict[str, list[float]] = {}
    reports: list[ProofReport] = []
    per_function: list[float] = []
    ratios: list[float] = []
    violations = 0
    for i in range(count):
        src = RandomSource(f"measure-{i}")
        program = build_program(src)
        start = time.perf_counter()
        prepared = prepare(program.module, program.policy_json, program.bindings_json, program.entry)
        if prepared is None:
            continue
        seconds = time.perf_counter() - start
        reports.append(prepared.report)
        n = len(prepared.report.functions)
        per_function += [seconds / max(1, n)] * n
        findings = check_program(prepared, [program.args_json, *draw_inputs(src, program, 2)])
        violations += len(findings.violations)
        ratios += [o.bound / o.fuel for o in findings.runs if o.ok and o.bound is not None and o.fuel > 0]
        for o in findings.runs:
            for resource, ratio in o.ratios.items():
                if o.ok:
                    by_resource.setdefault(resource, []).append(ratio)
    _print_block(
        f"generated programs ({len(reports)}; {violations} soundness violations)",
        reports,
        per_function,
        ratios,
    )
    print_tightness(by_resource)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generated", type=int, default=200)
    parser.add_argument("--no-corpus", action="store_true", help="only the generated programs")
    args = parser.parse_args()
    if not args.no_corpus:
        measure_corpus()
    measure_generated(args.generated)


if __name__ == "__main__":
    main()
