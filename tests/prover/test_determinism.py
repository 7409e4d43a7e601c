"""Verdicts never depend on what ran before, on the process, or on machine speed.

Z3 is driven by its deterministic work counter (``rlimit``) with a fixed seed, each function in a
fresh context, and every other budget of the prover counts steps, not time. So proving a module
gives byte-identical reports: twice in a row, after proving unrelated modules, and in another
process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dotboxd.cli.main import main
from dotboxd.conformance.generator import RandomSource, build_program
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.source import load_module
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import prove_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SCRIPT = """
import json, sys
from pathlib import Path
from dotboxd.grammar.source import load_module
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import prove_plan
plan = SandboxHost().prepare(load_module(Path(sys.argv[1]))[0], Policy.default())
print(json.dumps(prove_plan(plan).to_json(), sort_keys=True))
"""


def _report(path: Path) -> str:
    plan = SandboxHost().prepare(load_module(path)[0], Policy.default())
    return json.dumps(prove_plan(plan).to_json(), sort_keys=True)


def test_same_report_regardless_of_history_and_process() -> None:
    target = EXAMPLES / "over-budget.json"
    first = _report(target)
    _report(EXAMPLES / "loot-score.json")  # other work in between must not matter
    kernel = (
        'module "x" version "1.0.0";\nentrypoint fn main(n I32, m I32) -> I32 {\n'
        "i = 0;\nwhile i < n * m { i = i + 1; }\nreturn i;\n}\n"
    )
    prove_plan(SandboxHost().prepare(kernel, Policy.default()))
    assert _report(target) == first
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(target)], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip() == first


def _plans() -> list[object]:
    """A bounded slice of prover input: the examples that prepare plus generated loop programs."""
    plans: list[object] = []
    for path in sorted(EXAMPLES.glob("*.json")):
        try:
            plans.append(SandboxHost().prepare(load_module(path)[0], Policy.default()))
        except DotBoxDError:
            continue  # needs bindings this host does not register: not prover input here
    for i in range(12):
        program = build_program(RandomSource(f"determinism-{i}"))
        if program.bindings_json:
            continue
        try:
            plans.append(SandboxHost().prepare(program.module, Policy.default()))
        except DotBoxDError:
            continue  # declares policy types the default policy lacks
    return plans


def _verdicts(plans: list[object]) -> list[str]:
    return [json.dumps(prove_plan(plan).to_json(), sort_keys=True) for plan in plans]  # type: ignore[arg-type]


HOSTILE_SCRIPT = (
    "(set-option :timeout 1)\n(set-option :rlimit 3000)\n(set-option :smt.random_seed 5)\n"
    "(set-option :smt.arith.solver 2)\n(declare-const x Int)\n(assert (> (* x x x) 7))\n(check-sat)\n"
)


def test_verdicts_ignore_z3_global_state_left_by_replays_and_other_z3_users(tmp_path: Path) -> None:
    """Threat: a kernel accepted or refused in strict mode depending on what the process did
    before. Z3's parameter table is process-wide: a replayed script's ``set-option`` lines (parsed
    in a fresh context) and another library's ``z3.set_param`` both write it."""
    import z3  # type: ignore[import-untyped]

    plans = _plans()
    first = _verdicts(plans)
    assert any('"PROVED"' in v for v in first)  # the slice has proofs that could flip
    try:
        out = tmp_path / "smt"
        assert main(["prove", str(EXAMPLES / "over-budget.json"), "--emit-smt", str(out)]) in (0, 1)
        for script in sorted(out.glob("*.smt2"))[:5]:  # replays of our own evidence, in-process
            z3.Solver(ctx=z3.Context()).from_string(script.read_text(encoding="utf-8"))
        z3.Solver(ctx=z3.Context()).from_string(HOSTILE_SCRIPT)  # someone else's script
        z3.set_param("sat.random_seed", 11)  # and another Z3 user's global settings
        z3.set_param("nlsat.seed", 4)
        assert _verdicts(plans) == first
        assert _verdicts(plans) == first  # and again, after our own queries ran in between
    finally:
        z3.reset_params()
