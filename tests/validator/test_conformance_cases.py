"""The validate/policy conformance cases: on disk as generated, and each with the expected verdict."""

from __future__ import annotations

import collections
from typing import Any

import pytest

from dotboxd.core.codes import all_codes

from . import case_table
from .helpers import run_case

CASES = case_table.all_cases()


def test_case_files_match_the_table() -> None:
    for rel, cases in case_table.groups().items():
        path = case_table.CASES_DIR / rel
        assert path.read_text(encoding="utf-8") == case_table.render(cases), f"regenerate {rel}"


def test_case_names_are_unique_and_plentiful() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 150


def test_every_rejecting_code_is_registered_and_has_an_accepting_neighbour() -> None:
    registered = all_codes()
    by_tag: dict[str, set[str]] = collections.defaultdict(set)
    for c in CASES:
        code = c["expect"].get("diagnostic")
        if code is not None:
            assert code in registered, code
        for tag in c["tags"]:
            by_tag[tag].add(c["expect"]["outcome"])
    for tag, outcomes in by_tag.items():
        if tag != "validate" and "rejected" in outcomes:
            assert "ok" in outcomes, f"tag {tag} has no accepting case"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_verdict(case: dict[str, Any]) -> None:
    outcome, code, pointer = run_case(case)
    expect = case["expect"]
    assert outcome == expect["outcome"], (outcome, code)
    if outcome == "rejected":
        assert code == expect["diagnostic"]
        if "pointer" in expect:
            assert pointer == expect["pointer"]
