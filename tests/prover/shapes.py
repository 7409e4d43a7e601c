"""The committed loop-shape set (``conformance/prover-shapes/*.dbk``) and what the prover says.

Each shape is a small kernel in the text form whose header names its class and the verdict a
termination prover of the KoAT / termination-competition kind is expected to reach::

    // class: lexicographic
    // expect: termination PROVED        (every while loop has a ranking function)
    // expect: termination not PROVED    (non-terminating or open: must never be PROVED)
    // expect: safety REFUTED            (an overflow with a witness input that really faults)

Run ``.venv/bin/python -m tests.prover.shapes`` for the pass-rate table of the README.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import dumps_wire
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import ProofReport, Verdict, prove_plan

SHAPES = Path(__file__).resolve().parents[2] / "conformance" / "prover-shapes"
EXPECTATIONS = ("termination PROVED", "termination not PROVED", "safety REFUTED")
FAULTS = frozenset({"R-ARITH-OVERFLOW", "R-ARITH-DIVIDE-BY-ZERO"})


@dataclass(frozen=True)
class Shape:
    name: str
    klass: str
    expect: str
    text: str


@dataclass
class Outcome:
    shape: Shape
    met: bool
    violations: list[str] = field(default_factory=list)  # broken promises: never acceptable
    detail: str = ""


def load_shapes() -> list[Shape]:
    shapes = []
    for path in sorted(SHAPES.glob("*.dbk")):
        text = path.read_text(encoding="utf-8")
        header = dict(
            line[3:].split(":", 1)
            for line in text.splitlines()
            if line.startswith("// ") and ":" in line[:12]
        )
        expect = header.get("expect", "").strip()
        assert expect in EXPECTATIONS, f"{path.name}: unknown expectation {expect!r}"
        shapes.append(Shape(path.stem, header.get("class", "").strip(), expect, text))
    return shapes


def _policy() -> Policy:
    return Policy.builder().with_limits(max_wall_time_ms=60_000).build()


def prove_forms(shape: Shape) -> tuple[ProofReport, ProofReport, SandboxHost, Any]:
    """Prove the shape from its text form and from its wire form (same module, other importer)."""
    host = SandboxHost()
    module = parse_text(shape.text, f"{shape.name}.dbk")
    text_plan = host.prepare(shape.text, _policy())
    wire_plan = host.prepare(dumps_wire(module), _policy())
    return prove_plan(text_plan), prove_plan(wire_plan), host, text_plan


def evaluate(shape: Shape) -> Outcome:
    text_report, wire_report, host, plan = prove_forms(shape)
    out = Outcome(shape, met=False)
    if text_report.to_json() != wire_report.to_json():
        out.violations.append("the text and wire forms get different reports")
    loops = [loop for fn in text_report.functions for loop in fn.loops if loop.kind == "while"]
    proved = [loop for loop in loops if loop.verdict is Verdict.PROVED]
    refuted = [s for fn in text_report.functions for s in fn.safety if s.verdict is Verdict.REFUTED]
    for fact in refuted:  # every overflow claim must come with an input that really faults
        assert fact.witness is not None
        for backend in ("reference", "optimized"):
            result = host.execute(
                plan, fact.function, list(fact.witness.args), backend=backend, encoding="json"
            )
            if result.error is None or result.error.code not in FAULTS:
                out.violations.append(f"REFUTED {fact.op} at {fact.pointer}: witness runs fine on {backend}")
    if shape.expect == "termination not PROVED":
        out.met = not proved
        if proved:
            out.violations.append("a loop that need not terminate was PROVED to terminate")
    elif shape.expect == "termination PROVED":
        out.met = bool(loops) and len(proved) == len(loops)
    else:
        out.met = bool(refuted)
    out.detail = "; ".join(f"{loop.verdict.value}: {loop.method}"[:90] for loop in loops)
    return out


def main() -> int:
    outcomes = [evaluate(shape) for shape in load_shapes()]
    by_class: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_class.setdefault(o.shape.klass, []).append(o)
    print("| class | shapes | as expected | expected verdict |")
    print("|---|---|---|---|")
    for klass, items in sorted(by_class.items()):
        expects = sorted({o.shape.expect for o in items})
        print(f"| {klass} | {len(items)} | {sum(o.met for o in items)} | {', '.join(expects)} |")
    met = sum(o.met for o in outcomes)
    print(f"\n{met}/{len(outcomes)} shapes as expected ({100 * met / len(outcomes):.0f}%)")
    for o in outcomes:
        flag = "ok  " if o.met else "MISS"
        print(f"{flag} {o.shape.name}: {o.shape.expect} {o.violations or ''} {o.detail}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
