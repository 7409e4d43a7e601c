"""The import-stage corpus: well-formed, big enough, covering every import rule, and passing."""

from __future__ import annotations

from collections import Counter

import pytest

from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.loader import CORPUS_ROOT, load_cases
from dotboxd.conformance.model import Case
from dotboxd.conformance.report import failure_line
from dotboxd.conformance.runner import run_cases
from dotboxd.core.codes import all_codes


@pytest.fixture(scope="module")
def import_cases() -> list[Case]:
    return load_cases([CORPUS_ROOT / "import"])


def test_the_whole_corpus_is_well_formed() -> None:
    cases = load_cases()
    assert len({case.name for case in cases}) == len(cases)


def test_the_import_directory_has_at_least_100_cases(import_cases: list[Case]) -> None:
    assert len(import_cases) >= 100
    # the stage directory holds three areas: the importer's rules, its budgets, hostile documents
    assert {case.area for case in import_cases} == {"import", "limits", "hostile-input"}
    assert {case.expect.stage for case in import_cases} == {"import"}


def test_every_import_case_passes_on_the_reference_pipeline(import_cases: list[Case]) -> None:
    report = run_cases(
        import_cases, {"reference": InProcessBackend("reference")}, ["reference"], frozenset({"reference"})
    )
    failures = [failure_line(result) for result in report.results if not result.passed]
    assert failures == []
    assert report.passed == len(import_cases)


def test_every_diagnostic_is_a_registered_code(import_cases: list[Case]) -> None:
    registered = set(all_codes())
    used = {case.expect.diagnostic for case in import_cases if case.expect.diagnostic}
    assert used - registered == set()


def test_every_import_code_has_a_rejecting_case(import_cases: list[Case]) -> None:
    import_codes = {code for code in all_codes() if code.startswith("E-JSON-")}
    import_codes |= {"E-IR-ID", "E-IR-CLR-REF", "E-TEXT-SYNTAX"}
    used = {case.expect.diagnostic for case in import_cases}
    assert import_codes - used == set()


def tagged(cases: list[Case], *tags: str) -> list[Case]:
    return [case for case in cases if set(tags) <= set(case.tags)]


@pytest.mark.parametrize(
    "position",
    [
        "module",
        "function",
        "param",
        "capability-request",
        "statement",
        "expression",
        "literal",
        "opaque-id",
        "type",
        "metadata",
    ],
)
def test_duplicate_keys_are_rejected_at_every_position(import_cases: list[Case], position: str) -> None:
    cases = [
        case for case in tagged(import_cases, "duplicate-key", position) if case.expect.outcome == "rejected"
    ]
    assert cases, f"no rejecting duplicate-key case at position {position}"
    assert {case.expect.diagnostic for case in cases} == {"E-JSON-SCHEMA"}


@pytest.mark.parametrize(
    "kind", ["unit", "bool", "i32", "i64", "f64", "string", "guid", "opaque-id", "path", "uri"]
)
def test_every_literal_kind_has_accepting_and_rejecting_cases(import_cases: list[Case], kind: str) -> None:
    outcomes = Counter(case.expect.outcome for case in tagged(import_cases, "literal", kind))
    assert outcomes["ok"] >= 1 and outcomes["rejected"] >= 1


@pytest.mark.parametrize(
    ("tag", "minimum"),
    [
        ("comment", 3),
        ("trailing-comma", 2),
        ("non-finite", 3),
        ("utf8", 5),
        ("bom", 2),
        ("surrogate", 4),
        ("whitespace", 3),
    ],
)
def test_strictness_rules_are_covered(import_cases: list[Case], tag: str, minimum: int) -> None:
    assert len(tagged(import_cases, "strict-json", tag)) >= minimum


@pytest.mark.parametrize(
    ("kind", "tags"),
    [
        ("module", ("unknown-property", "missing-property", "wrong-kind")),
        ("function", ("unknown-property", "missing-property", "wrong-kind")),
        ("param", ("unknown-property", "missing-property", "wrong-kind")),
        ("capability-request", ("unknown-property", "missing-property", "wrong-kind")),
        ("type", ("unknown-property", "missing-property", "wrong-kind")),
        ("statement", ("unknown-property", "missing-property", "wrong-kind")),
        ("expression", ("unknown-property", "missing-property", "wrong-kind", "unknown-op", "unknown-shape")),
        ("opaque-id", ("unknown-property", "missing-property", "wrong-kind")),
    ],
)
def test_every_object_kind_has_shape_cases(
    import_cases: list[Case], kind: str, tags: tuple[str, ...]
) -> None:
    missing = [tag for tag in tags if not tagged(import_cases, kind, tag)]
    assert missing == [], f"no {', '.join(missing)} case for {kind}"
