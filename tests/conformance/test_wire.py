"""``conformance run --wire``: an implementation that has only the wire JSON form runs the corpus.

The stand-in is our own ``serve --wire-only``, which refuses any ``kernelText`` request: without
``--wire`` the text-form cases fail against it; with ``--wire`` every case that has a wire form
passes, and only the cases that test the text importer itself are left out (and reported)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from typing import Any

from dotboxd.conformance.loader import CORPUS_ROOT, load_cases
from dotboxd.conformance.wire_form import wire_cases

ROOT = CORPUS_ROOT.parents[1]
WIRE_ONLY = f"{shlex.quote(sys.executable)} -m dotboxd.cli.main conformance serve --wire-only"
# A named slice with many text-form cases across stages (import, validate, run); the whole
# corpus runs in ``test_the_whole_corpus_runs_over_wire_against_a_wire_only_implementation``.
SLICE = [CORPUS_ROOT / "run" / "strings.json"]


def run_cli(*args: str) -> tuple[int, dict[str, Any]]:
    command = [sys.executable, "-m", "dotboxd.cli.main", "conformance", "run", *args, "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=900, cwd=ROOT)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_converted_cases_carry_only_wire_json() -> None:
    cases = load_cases()
    selection = wire_cases(cases)
    assert not any("kernelText" in case.raw for case in selection.cases)
    text_cases = [case for case in cases if case.source_key == "kernelText"]
    converted = [case for case in selection.cases if case.name in {c.name for c in text_cases}]
    assert len(converted) + len(selection.text_only) == len(text_cases)
    # Only text the text importer refuses stays behind: those cases test the text form itself.
    assert all(reason.startswith("the text importer refuses") for reason in selection.text_only.values())
    for case in converted:
        json.loads(case.raw["moduleText"])


def test_without_wire_a_wire_only_implementation_fails_the_text_form_cases() -> None:
    code, report = run_cli(*map(str, SLICE), "--impl", WIRE_ONLY, "--backend", "reference")
    assert code == 1
    failed = [r for r in report["results"] if not r["passed"]]
    assert failed and all("no text form" in (r["actual"]["message"] or "") for r in failed)


def test_the_whole_corpus_runs_over_wire_against_a_wire_only_implementation() -> None:
    """Every case with a wire form passes through ``serve --wire-only``; the text-only ones are
    named in the report, never counted as passes."""
    cases = load_cases()
    selection = wire_cases(cases)
    code, report = run_cli("--wire", "--impl", WIRE_ONLY, "--backend", "reference")
    failed = [f"{r['name']}: {r['mismatches']}" for r in report["results"] if not r["passed"]]
    assert failed == []
    assert code == 0
    assert report["total"] == report["passed"] == len(selection.cases)
    assert sorted(report["textOnly"]) == sorted(selection.text_only)
    assert report["total"] + len(report["textOnly"]) + len(report["notRun"]) == len(cases)
