"""conformance/README.md stays true: its code mapping lists every registered code exactly once, its
area table every area, its policy section every limit, and its behaviour table every kind."""

from __future__ import annotations

import re

from dotboxd.conformance.areas import AREAS
from dotboxd.conformance.coverage import policy_limit_names
from dotboxd.conformance.loader import CORPUS_ROOT, area_of, case_files
from dotboxd.conformance.shape import BEHAVIOR_PARAMS
from dotboxd.core.codes import all_codes

README = (CORPUS_ROOT.parent / "README.md").read_text(encoding="utf-8")
CODE = re.compile(r"`([EWR]-[A-Z0-9]+(?:-[A-Z0-9]+)*)`")


def section(start: str, end: str) -> str:
    return README[README.index(start) : README.index(end, README.index(start))]


def test_the_code_mapping_lists_every_registered_code_once() -> None:
    mapping = section("### Code mapping", "## 6. The runner")
    theirs = set(CODE.findall(section("**DotBoxD's codes", "**Ours, inside")))
    ours = set(CODE.findall(section("**Ours, inside", "An implementation that reports only")))
    assert theirs and ours
    assert theirs & ours == set()
    # E-PLAN-* in the prose of section 10 is not part of the mapping; only full codes count here
    assert (theirs | ours) == set(all_codes()), sorted(set(all_codes()) ^ (theirs | ours))
    assert set(CODE.findall(mapping)) == theirs | ours


def test_the_area_table_lists_every_area() -> None:
    table = section("| area | what it checks | files |", "To run one area")
    listed = re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.MULTILINE)
    assert listed == list(AREAS)


def _expand(pattern: str) -> list[str]:
    match = re.fullmatch(r"(.*)\{(.*)\}(.*)", pattern)
    if match is None:
        return [pattern]
    head, alternatives, tail = match.groups()
    return [f"{head}{alternative}{tail}" for alternative in alternatives.split(",")]


def test_the_area_table_names_the_files_of_each_area() -> None:
    table = section("| area | what it checks | files |", "To run one area")
    rows = re.findall(r"^\| `([a-z-]+)` \|[^|]*\| (.*) \|$", table, flags=re.MULTILINE)
    assert len(rows) == len(AREAS)
    for area, files in rows:
        listed = {name for pattern in re.findall(r"`([^`]+)`", files) for name in _expand(pattern)}
        actual = {
            path.relative_to(CORPUS_ROOT).as_posix()
            for path in case_files([CORPUS_ROOT])
            if area_of(path) == area
        }
        assert listed == actual, area


def test_the_policy_section_names_every_limit() -> None:
    policy = section("### 2.2 `policy`", "### 2.3")
    for name in policy_limit_names():
        assert f"`{name}`" in policy, name


def test_the_behaviour_table_lists_every_kind() -> None:
    table = section("| kind | parameters | each call |", "A binding without `behavior`")
    listed = re.findall(r"^\| `([a-z-]+)`", table, flags=re.MULTILINE)
    assert listed == list(BEHAVIOR_PARAMS)
