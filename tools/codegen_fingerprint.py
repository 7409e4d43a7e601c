"""Fingerprint the optimized backend's generated source, to prove a compile-speed change left it alone.

Why: compile-latency work (issue 16) rewrites analyses such as ``value_ranges`` for speed only; the
code they feed must stay byte-identical. This tool compiles every plan of the conformance corpus and
a few hundred generated programs, and hashes ``compile_plan(plan, keep_module=True).source()`` per
plan. Record the hashes on the code before a change, then check them after:

    .venv/bin/python tools/codegen_fingerprint.py record /tmp/before.json
    .venv/bin/python tools/codegen_fingerprint.py check /tmp/before.json

``check`` prints every plan whose source differs (or which appeared or vanished) and exits 1 if any.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from dotboxd.conformance.generator import RandomSource, build_program
from dotboxd.conformance.loader import load_cases
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.runtime.optimized import compile_plan
from dotboxd.validator.plan import ExecutionPlan

GENERATED_PROGRAMS = 300


def _plans() -> Iterator[tuple[str, ExecutionPlan | None]]:
    """Every corpus plan (None when the case does not validate), then the generated programs."""
    for case in load_cases():
        try:
            plan = validate_case(import_stage(case.raw, case.origin), case.raw, None).plan
        except Exception:  # a case that is meant to be rejected has no plan to compile
            plan = None
        yield f"corpus:{case.origin}:{case.name}", plan
    for seed in range(GENERATED_PROGRAMS):
        program = build_program(RandomSource(f"fingerprint-{seed}"))
        raw = {"policy": program.policy_json, "bindings": program.bindings_json}
        yield f"generated:{seed}", validate_case(program.module, raw, None).plan


def fingerprints() -> dict[str, str]:
    """Plan name -> sha256 of its generated source (or of the compile error's type and text)."""
    out: dict[str, str] = {}
    for name, plan in _plans():
        if plan is None:
            continue
        try:
            text = compile_plan(plan, keep_module=True).source()
        except Exception as error:  # a plan the backend refuses must keep refusing the same way
            text = f"refused: {type(error).__name__}: {error}"
        out[name] = hashlib.sha256(text.encode()).hexdigest()
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("record", "check"):
        print(__doc__)
        return 2
    path = Path(argv[2])
    now = fingerprints()
    if argv[1] == "record":
        path.write_text(json.dumps(now, indent=0, sort_keys=True))
        print(f"recorded {len(now)} plans to {path}")
        return 0
    before: dict[str, str] = json.loads(path.read_text())
    changed = sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))
    for name in changed:
        print("differs:", name)
    print(f"{len(now)} plans compiled, {len(changed)} differ from {path}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
