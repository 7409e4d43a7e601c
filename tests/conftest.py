"""Shared test configuration: Hypothesis profiles and the security-boundary suite.

``CI=true`` selects the bounded "ci" profile so the whole suite stays well under 15 minutes on two
cores; ``DOTBOXD_DEEP=1`` selects a long local fuzzing profile; otherwise "dev" is used.

The ``security_boundary`` marker is never written on a test by hand: a test belongs to the suite
exactly when a row of a threat table in ``threat-model/*.md`` names it (see
``tests/threat_model/tables.py``), so the tables stay the one source of truth and a new row joins
the suite with no extra step. ``make test`` runs ``pytest -m security_boundary`` as its own step; that
run ends with a ``security-boundary: N passed`` line.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

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


def _relative_nodeid(item: pytest.Item) -> str:
    """The node id relative to the repository root, whatever directory pytest was started from."""
    path = item.path.resolve()
    try:
        file_part = path.relative_to(ROOT).as_posix()
    except ValueError:
        return item.nodeid
    _, sep, rest = item.nodeid.partition("::")
    return file_part + sep + rest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test a threat table names (before ``-m`` deselects anything)."""
    references = suite_references()
    files: set[str] = set()
    marked: set[str] = set()
    for item in items:
        nodeid = _relative_nodeid(item)
        files.add(nodeid.split("::", 1)[0])
        if is_named(nodeid, references):
            item.add_marker(SECURITY_MARK)
        if item.get_closest_marker(SECURITY_MARK) is not None:
            marked.add(nodeid)
    config.stash[COLLECTED] = (frozenset(files), frozenset(marked))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Print the suite's own count when the run is the security-boundary step (``-m security_boundary``)."""
    if config.option.collectonly or (config.option.markexpr or "").strip() != SECURITY_MARK:
        return
    stats = terminalreporter.stats
    passed = len([r for r in stats.get("passed", []) if getattr(r, "when", "call") == "call"])
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    line = f"security-boundary: {passed} passed"
    terminalreporter.write_line(line + (f", {failed} failed" if failed else ""))
