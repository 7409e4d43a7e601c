"""Which charges make up the allocation bound of the loosest generated programs (a diagnostic).

    .venv/bin/python -m tests.prover.alloc_breakdown [--generated N]

The tightness report (``measure.py``) says how loose the allocatedBytes bound is; this says why.
While the prover runs, every allocation and string-byte charge it makes is also added to a shadow
resource named after where it was charged: the built-in (``builtin:list.add``), a binding result
(``binding``), a text literal, the entry inputs (``input``), each marked ``@loop`` inside a loop.
Shadow resources flow through branches, calls and loops like any other resource, so evaluating
them on a run's input splits the bound into its terms. The script prints, for the runs at the 90th
percentile of bound / actual and above, each run's largest terms and each term's mean share of the
bound. Nothing is asserted: the numbers are for a reader deciding what to tighten next.
"""

from __future__ import annotations

import argparse
import collections
import sys
from types import FrameType

from dotboxd.conformance.generator import RandomSource, build_program, draw_inputs
from dotboxd.validator.prover import analyzer
from dotboxd.validator.prover.state import ALLOCATION, STRING_BYTES, State, add_upper
from dotboxd.validator.prover.sym import Poly

from .harness import decode_args, in_preconditions, prepare, run

SHADOW = "@"


def _site(frame: FrameType | None) -> str:
    """The charge site of the current charge, read off the analyser's call stack."""
    site, in_loop = "other", False
    found = False
    while frame is not None:
        name = frame.f_code.co_name
        if not found:
            found = True
            if name == "apply_builtin":
                site = "builtin:" + str(frame.f_locals["name"])
            elif name == "_call" and "desc" in frame.f_locals:
                site = "binding"
            elif name == "_literal":
                site = "literal"
            elif name == "analyze":
                site = "input"
            else:
                found = False
        in_loop = in_loop or name == "analyze_loop"
        frame = frame.f_back
    return site + ("@loop" if in_loop else "")


def install() -> None:
    """Make every allocation charge also charge its site's shadow resource."""
    original = analyzer.Analyzer.charge

    def charge(
        self: analyzer.Analyzer, st: State, resource: str, up: Poly | None, low: Poly | None = None
    ) -> None:
        original(self, st, resource, up, low)
        if self.probe or resource not in (ALLOCATION, STRING_BYTES):
            return
        kind = "text" if resource == STRING_BYTES else "other"
        add_upper(self.sym, st.U, f"{SHADOW}{_site(sys._getframe(1))} ({kind})", up)

    analyzer.Analyzer.charge = charge  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generated", type=int, default=150)
    args = parser.parse_args()
    install()
    rows: list[tuple[float, int, int, int, dict[str, int]]] = []
    for i in range(args.generated):
        src = RandomSource(f"measure-{i}")  # the same programs as measure.py
        program = build_program(src)
        p = prepare(program.module, program.policy_json, program.bindings_json, program.entry)
        if p is None:
            continue
        evaluator = p.report._bounds.get(p.entry)
        for args_json in [program.args_json, *draw_inputs(src, program, 2)]:
            values = decode_args(p.plan, p.entry, args_json)
            if evaluator is None or values is None or not in_preconditions(p, values):
                continue
            result = run(p, args_json)
            bound = p.report.bound_at(p.entry, "allocatedBytes", values)
            actual = result.usage.allocated_bytes
            if not result.ok or not actual or bound is None:
                continue
            terms = {
                k[1:]: evaluator.evaluate(k, values) or 0
                for k in evaluator.analysis.upper
                if k.startswith(SHADOW)
            }
            rows.append((bound / actual, i, bound, actual, terms))
    rows.sort(key=lambda r: r[0])
    if not rows:
        print("no successful run allocated anything")
        return
    cut = int(0.9 * (len(rows) - 1))
    print(f"{len(rows)} runs: bound / actual p50 {rows[(len(rows) - 1) // 2][0]:.2f}, p90 {rows[cut][0]:.2f}")
    shares: collections.Counter[str] = collections.Counter()
    for ratio, i, bound, actual, terms in rows[cut:]:
        total = sum(terms.values()) or 1
        for k, v in terms.items():
            shares[k] += v / total
        top = ", ".join(f"{k} {v}" for k, v in sorted(terms.items(), key=lambda kv: -kv[1])[:3])
        print(f"  program {i}: {ratio:.1f}x (bound {bound}, actual {actual}): {top}")
    print(
        "mean share of the bound over those runs (text terms are capped at maxTotalStringBytes in the bound):"
    )
    for k, v in shares.most_common(12):
        print(f"  {k}: {v / len(rows[cut:]):.2f}")


if __name__ == "__main__":
    main()
