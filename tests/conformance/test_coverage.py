"""Coverage of the corpus, enforced: every spec-documented code has a rejecting (or failing) case,
every operator and built-in a run case per operand type it accepts, every limit a case at N and at
N+1, every error category and every fixture behaviour a case - or an honest, checked reason why the
case format cannot express it. The measuring code itself is tested on small corpora that lack
something, so this test can fail."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from dotboxd.cli.main import main
from dotboxd.conformance import coverage
from dotboxd.conformance.coverage import (
    LIMIT_CODES,
    UNREACHABLE_CATEGORIES,
    UNREACHABLE_CODES,
    UNREACHABLE_LIMITS,
    CoverageReport,
    limit_tags,
    measure,
    policy_limit_names,
    spec_documented_codes,
)
from dotboxd.conformance.loader import load_cases
from dotboxd.conformance.model import CATEGORIES, Case
from dotboxd.core.codes import all_codes
from dotboxd.validator.policy import Limits
from tests.conformance.helpers import write_cases
from tests.corpus_cases import corpus_cases

CASES = list(corpus_cases())


@pytest.fixture(scope="module")
def report() -> CoverageReport:
    return measure(CASES)


@pytest.mark.parametrize("section", coverage.SECTIONS)
def test_nothing_required_is_missing(report: CoverageReport, section: str) -> None:
    missing = [item.key for item in report.section(section) if item.missing]
    assert missing == [], f"{section}: no case exercises {missing}"


def test_every_run_case_was_analysed(report: CoverageReport) -> None:
    assert report.unanalysed == []


def test_the_unreachable_codes_are_real_documented_and_really_absent() -> None:
    documented = spec_documented_codes()
    assert documented is not None, "spec/ must be present in a source checkout"
    pinned = {case.expect.diagnostic for case in CASES}
    for code in UNREACHABLE_CODES:
        assert code in all_codes(), f"{code} is not a registered code"
        assert code in documented, f"{code} is not documented in spec/, so it needs no exemption"
        assert code not in pinned, f"{code} has a case: remove it from UNREACHABLE_CODES"
    assert len(UNREACHABLE_CODES) <= 20


def test_the_unreachable_categories_and_limits_are_real_and_absent() -> None:
    pinned = {case.expect.error for case in CASES}
    for category in UNREACHABLE_CATEGORIES:
        assert category in CATEGORIES and category not in pinned, category
    tagged = {name for case in CASES for name in limit_tags(case)}
    for name in UNREACHABLE_LIMITS:
        assert name in policy_limit_names() or name in ("structDepth", "canonicalUnits"), name
        assert name not in tagged, f"{name} has cases: remove it from UNREACHABLE_LIMITS"


def test_every_policy_limit_is_either_covered_or_explained() -> None:
    names = policy_limit_names()
    assert len(names) == len(dataclasses.fields(Limits))
    assert set(names) <= set(LIMIT_CODES) | set(UNREACHABLE_LIMITS)


# the ResourceUsage counter each policy limit bounds (pinned counters of a limit case are checked)
COUNTER_OF = {
    "maxFuel": "fuelUsed",
    "maxLoopIterations": "loopIterations",
    "maxHostCalls": "hostCalls",
    "maxAllocatedBytes": "allocatedBytes",
    "maxTotalCollectionElements": "collectionElements",
    "maxTotalStringBytes": "stringBytes",
}


# counters of attempts (spec/costs.md section 9): at N + 1 they count the refused attempt too
ATTEMPT_COUNTERS = frozenset({"loopIterations", "hostCalls"})


def _pinned(case: Case, counter: str) -> int | None:
    if counter == "fuelUsed":
        return case.expect.fuel_used
    return (case.expect.usage or {}).get(counter)


@pytest.mark.parametrize(
    "case", [c for c in CASES if limit_tags(c)], ids=[c.name for c in CASES if limit_tags(c)]
)
def test_limit_cases_sit_where_they_claim(case: Case) -> None:
    sides = {"at-limit", "over-limit"} & set(case.tags)
    if not sides:
        return  # e.g. the hostile budget floods: tagged with their budget, not a boundary
    assert len(sides) == 1, "a case is at N or at N+1, not both"
    for name in limit_tags(case):
        code = LIMIT_CODES[name]
        if "over-limit" in sides:
            assert case.expect.diagnostic == code, f"an N+1 case of {name} must expect {code}"
        else:
            assert case.expect.diagnostic != code, f"an N case of {name} must not be refused by it"
        counter = COUNTER_OF.get(name)
        limit = case.raw.get("policy", {}).get("limits", {}).get(name)
        if counter is None or limit is None or _pinned(case, counter) is None:
            continue
        pinned = _pinned(case, counter)
        assert pinned is not None
        if "at-limit" in sides:
            assert pinned == limit, f"at N the {counter} pinned ({pinned}) must be the limit ({limit})"
        elif counter in ATTEMPT_COUNTERS:
            assert pinned == limit + 1, f"the refused attempt is counted: {counter} is the limit + 1"
        else:
            assert pinned <= limit, f"a refused amount is not recorded: {counter} stays within the limit"


# --- the measuring code, on corpora that lack things ------------------------------------------------


def _run_case(name: str, body: str, sig: str, args: list[Any], value: Any) -> dict[str, Any]:
    return {
        "name": name,
        "kernelText": f'module "t" version "1.0.0";\nentrypoint fn {sig} {{\n{body}\n}}\n',
        "args": args,
        "expect": {"stage": "run", "outcome": "ok", "value": value},
    }


def test_operand_types_come_from_the_plan(tmp_path: Path) -> None:
    write_cases(
        tmp_path,
        "cases/arith/a.json",
        _run_case("adds-i64", "return a + b;", "main(a I64, b I64) -> I64", [1, 2], 3),
        _run_case("dead-code-is-not-counted", "return 1;\nx = 2.5 * 2.0;", "main() -> I32", [], 1),
    )
    found = measure(load_cases([tmp_path / "cases"]))
    ops = {item.key: len(item.cases) for item in found.section("operators")}
    assert ops["add:I64"] == 1
    assert ops["add:I32"] == 0 and ops["mul:F64"] == 0
    assert "add:I32" in {item.key for item in found.missing()}


def test_regression_cases_never_count_as_coverage(tmp_path: Path) -> None:
    recorded = _run_case("recorded", "return a + b;", "main(a I64, b I64) -> I64", [1, 2], 3)
    write_cases(tmp_path, "cases/generated/a.json", {**recorded, "tags": ["generated", "regression"]})
    found = measure(load_cases([tmp_path / "cases"]))
    assert found.areas == {"generated": 1}
    assert {item.key: item.cases for item in found.section("operators")}["add:I64"] == ()


def test_builtin_operands_are_element_and_key_kinds(tmp_path: Path) -> None:
    write_cases(
        tmp_path,
        "cases/collections/a.json",
        _run_case(
            "string-list",
            "xs = list.of(a);\nm = map.set(map.empty[Map<Bool, I32>](), true, 1);\nreturn list.count(xs);",
            "main(a String) -> I32",
            ["x"],
            1,
        ),
    )
    found = {item.key for item in measure(load_cases([tmp_path / "cases"])).section("builtins") if item.cases}
    assert {"list.of:String", "list.count:String", "map.empty:Bool", "map.set:Bool"} <= found
    assert "list.of:I32" not in found


def test_codes_categories_limits_and_behaviours_need_pinning_cases(tmp_path: Path) -> None:
    write_cases(
        tmp_path,
        "cases/misc/a.json",
        {
            "name": "fuel-over",
            "kernelText": 'module "t" version "1.0.0";\nentrypoint fn main() -> I32 { return 1 + 2; }\n',
            "tags": ["limit:maxFuel", "over-limit"],
            "policy": {"limits": {"maxFuel": 3}},
            "expect": {
                "stage": "run",
                "outcome": "error",
                "error": "QuotaExceeded",
                "diagnostic": "R-QUOTA-FUEL",
            },
        },
        {
            "name": "loops-over-without-the-limit-code",
            "kernelText": 'module "t" version "1.0.0";\nentrypoint fn main() -> I32 { return 1 + 2; }\n',
            "tags": ["limit:maxLoopIterations", "over-limit"],
            "expect": {"stage": "run", "outcome": "ok", "value": 3},
        },
    )
    found = measure(load_cases([tmp_path / "cases"]))
    covered = {item.key for item in found.items if item.cases}
    assert {"R-QUOTA-FUEL", "QuotaExceeded", "maxFuel at N+1"} <= covered
    # an over-limit tag without the limit's code does not count; nothing is at N yet
    assert "maxLoopIterations at N+1" not in covered and "maxFuel at N" not in covered
    assert {"Timeout", "E-JSON-LIMIT", "sequence"} <= {item.key for item in found.missing()}


def test_the_cli_prints_the_coverage_and_fails_when_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conformance", "coverage"]) == 0
    out = capsys.readouterr().out
    assert "COMPLETE" in out and "operators:" in out and "n/a      R-CANCELLED" in out
    write_cases(tmp_path, "cases/arith/a.json", _run_case("one", "return a;", "main(a I32) -> I32", [1], 1))
    assert main(["conformance", "coverage", str(tmp_path / "cases"), "--format", "json"]) == 1
    data = capsys.readouterr().out
    assert '"missing"' in data and "add:I32" in data


def test_a_module_function_shadowing_a_builtin_is_not_built_in_coverage() -> None:
    # module functions resolve first: a call of the module's own math.abs exercises no built-in
    from dotboxd.host import SandboxHost

    source = (
        'module "t" version "1.0.0";\n'
        "entrypoint fn main() -> I32 {\nreturn math.abs(-5) + math.max(1, 2);\n}\n"
        "fn math.abs(x I32) -> I32 {\nreturn x;\n}\n"
    )
    plan = SandboxHost().prepare(source)
    builtins = {value.split(":")[0] for kind, value in coverage._features(plan) if kind == "builtin"}
    assert builtins == {"math.max"}
