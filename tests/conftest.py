"""Shared test configuration: Hypothesis profiles and the security-boundary suite.

``CI=true`` selects the bounded "ci" profile so the whole suite stays well under 15 minutes on two
cores; ``DOTBOXD_DEEP=1`` selects a long local fuzzing profile; otherwise "dev" is used.

``slow`` marks the tests ``make test`` leaves to ``make test-slow`` (CI runs both): a test file may
write ``@pytest.mark.slow``, and ``tests/slow_tests.txt`` lists the rest by name, with the measured
reason, so that marking a test slow needs no edit of a file other engineers are changing.

The ``security_boundary`` marker is never written on a test by hand: a test belongs to the suite
exactly when a row of a threat table in ``threat-model/*.md`` names it (see
``tests/threat_model/tables.py``), so the tables stay the one source of truth and a new row joins
the suite with no extra step. ``make test`` runs ``pytest -m security_boundary`` as its own step; that
run ends with a ``security-boundary: N passed`` line.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.slow_tests import slow_references
from tests.threat_model.tables import ROOT, is_named, suite_references

SECURITY_MARK = "security_boundary"
COLLECTED = pytest.StashKey[tuple[frozenset[str], frozenset[str]]]()
"""What this session collected before any deselection: (files, node ids marked security_boundary)."""

settings.register_profile(
    "ci", max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("deep", max_examples=5_000, deadline=None, suppress_health_check=list(HealthCheck))

if os.environ.get("DOTBOXD_DEEP") == "1":
    settings.load_profile("deep")
elif os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")
else:
    settings.load_profile("dev")


@functools.cache
def _relative_file(path: Path) -> str | None:
    """``path`` relative to the repository root (None outside it); cached, because resolving each of
    ~10,000 items' paths cost every pytest-xdist worker seconds of collection."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None


def _relative_nodeid(item: pytest.Item) -> str:
    """The node id relative to the repository root, whatever directory pytest was started from."""
    file_part = _relative_file(item.path)
    if file_part is None:
        return item.nodeid
    _, sep, rest = item.nodeid.partition("::")
    return file_part + sep + rest


@functools.cache
def _wholly_slow_files() -> frozenset[str]:
    """Test files every test of which is ``slow`` and no threat table names: the benchmarks folder
    and the whole-file lines of ``tests/slow_tests.txt``."""
    listed = {reference for reference in slow_references() if "::" not in reference}
    benchmarks = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "benchmarks").glob("test_*.py")}
    named = {reference.split("::", 1)[0] for reference in suite_references()}
    return frozenset((listed | benchmarks) - named)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"`` (make test), do not import the files whose every test that marker
    would deselect anyway: each pytest-xdist worker imported them (benchmark workloads built at import
    among them) only to drop every test. The selected tests are exactly the same; files a threat table
    names are still collected, so the security suite's own check sees every file it names."""
    if config.getoption("markexpr") != "not slow":
        return None
    return True if _relative_file(collection_path) in _wholly_slow_files() else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test a threat table names, and every test ``tests/slow_tests.txt`` names ``slow``
    (before ``-m`` deselects anything)."""
    references = suite_references()
    slow = slow_references()
    files: set[str] = set()
    marked: set[str] = set()
    for item in items:
        nodeid = _relative_nodeid(item)
        files.add(nodeid.split("::", 1)[0])
        if is_named(nodeid, references):
            item.add_marker(SECURITY_MARK)
        if is_named(nodeid, slow):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker(SECURITY_MARK) is not None:
            marked.add(nodeid)
    config.stash[COLLECTED] = (frozenset(files), frozenset(marked))


def _in_suite(report: object) -> bool:
    """Whether a test report (from this process or an xdist worker) is of a security-boundary test."""
    return SECURITY_MARK in getattr(report, "keywords", {})


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Print the security suite's own count for every run that ran some of it: ``make test`` runs its
    quick part among the other quick tests, ``make test-slow`` its slow part as a step of its own."""
    if config.option.collectonly:
        return
    stats = terminalreporter.stats
    passed = len(
        [r for r in stats.get("passed", []) if getattr(r, "when", "call") == "call" and _in_suite(r)]
    )
    failed = len([r for r in stats.get("failed", []) + stats.get("error", []) if _in_suite(r)])
    if passed == failed == 0:
        return
    line = f"security-boundary: {passed} passed"
    terminalreporter.write_line(line + (f", {failed} failed" if failed else ""))
