"""Reading the threat tables of threat-model/*.md: the one source of truth for the security suite.

A table is any Markdown table whose header is exactly ``id | threat | defending tests``; a test
reference is ``tests/<path>.py::name`` or ``tests/<path>.py::Class::name``. The mapping test checks
that every reference exists, and ``tests/conftest.py`` marks every test a row names as
``security_boundary``, so adding a row is all it takes to put a test in the suite. This module imports
nothing from the tests themselves, so the conftest can use it during collection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THREAT_DIR = ROOT / "threat-model"
HEADER = ["id", "threat", "defending tests"]
REFERENCE = re.compile(r"(tests/[\w/.-]+\.py)::([A-Za-z_]\w*(?:::[A-Za-z_]\w*)?)")


@dataclass(frozen=True)
class Row:
    source: str
    threat_id: str
    tests: tuple[str, ...]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_tables(text: str, source: str) -> list[Row]:
    """The rows of every ``id | threat | defending tests`` table in ``text``."""
    rows: list[Row] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith("|") and [c.lower() for c in _cells(line)] == HEADER:
            index += 2  # skip the header and its |---| separator
            while index < len(lines) and lines[index].lstrip().startswith("|"):
                cells = _cells(lines[index])
                tests = tuple(
                    f"{path}::{name}" for path, name in REFERENCE.findall(cells[2] if len(cells) > 2 else "")
                )
                rows.append(Row(source, cells[0], tests))
                index += 1
            continue
        index += 1
    return rows


def all_rows(threat_dir: Path = THREAT_DIR) -> list[Row]:
    """Every threat row of every table in ``threat_dir``, in file order."""
    rows: list[Row] = []
    for path in sorted(threat_dir.glob("*.md")):
        rows.extend(parse_tables(path.read_text(encoding="utf-8"), path.name))
    return rows


def base_id(nodeid: str) -> str:
    """A pytest node id without its parametrization (``a.py::t[x-1]`` -> ``a.py::t``)."""
    file_part, sep, rest = nodeid.partition("::")
    return file_part + sep + rest.split("[", 1)[0]


def is_named(nodeid: str, references: frozenset[str]) -> bool:
    """Whether a collected test is named by a reference: exactly, or through its class or file.

    ``nodeid`` is relative to the repository root. A reference to a parametrized test covers every
    parameter set; a reference to ``file::Class`` covers the class's tests.
    """
    base = base_id(nodeid)
    parts = base.split("::")
    return any("::".join(parts[:n]) in references for n in range(1, len(parts) + 1))


def suite_references(threat_dir: Path = THREAT_DIR) -> frozenset[str]:
    """Every test reference named by any threat row: the membership of the security suite."""
    return frozenset(reference for row in all_rows(threat_dir) for reference in row.tests)
