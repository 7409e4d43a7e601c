"""``dotboxd conformance run``: failures reported, summary by area, JSON shape, exit codes, honesty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dotboxd.cli.main import main
from dotboxd.conformance import availability, pipeline, stage_validate
from tests.conformance.helpers import ACTUAL_KEYS, case, write_cases

BAD_EXPECTATION = {"stage": "import", "outcome": "rejected", "diagnostic": "E-JSON-LIMIT"}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Two areas: import (one pass, one deliberate failure) and validate (one tagged case)."""
    write_cases(
        tmp_path,
        "cases/import/a.json",
        case("passes", tags=["good"]),
        case("wrongly-expects-rejection", expect=BAD_EXPECTATION, tags=["bad"]),
    )
    write_cases(tmp_path, "cases/other/b.json", case("other-area-passes", tags=["good"]))
    return tmp_path / "cases"


@pytest.fixture
def no_optimized(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the optimized backend absent whatever the tree holds, so the honesty rules are tested."""
    table = dict(availability._BACKEND_MODULES)
    table["optimized"] = "dotboxd.runtime.no_such_backend_for_tests"
    monkeypatch.setattr(availability, "_BACKEND_MODULES", table)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["conformance", "run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_passing_corpus_exits_0_with_a_summary(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, out, _ = run(capsys, str(corpus), "--tag", "good", "--backend", "reference")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["area", "results", "passed", "failed"]
    assert ["import", "1", "1", "0"] in [line.split() for line in lines]
    assert ["other", "1", "1", "0"] in [line.split() for line in lines]
    assert ["total", "2", "2", "0"] in [line.split() for line in lines]
    assert lines[-1] == "PASS"
    assert "FAIL" not in out


def test_a_failing_case_is_reported_and_exits_1(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, out, _ = run(capsys, str(corpus), "--backend", "reference")
    assert code == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert fails == [
        'FAIL wrongly-expects-rejection [reference]: stage/outcome: expected "import/rejected", got "import/ok"'
    ]
    assert ["import", "2", "1", "1"] in [line.split() for line in out.splitlines()]
    assert out.splitlines()[-1] == "FAILED: 1 of 3"


def test_json_format_has_the_contract_keys(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, out, _ = run(capsys, str(corpus), "--format", "json", "--backend", "reference")
    assert code == 1
    report = json.loads(out)
    assert {"total", "passed", "failed", "results"} <= set(report)
    assert (report["total"], report["passed"], report["failed"]) == (3, 2, 1)
    by_name = {result["name"]: result for result in report["results"]}
    assert set(by_name) == {"passes", "wrongly-expects-rejection", "other-area-passes"}
    for result in report["results"]:
        assert {"name", "backend", "passed", "actual"} <= set(result)
        assert result["backend"] == "reference"
        assert set(result["actual"]) >= ACTUAL_KEYS
    failing = by_name["wrongly-expects-rejection"]
    assert failing["passed"] is False
    assert failing["actual"]["outcome"] == "ok"
    assert failing["mismatches"] == [
        {"field": "stage/outcome", "expected": "import/rejected", "actual": "import/ok"}
    ]
    assert by_name["passes"]["passed"] is True and by_name["passes"]["mismatches"] == []


def test_name_and_tag_filters(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, out, _ = run(capsys, str(corpus), "--name", "pass*", "--format", "json", "--backend", "reference")
    assert code == 0
    assert [r["name"] for r in json.loads(out)["results"]] == ["passes"]
    code, out, _ = run(capsys, str(corpus), "--tag", "bad", "--format", "json", "--backend", "reference")
    assert code == 1
    assert [r["name"] for r in json.loads(out)["results"]] == ["wrongly-expects-rejection"]


def test_area_filter(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, out, _ = run(capsys, str(corpus), "--area", "other", "--format", "json", "--backend", "reference")
    assert code == 0
    assert [(r["name"], r["area"]) for r in json.loads(out)["results"]] == [("other-area-passes", "other")]


def test_the_summary_lists_the_corpus_areas_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "--area",
        "types",
        "--area",
        "import",
        "--tag",
        "literal",
        "--tag",
        "equality",
        "--backend",
        "reference",
    )
    assert code == 0
    rows = [
        line.split()[0]
        for line in out.splitlines()
        if line.split() and line.split()[0] in ("import", "types")
    ]
    assert rows == ["import", "types"]


def test_generate_writes_loadable_regression_cases(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(["conformance", "generate", "--count", "3", "--seed", "11", str(tmp_path / "out")])
    assert code == 0
    assert "wrote 3 generated case(s)" in capsys.readouterr().out
    path = tmp_path / "out" / "generated-seed-11.json"
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    assert [c["name"] for c in cases] == ["gen-s11-0000", "gen-s11-0001", "gen-s11-0002"]
    assert all("regression" in c["tags"] for c in cases)
    code, out, _ = run(capsys, str(path), "--backend", "reference")
    assert code == 0 and "PASS" in out


def test_generate_refuses_a_negative_count(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["conformance", "generate", "--count", "-1", "--seed", "0", str(tmp_path)]) == 2
    assert "--count must be >= 0" in capsys.readouterr().err


def test_no_matching_case_is_a_usage_error(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, _, err = run(capsys, str(corpus), "--name", "nothing-like-this")
    assert code == 2
    assert "no cases match" in err


def test_a_malformed_corpus_exits_2_naming_every_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_cases(tmp_path, "cases/import/a.json", case("x", expect=None), case("y", colour=1))
    code, out, err = run(capsys, str(tmp_path))
    assert code == 2
    assert out == ""
    assert "missing 'expect'" in err and "unknown case key(s) 'colour'" in err


def test_an_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, _, _ = run(capsys, str(corpus), "--backend", "fastest")
    assert code == 2


@pytest.mark.usefixtures("no_optimized")
def test_a_missing_backend_asked_for_explicitly_fails_every_case(
    capsys: pytest.CaptureFixture[str], corpus: Path
) -> None:
    code, out, _ = run(capsys, str(corpus), "--backend", "optimized", "--tag", "good", "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["failed"] == report["total"] == 2
    assert {r["actual"]["outcome"] for r in report["results"]} == {"unsupported"}
    assert "optimized" in report["unavailable"]


@pytest.mark.usefixtures("no_optimized")
def test_all_means_the_backends_this_build_has(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    code, out, _ = run(capsys, str(corpus), "--tag", "good")
    assert code == 0
    assert "backends: reference" in out
    assert "not available: optimized" in out


@pytest.mark.usefixtures("no_optimized")
def test_a_case_that_names_a_missing_backend_fails_on_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_cases(tmp_path, "cases/run/a.json", case("needs-both", backends=["reference", "optimized"]))
    code, out, _ = run(capsys, str(tmp_path), "--format", "json")
    assert code == 1
    results = {r["backend"]: r for r in json.loads(out)["results"]}
    assert results["reference"]["passed"] is True
    assert results["optimized"]["passed"] is False
    assert results["optimized"]["actual"]["outcome"] == "unsupported"


def test_a_case_for_other_backends_is_listed_as_not_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_cases(tmp_path, "cases/run/a.json", case("optimized-only", backends=["optimized"]), case("any"))
    code, out, _ = run(capsys, str(tmp_path), "--backend", "reference", "--format", "json")
    report = json.loads(out)
    assert code == 0
    assert report["notRun"] == ["optimized-only"]
    assert [r["name"] for r in report["results"]] == ["any"]


def test_a_stage_that_fails_to_load_is_a_crash_not_a_pass(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stages are plain imports now; a stage whose code cannot load what it needs still ends
    the case as a failure (a crash with the exception's name), never as a pass or ``unsupported``."""

    def missing(*args: Any) -> Any:
        raise ModuleNotFoundError("No module named 'dotboxd.validator.api'")

    monkeypatch.setattr(stage_validate, "validate", missing)
    write_cases(
        tmp_path,
        "cases/validate/a.json",
        case("needs-validation", expect={"stage": "validate", "outcome": "ok"}),
    )
    code, out, _ = run(capsys, str(tmp_path), "--backend", "reference")
    assert code == 1
    assert 'got "validate/crash"' in out
    assert "ModuleNotFoundError" in out


def test_an_importer_crash_is_a_failure_not_a_traceback(
    capsys: pytest.CaptureFixture[str], corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(raw: Any, where: str) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(pipeline, "import_stage", explode)
    code, out, _ = run(capsys, str(corpus), "--name", "passes", "--format", "json")
    assert code == 1
    actual = json.loads(out)["results"][0]["actual"]
    assert actual["outcome"] == "crash"
    assert "RecursionError" in actual["message"]
