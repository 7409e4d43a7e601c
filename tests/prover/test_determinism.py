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
