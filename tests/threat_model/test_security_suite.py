"""The security-boundary suite is exactly the tests the threat tables name, and it really runs them.

Membership is derived (``tests/conftest.py`` marks what ``threat-model/*.md`` names), so these tests
check the derivation end to end: a real ``pytest --collect-only -m security_boundary`` over the named
files must yield at least one test for every threat, and nobody may put the marker on a test by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import COLLECTED
from tests.threat_model.tables import ROOT, all_rows, is_named, suite_references

MARK = "security_boundary"


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def collected_marked(config: pytest.Config, files: list[str]) -> frozenset[str]:
    """Node ids pytest really collects and marks ``security_boundary`` in ``files``.

    When this session already collected every one of ``files`` (``make test`` collects the whole
    tree), its own record is used; otherwise a separate ``--collect-only`` run produces it.
    """
    session_files, session_marked = config.stash.get(COLLECTED, (frozenset(), frozenset()))
    if set(files) <= session_files:
        return frozenset(n for n in session_marked if n.split("::", 1)[0] in files)
    done = _pytest("--collect-only", "-q", "-m", MARK, *files)
    assert done.returncode == 0, done.stdout + done.stderr
    return frozenset(line.strip() for line in done.stdout.splitlines() if "::" in line)


def test_every_threat_has_a_collected_and_marked_test(request: pytest.FixtureRequest) -> None:
    rows = all_rows()
    files = sorted({reference.split("::", 1)[0] for row in rows for reference in row.tests})
    marked = collected_marked(request.config, files)
    missing = [
        f"{row.source}: {row.threat_id}"
        for row in rows
        if not any(is_named(nodeid, frozenset(row.tests)) for nodeid in marked)
    ]
    assert missing == [], "threats with no defending test in the security_boundary suite"
    references = suite_references()
    assert sorted(n for n in marked if not is_named(n, references)) == [], "marked but named by no threat"


def test_the_marker_is_never_applied_by_hand() -> None:
    """Only the threat tables decide membership: a hand-written marker would add an unnamed test."""
    allowed = {ROOT / "tests" / "conftest.py", Path(__file__).resolve()}
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.resolve() not in allowed and f"mark.{MARK}" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_the_suite_step_prints_its_count() -> None:
    named = "tests/threat_model/test_mapping.py::test_every_threat_names_existing_tests"
    done = _pytest("-q", "-m", MARK, named)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "security-boundary: 1 passed" in done.stdout.splitlines()


@pytest.mark.parametrize(
    ("nodeid", "named"),
    [
        ("tests/a/test_x.py::test_one", True),
        ("tests/a/test_x.py::test_one[case-1]", True),
        ("tests/a/test_x.py::test_one[a::b]", True),
        ("tests/a/test_x.py::test_one_more", False),
        ("tests/a/test_x.py::TestGroup::test_two[p]", True),
        ("tests/a/test_x.py::TestGroup::test_three", False),
        ("tests/a/test_x.py::TestWhole::test_any", True),
        ("tests/a/test_y.py::test_one", False),
    ],
)
def test_membership_follows_the_names_exactly(nodeid: str, named: bool) -> None:
    references = frozenset(
        {
            "tests/a/test_x.py::test_one",
            "tests/a/test_x.py::TestGroup::test_two",
            "tests/a/test_x.py::TestWhole",
        }
    )
    assert is_named(nodeid, references) is named
