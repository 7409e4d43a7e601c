"""A bounded soundness run of the prover over many generated programs, with its numbers.

    .venv/bin/python -m tests.prover.soundness_run --generated 5000 --loops 5000 [--seed S]

Two deterministic sources (the same ones as ``test_soundness.py``): the conformance generator
(``build_program`` on seeded ``RandomSource`` draws, its own input plus two drawn ones) and the
prover's loop-heavy generator (``loopgen.kernels`` through Hypothesis with ``derandomize``, every
input it carries). Every program is prepared, proved and run on the reference interpreter, and
``harness.check_program`` lists each claim a run contradicts (a usage above a bound, a PROVED
budget exhausted, a fault in an operation proved safe, a REFUTED witness that runs fine). Nothing
is asserted here: the run prints what it found and exits 1 if any violation was seen, so a long
run is reported completely. ``make prover-soundness`` runs 10,000 programs; CI runs a small
profile through ``test_soundness_run.py``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from dotboxd.conformance.generator import RandomSource, build_program, draw_inputs
from dotboxd.grammar.text import parse_text

from .harness import Findings, Prepared, check_program, prepare
from .loopgen import Kernel, kernels


@dataclass
class Tally:
    programs: int = 0
    refused: int = 0  # drawn programs the validator refuses (nothing to prove)
    runs: int = 0
    violations: list[str] = field(default_factory=list)
    verdicts: collections.Counter[str] = field(default_factory=collections.Counter)
    seconds: float = 0.0

    def add(self, prepared: Prepared, findings: Findings, label: str) -> None:
        self.programs += 1
        if self.programs % 250 == 0:  # a long run shows how far it got, should it be cut short
            print(
                f"... {self.programs} programs, {self.runs} runs, {len(self.violations)} violations",
                flush=True,
            )
        self.runs += len(findings.runs)
        for f in prepared.report.functions:
            for b in f.budgets:
                self.verdicts[f"{b.resource}:{b.verdict.value}"] += 1
        for v in findings.violations:
            self.violations.append(f"{label}: {v}")
            print("VIOLATION", self.violations[-1], flush=True)

    def crash(self, label: str, exc: Exception) -> None:
        self.programs += 1
        self.violations.append(f"{label}: the prover raised {type(exc).__name__}: {exc}")
        print("VIOLATION", self.violations[-1], flush=True)

    def to_json(self) -> dict[str, Any]:
        return {
            "programs": self.programs,
            "refused": self.refused,
            "runs": self.runs,
            "violations": self.violations,
            "verdicts": dict(sorted(self.verdicts.items())),
            "seconds": round(self.seconds, 1),
        }


def run_generated(count: int, seed: str, tally: Tally, start: int = 0) -> None:
    """``count`` draws of the conformance generator, from draw number ``start`` on."""
    for i in range(start, start + count):
        src = RandomSource(f"{seed}-{i}")
        program = build_program(src)
        try:
            prepared = prepare(program.module, program.policy_json, program.bindings_json, program.entry)
        except Exception as exc:  # a prover crash is a finding too; the run goes on
            tally.crash(f"generated {seed}-{i}", exc)
            continue
        if prepared is None:
            tally.refused += 1
            continue
        findings = check_program(prepared, [program.args_json, *draw_inputs(src, program, 2)])
        tally.add(prepared, findings, f"generated {seed}-{i}")


def run_loops(count: int, tally: Tally) -> None:
    """``count`` kernels of the loop generator (derandomized Hypothesis: the same every time)."""
    if count <= 0:
        return

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @given(kernels())
    def one(kernel: Kernel) -> None:
        try:
            prepared = prepare(parse_text(kernel.source), kernel.policy, [], "main")
        except Exception as exc:
            tally.crash(f"loop kernel\n{kernel.source}", exc)
            return
        if prepared is None:
            tally.refused += 1
            return
        findings = check_program(prepared, [list(i) for i in kernel.inputs])
        tally.add(prepared, findings, f"loop kernel\n{kernel.source}\ninputs {kernel.inputs}")

    one()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generated", type=int, default=5000)
    parser.add_argument("--loops", type=int, default=5000)
    parser.add_argument("--seed", default="soundness")
    parser.add_argument(
        "--start",
        type=int,
        default=0,
        help="first generator draw (so a long run can be split over processes: 0/2500 + 2500/2500)",
    )
    parser.add_argument("--json", help="also write the tally as JSON to this file")
    args = parser.parse_args(argv)
    tally = Tally()
    start = time.perf_counter()
    run_generated(args.generated, args.seed, tally, args.start)
    run_loops(args.loops, tally)
    tally.seconds = time.perf_counter() - start
    report = tally.to_json()
    print(
        f"{tally.programs} programs proved and run ({tally.refused} drawn programs refused by the "
        f"validator), {tally.runs} runs, {len(tally.violations)} soundness violations, "
        f"{tally.seconds:.0f} s"
    )
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
