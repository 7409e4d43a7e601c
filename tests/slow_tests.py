"""Reading ``tests/slow_tests.txt``: the tests ``tests/conftest.py`` marks ``slow``.

One reference a line (``tests/<path>.py``, ``tests/<path>.py::name`` or ``::Class::name``; a
parametrized test's name covers all its parameter sets), then ``#`` and why it is slow. Like
``tests/threat_model/tables.py`` this module imports nothing from the tests, so the conftest can use
it during collection; ``tests/architecture/test_slow_list.py`` checks that every line names a test.
"""

from __future__ import annotations

from pathlib import Path

LIST = Path(__file__).resolve().parent / "slow_tests.txt"


def slow_lines(path: Path = LIST) -> list[tuple[int, str, str]]:
    """Each entry of the list: (line number, reference, reason)."""
    entries: list[tuple[int, str, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        reference, _, reason = line.partition("#")
        if reference.strip():
            entries.append((number, reference.strip(), reason.strip()))
    return entries


def slow_references(path: Path = LIST) -> frozenset[str]:
    """The references of the list, for ``tests.threat_model.tables.is_named``."""
    return frozenset(reference for _, reference, _ in slow_lines(path))
