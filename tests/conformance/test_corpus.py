"""The whole corpus: its size and areas, how its expectations were decided, that the committed files
are what their generators write, that no expectation depends on machine speed, and that every case
passes on the reference backend - in process and through ``serve`` (so the protocol is tested too)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dotboxd.conformance.areas import AREAS, FILE_AREAS
from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.generator import write_cases
from dotboxd.conformance.loader import CORPUS_ROOT, area_of, case_files
from dotboxd.conformance.model import Case
from dotboxd.conformance.report import failure_line
from dotboxd.conformance.runner import run_cases
from tests.corpus_cases import corpus_cases

TOOLS = CORPUS_ROOT.parent / "tools"
ROOT = CORPUS_ROOT.parents[1]
CASES = list(corpus_cases())
SPEC_AREAS = [area for area in AREAS if area != "generated"]
GENEROUS_WALL_MS = 60_000
GENERATED_FILE = CORPUS_ROOT / "generated" / "generated-seed-1.json"


def spec_derived(cases: list[Case]) -> list[Case]:
    """Cases whose expectations come from the spec (everything but the generated regression cases)."""
    return [case for case in cases if case.area != "generated"]


def test_the_corpus_has_1000_spec_derived_cases_in_every_area() -> None:
    derived = spec_derived(CASES)
    assert len(derived) >= 1000
    per_area = {area: sum(1 for case in derived if case.area == area) for area in SPEC_AREAS}
    assert {area for area, n in per_area.items() if n < 20} == set(), per_area
    assert {case.area for case in CASES} <= set(AREAS)


def test_every_corpus_file_belongs_to_a_known_area() -> None:
    for path in case_files([CORPUS_ROOT]):
        assert area_of(path) in AREAS, path
    for relative in FILE_AREAS:
        assert FILE_AREAS[relative] in AREAS, relative


def test_300_spec_derived_run_cases_pin_fuel() -> None:
    pinned = [c for c in spec_derived(CASES) if c.expect.stage == "run" and c.expect.fuel_used is not None]
    assert len(pinned) >= 300


def test_generated_cases_are_labelled_as_regression_cases() -> None:
    generated = [case for case in CASES if case.area == "generated"]
    assert len(generated) >= 100
    for case in generated:
        assert {"generated", "regression"} <= set(case.tags), case.name
        assert "not spec-derived" in str(case.raw.get("description")), case.name
    for case in spec_derived(CASES):
        assert "regression" not in case.tags and "generated" not in case.tags, case.name


def _wall_ms(case: Case) -> int | None:
    limits = case.raw.get("policy", {}).get("limits", {})
    value = limits.get("maxWallTimeMs")
    return value if isinstance(value, int) else None


def test_quota_cases_cannot_turn_into_timeouts() -> None:
    """A run case expecting QuotaExceeded must not depend on the machine's speed (generator finding 4)."""
    quota = [case for case in CASES if case.expect.stage == "run" and case.expect.error == "QuotaExceeded"]
    assert len(quota) >= 20
    slow = [case.name for case in quota if (_wall_ms(case) or 0) < GENEROUS_WALL_MS]
    assert slow == []


def test_only_timeout_cases_run_under_a_tight_wall_clock() -> None:
    runs = [case for case in CASES if case.expect.stage == "run" and case.expect.error != "Timeout"]
    tight = [case.name for case in runs if (_wall_ms(case) or 0) < GENEROUS_WALL_MS]
    assert tight == []


@pytest.mark.parametrize(
    "tool",
    [
        "make_run_cases.py",
        "make_area_cases.py",
        "make_budget_cases.py",
        "make_facade_cases.py",
        "make_validation_parity_cases.py",
        "make_runtime_parity_cases.py",
        "make_ext_builtin_cases.py",
        "make_ext_text_cases.py",
        "make_last_index_cases.py",
        "make_owned_list_cases.py",
        "make_owned_map_cases.py",
        "make_owned_string_cases.py",
    ],
)
def test_generator_scripts_reproduce_the_committed_files(tool: str) -> None:
    done = subprocess.run(
        [sys.executable, str(TOOLS / tool), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


def test_the_generated_regression_cases_are_what_write_cases_produces(tmp_path: Path) -> None:
    committed = json.loads(GENERATED_FILE.read_text(encoding="utf-8"))["cases"]
    path = write_cases(tmp_path, len(committed), 1)
    assert path.name == GENERATED_FILE.name
    assert path.read_bytes() == GENERATED_FILE.read_bytes()


def test_every_case_passes_in_process_on_the_reference_backend() -> None:
    report = run_cases(
        CASES, {"reference": InProcessBackend("reference")}, ["reference"], frozenset({"reference"})
    )
    failures = [failure_line(result) for result in report.results if not result.passed]
    assert failures == []
    assert report.passed == len(CASES)


def test_every_case_passes_through_serve() -> None:
    """The whole corpus through the --impl protocol, with our own ``serve`` as the implementation."""
    python = shlex.quote(sys.executable)
    command = [
        sys.executable,
        "-m",
        "dotboxd.cli.main",
        "conformance",
        "run",
        "--impl",
        f"{python} -m dotboxd.cli.main conformance serve",
        "--backend",
        "reference",
        "--format",
        "json",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600, cwd=ROOT)
    assert done.stdout, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    failed = [result["name"] for result in report["results"] if not result["passed"]]
    assert failed == []
    assert done.returncode == 0, done.stderr
    assert report["total"] == report["passed"] == len(CASES)
