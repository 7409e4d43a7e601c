"""The corpus file of Python-form cases is what its generator writes, and it runs on both backends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.compare import compare
from dotboxd.conformance.loader import load_cases
from dotboxd.conformance.model import Case

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "conformance" / "cases" / "import" / "python-form.json"
CASES = load_cases([FILE])


def test_python_form_cases_file_is_what_the_generator_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "conformance" / "tools" / "make_python_cases.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("backend", ["reference", "optimized"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_python_form_case_refuses_hostile_python_at_its_line(case: Case, backend: str) -> None:
    assert compare(case.expect, InProcessBackend(backend).evaluate(case)) == []
