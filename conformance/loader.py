"""Finding and loading case files, and the corpus-wide rules (names unique across every file).

Case files are read with the same suspicion as modules, by the project's one bounded JSON reader: a
duplicate key in a case file would make the case mean whatever the JSON library keeps, so it is an
error, as are NaN, Infinity and nesting, size or token counts past ``CASE_DOCUMENT_BUDGETS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dotboxd.conformance import areas
from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.model import Case
from dotboxd.conformance.shape import check_case
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.jsonread import CASE_DOCUMENT_BUDGETS, read_document_bytes, read_json

CORPUS_ROOT = Path(__file__).resolve().parent / "cases"


def parse_case_json(data: bytes | str, where: str) -> Any:
    """Strict, bounded JSON (``CASE_DOCUMENT_BUDGETS``): no duplicate keys, no NaN/Infinity, no
    nesting, size or token count past the budgets; any of them is a ``CaseFormatError`` naming
    the position."""
    try:
        return read_json(data, CASE_DOCUMENT_BUDGETS)
    except DotBoxDError as error:
        d = error.diagnostic
        at = f" at line {d.span.line}, column {d.span.column}" if d.span else ""
        pointer = f"#{d.pointer}" if d.pointer else ""
        if d.code == "E-JSON-SCHEMA" and "property" in d.evidence:
            key = d.evidence["property"]
            raise CaseFormatError(where + pointer, f"duplicate key {key!r} in the case file{at}") from None
        raise CaseFormatError(where + pointer, f"not valid JSON: {d.message}{at}") from None


def area_of(path: Path) -> str:
    """The area of a case file: its directory below ``cases/``, or for the stage directories
    (``import/``, ``validate/``, ``policy/``, ``run/``) the area ``dotboxd.conformance.areas``
    assigns to the file; outside a ``cases`` tree, the file's parent directory name."""
    return areas.area_of(path, CORPUS_ROOT)


def load_file(path: Path) -> list[Case]:
    """Every case of one file: a single case object or ``{"cases": [...]}`` (all of a file's
    malformed cases are reported together, as a ``CorpusError``)."""
    where = str(path)
    try:
        data = parse_case_json(read_document_bytes(path, CASE_DOCUMENT_BUDGETS), where)
    except OSError as exc:
        raise CaseFormatError(where, f"cannot read: {exc.strerror or type(exc).__name__}") from None
    area = area_of(path)
    if isinstance(data, dict) and set(data) == {"cases"}:
        items = data["cases"]
        if not isinstance(items, list) or not items:
            raise CaseFormatError(where, "'cases' must be a non-empty array")
        cases: list[Case] = []
        errors: list[CaseFormatError] = []
        for index, item in enumerate(items):
            try:
                cases.append(check_case(item, f"{where}#/cases/{index}", area))
            except CaseFormatError as exc:
                errors.append(exc)
        if errors:
            raise CorpusError(errors)
        return cases
    if isinstance(data, dict) and "cases" in data:
        raise CaseFormatError(where, "a file with 'cases' may hold nothing else")
    return [check_case(data, where, area)]


def case_files(paths: Iterable[Path]) -> list[Path]:
    """The ``.json`` files named, or found (sorted, recursively) under named directories."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise CaseFormatError(str(path), "no such file or directory")
    return files


def load_cases(paths: Sequence[Path] | None = None) -> list[Case]:
    """All cases under ``paths`` (default: the whole corpus), each name used once only."""
    files = case_files(paths if paths else [CORPUS_ROOT])
    cases: list[Case] = []
    seen: dict[str, str] = {}
    errors: list[CaseFormatError] = []
    for file in dict.fromkeys(files):
        try:
            loaded = load_file(file)
        except CorpusError as exc:
            errors.extend(exc.errors)
            continue
        except CaseFormatError as exc:
            errors.append(exc)
            continue
        for case in loaded:
            if case.name in seen:
                errors.append(CaseFormatError(case.origin, f"name already used by {seen[case.name]}"))
                continue
            seen[case.name] = case.origin
            cases.append(case)
    if errors:
        raise CorpusError(errors)
    return cases


class CorpusError(CaseFormatError):
    """Several case-format errors at once, so a broken corpus is fixed in one pass."""

    def __init__(self, errors: Sequence[CaseFormatError]) -> None:
        super().__init__(errors[0].where, errors[0].message)
        self.errors = tuple(errors)

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)
