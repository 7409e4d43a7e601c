"""``tests/slow_tests.txt`` names only tests that exist, each once and with a reason.

A stale line (a renamed or deleted test) would silently put nothing in ``make test-slow``, and its
test, under the new name, back into the quick ``make test``: so every line must name a file, or a
test in a file, that is there now. Existence is checked on the AST, like the threat tables'.
"""

from __future__ import annotations

from pathlib import Path

from tests.slow_tests import slow_lines
from tests.threat_model.tables import ROOT
from tests.threat_model.test_mapping import _defined


def problems(entries: list[tuple[int, str, str]], root: Path) -> list[str]:
    """Everything wrong with the list's ``entries``: missing files or tests, repeats, no reason."""
    found: list[str] = []
    seen: set[str] = set()
    for number, reference, reason in entries:
        where = f"slow_tests.txt:{number}: {reference}"
        if reference in seen:
            found.append(f"{where}: listed twice")
        seen.add(reference)
        if not reason:
            found.append(f"{where}: no reason after '#'")
        file_part, sep, name = reference.partition("::")
        path = root / file_part
        if not file_part.startswith("tests/") or not path.is_file():
            found.append(f"{where}: no such test file")
        elif sep and name not in _defined(path):
            found.append(f"{where}: not a test in that file")
    return found


def test_every_slow_list_line_names_an_existing_test() -> None:
    assert problems(slow_lines(), ROOT) == []


def test_the_checker_catches_stale_repeated_and_unexplained_lines(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_real():\n    pass\n", encoding="utf-8")
    entries = [
        (1, "tests/test_a.py::test_real", "real"),
        (2, "tests/test_a.py::test_renamed", "stale"),
        (3, "tests/test_gone.py", "deleted file"),
        (4, "tests/test_a.py::test_real", "again"),
        (5, "tests/test_a.py", ""),
    ]
    found = problems(entries, tmp_path)
    assert [line.split(":", 2)[1] for line in found] == ["2", "3", "4", "5"]
