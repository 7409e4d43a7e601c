"""Every threat table in threat-model/*.md names tests that exist, and every threat names one.

A table is any Markdown table whose header is exactly ``id | threat | defending tests``; a test
reference is ``tests/<path>.py::name`` or ``tests/<path>.py::Class::name``. Existence is checked by
parsing the test file's AST (a top-level ``test_*`` function, or a method of a top-level class), so
the check is fast and does not import the tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.threat_model.tables import ROOT, Row, all_rows, parse_tables


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"{node.name}::{item.name}")
    return names


def problems(rows: list[Row], root: Path) -> list[str]:
    """Everything wrong with ``rows``: unnamed ids, duplicates, rows without tests, missing tests."""
    found: list[str] = []
    seen: dict[str, str] = {}
    cache: dict[Path, set[str] | None] = {}
    for row in rows:
        where = f"{row.source}: {row.threat_id or '(no id)'}"
        if not row.threat_id:
            found.append(f"{where}: a threat row without an id")
        elif row.threat_id in seen:
            found.append(f"{where}: id already used in {seen[row.threat_id]}")
        else:
            seen[row.threat_id] = row.source
        if not row.tests:
            found.append(f"{where}: no defending test")
        for reference in row.tests:
            file_part, name = reference.split("::", 1)
            path = root / file_part
            if path not in cache:
                cache[path] = _defined(path) if path.is_file() else None
            defined = cache[path]
            if defined is None:
                found.append(f"{where}: {file_part} does not exist")
            elif name not in defined or not name.split("::")[-1].startswith("test"):
                found.append(f"{where}: {reference} is not a test in that file")
    return found


def test_every_threat_names_existing_tests() -> None:
    rows = all_rows()
    assert problems(rows, ROOT) == []


def test_the_import_threats_are_in_the_table() -> None:
    ids = {row.threat_id for row in all_rows()}
    assert {f"T-IMP-{n:02d}" for n in range(1, 16)} <= ids


# --- the checker itself must catch what it claims to catch -----------------------------------


@pytest.fixture
def fake_repo(tmp_path: Path) -> Path:
    tests = tmp_path / "tests" / "demo"
    tests.mkdir(parents=True)
    (tests / "test_demo.py").write_text(
        "def test_real():\n    pass\n\nclass TestGroup:\n    def test_method(self):\n        pass\n\ndef helper():\n    pass\n",
        encoding="utf-8",
    )
    return tmp_path


TABLE = """
Some prose | with a pipe.

| id | threat | defending tests |
|---|---|---|
{rows}

| id | something else |
|---|---|
| X-1 | not a threat table, ignored |
"""


def check(fake_repo: Path, *rows: str) -> list[str]:
    return problems(parse_tables(TABLE.format(rows="\n".join(rows)), "demo.md"), fake_repo)


def test_existing_functions_and_methods_are_accepted(fake_repo: Path) -> None:
    rows = parse_tables(
        TABLE.format(
            rows="| T-1 | a | `tests/demo/test_demo.py::test_real`, `tests/demo/test_demo.py::TestGroup::test_method` |"
        ),
        "demo.md",
    )
    assert [row.threat_id for row in rows] == ["T-1"]
    assert rows[0].tests == (
        "tests/demo/test_demo.py::test_real",
        "tests/demo/test_demo.py::TestGroup::test_method",
    )
    assert problems(rows, fake_repo) == []


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("| T-1 | a | `tests/demo/test_demo.py::test_gone` |", "test_gone is not a test in that file"),
        ("| T-1 | a | `tests/demo/test_missing.py::test_real` |", "test_missing.py does not exist"),
        ("| T-1 | a | `tests/demo/test_demo.py::helper` |", "helper is not a test in that file"),
        (
            "| T-1 | a | `tests/demo/test_demo.py::TestGroup::test_nope` |",
            "TestGroup::test_nope is not a test",
        ),
        ("| T-1 | a | none yet |", "no defending test"),
        ("| T-1 | a | |", "no defending test"),
        ("|  | a | `tests/demo/test_demo.py::test_real` |", "a threat row without an id"),
    ],
)
def test_broken_rows_are_reported(fake_repo: Path, row: str, message: str) -> None:
    found = check(fake_repo, row)
    assert len(found) == 1 and message in found[0]


def test_duplicate_ids_are_reported(fake_repo: Path) -> None:
    good = "| T-1 | a | `tests/demo/test_demo.py::test_real` |"
    found = check(fake_repo, good, good)
    assert found == ["demo.md: T-1: id already used in demo.md"]
