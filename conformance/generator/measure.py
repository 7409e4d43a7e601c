"""Measure the generator: validity rate, run outcomes on the reference backend, and breadth.

    python -m dotboxd.conformance.generator.measure --count 1000 --seed 0 [--no-run] [--json]

Draws ``count`` programs exactly as ``generate_cases`` does (seeded, no Hypothesis), validates each
against its own policy and fixtures, runs the accepted ones on the reference interpreter, and prints
the validity rate with a histogram of rejection codes (each with the first draw that produced it,
to reproduce with ``program_source(seed, draw)``), the outcome distribution by category and code,
and which built-ins, operators, statements, literal kinds and fixture behaviours never appeared.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from dotboxd.core import ast
from dotboxd.core.builtins import BASE_SURFACE, BUILTINS
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.runtime.fixtures import BEHAVIOR_KINDS

from .cases import plan_program, program_source, run_reference
from .coverage import program_features
from .program import build_program


def expected_features() -> list[str]:
    """The feature keys a broad enough sample must contain (see ``coverage``)."""
    # the generator draws from DotBoxD's own surface; the extension built-ins (dotboxd-1+ext1) have
    # their own cases (conformance/cases/strings/ext-builtins.json) and are not generated yet
    keys = [f"builtin:{name}" for name, builtin in BUILTINS.items() if builtin.surface == BASE_SURFACE]
    keys += [f"op:{op.value}" for op in ast.BinaryOp]
    keys += [f"unary:{op.value}" for op in ast.UnaryOp]
    keys += [f"literal:{kind.value}" for kind in ast.LiteralKind]
    keys += [
        f"stmt:{name}" for name in ("set", "return", "expr", "if", "while", "forRange", "continue", "break")
    ]
    keys += [f"behavior:{kind}" for kind in sorted(BEHAVIOR_KINDS)]
    return keys


def measure(count: int, seed: int, run: bool = True) -> dict[str, Any]:
    started = time.perf_counter()
    rejections: Counter[str] = Counter()
    first: dict[str, int] = {}
    outcomes: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    features: Counter[str] = Counter()
    valid = 0
    for draw in range(count):
        program = build_program(program_source(seed, draw))
        try:
            plan = plan_program(program)
        except DotBoxDError as refused:
            rejections[refused.code] += 1
            first.setdefault(refused.code, draw)
            continue
        valid += 1
        features.update(program_features(program, plan))
        if run:
            outcome = run_reference(program)
            category = outcome.expect.get("error", "ok") if outcome.stage == "run" else "rejected"
            outcomes[str(category)] += 1
            codes[outcome.code or "ok"] += 1
    return {
        "count": count,
        "seed": seed,
        "valid": valid,
        "validityRate": valid / count if count else 1.0,
        "rejections": {code: {"count": n, "firstDraw": first[code]} for code, n in rejections.most_common()},
        "outcomes": dict(outcomes.most_common()),
        "codes": dict(codes.most_common()),
        "missingFeatures": [key for key in expected_features() if key not in features],
        "typedOperators": sorted(
            k for k in features if k.startswith(("op:", "unary:")) and k.count(":") == 2
        ),
        "seconds": round(time.perf_counter() - started, 2),
    }


def _text(report: dict[str, Any]) -> str:
    lines = [
        f"drew {report['count']} programs (seed {report['seed']}) in {report['seconds']} s",
        f"valid: {report['valid']} ({100 * report['validityRate']:.2f}%)",
    ]
    for code, info in report["rejections"].items():
        lines.append(f"  rejected {code}: {info['count']} (first at draw {info['firstDraw']})")
    if report["outcomes"]:
        ran = sum(report["outcomes"].values())
        lines.append("outcomes on the reference backend:")
        for category, n in report["outcomes"].items():
            lines.append(f"  {category:<16} {n:>5}  {100 * n / ran:5.1f}%")
        lines.append("codes: " + ", ".join(f"{code} {n}" for code, n in report["codes"].items()))
    missing = report["missingFeatures"]
    lines.append("missing features: " + (", ".join(missing) if missing else "none"))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-run", action="store_true", help="validate only")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    report = measure(args.count, args.seed, run=not args.no_run)
    sys.stdout.write((json.dumps(report, indent=1) if args.json else _text(report)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
