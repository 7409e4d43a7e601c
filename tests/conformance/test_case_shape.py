"""Strict checking of case objects and case files: every malformed case is refused with a clear error."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.loader import CorpusError, area_of, load_cases, load_file
from dotboxd.conformance.shape import check_case
from tests.conformance.helpers import GOOD_MODULE, case, write_cases

REJECTED = {"stage": "import", "outcome": "rejected", "diagnostic": "E-JSON-INVALID"}


def test_a_valid_case_is_typed() -> None:
    checked = check_case(case(tags=["x"], backends=["reference"]), "f.json", "import")
    assert (checked.name, checked.area, checked.source_key) == ("a-case", "import", "moduleText")
    assert checked.tags == ("x",)
    assert checked.backends == ("reference",)
    assert checked.expect.stage == "import" and checked.expect.outcome == "ok"
    assert checked.entrypoint == "main"


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"colour": "red"}, "unknown case key(s) 'colour'"),
        ({"expect": None}, "missing 'expect'"),
        ({"moduleText": None}, "exactly one module source"),
        ({"module": {"id": "m"}}, "exactly one module source"),
        ({"kernelText": "module"}, "exactly one module source"),
        ({"name": "Not_Kebab"}, "kebab-case"),
        ({"name": "trailing-"}, "kebab-case"),
        ({"name": 7}, "kebab-case"),
        ({"description": 1}, "'description' must be a string"),
        ({"tags": ["ok", ""]}, "'tags' must be an array of non-empty strings"),
        ({"backends": ["fast"]}, "unknown backend 'fast'"),
        ({"backends": []}, "must not be empty"),
        ({"args": {"a": 1}}, "'args' must be an array"),
        ({"entrypoint": 3}, "'entrypoint' must be a string"),
        ({"files": {"a.txt": 1}}, "files['a.txt'] must be a string"),
        ({"moduleText": None, "moduleBase64": "!!!"}, "not valid base64"),
        ({"moduleText": None, "module": []}, "'module' must be a JSON object"),
        ({"moduleText": 5}, "'moduleText' must be a string"),
        ({"policy": {"grant": []}}, "unknown policy key(s) 'grant'"),
        ({"policy": {"limits": {"maxFuel": "10"}}}, "policy limit 'maxFuel' must be an integer"),
        ({"policy": {"grants": ["file.read"]}}, "'policy.grants' must be an array of objects"),
        ({"bindings": {}}, "'bindings' must be an array"),
        ({"bindings": [{"id": "b", "cost2": 1}]}, "unknown binding key(s) 'cost2'"),
        ({"bindings": [{"returnType": "I32"}]}, "needs a string 'id'"),
        ({"bindings": [{"id": "b", "behavior": {"kind": "explode"}}]}, "unknown behavior kind 'explode'"),
        ({"bindings": [{"id": "b", "behavior": {"kind": "return"}}]}, "behavior 'return' needs value"),
        (
            {"bindings": [{"id": "b", "behavior": {"kind": "pending", "value": 1}}]},
            "unknown behavior 'pending' key(s)",
        ),
        ({"bindings": [{"id": "b", "behavior": {"kind": "echo", "arg": -1}}]}, "non-negative integer 'arg'"),
        ({"bindings": [{"id": "b", "behavior": {"kind": "sleep", "ms": 1.5}}]}, "non-negative integer 'ms'"),
        ({"bindings": [{"id": "b", "behavior": {"kind": "sequence", "values": 1}}]}, "array 'values'"),
        ({"expect": {"stage": "parse", "outcome": "ok"}}, "'stage' must be one of"),
        ({"expect": {"stage": "import", "outcome": "fine"}}, "'outcome' must be one of"),
        ({"expect": {"stage": "import", "outcome": "ok", "extra": 1}}, "unknown expect key(s) 'extra'"),
        ({"expect": {"stage": "import", "outcome": "rejected"}}, "must name its 'diagnostic'"),
        (
            {"expect": {"stage": "run", "outcome": "rejected", "diagnostic": "E-X-Y"}},
            "a failed run is outcome 'error'",
        ),
        ({"expect": {"stage": "validate", "outcome": "error", "error": "Timeout"}}, "stage must be 'run'"),
        ({"expect": {"stage": "run", "outcome": "error"}}, "must name its 'error' category"),
        (
            {"expect": {"stage": "import", "outcome": "ok", "diagnostic": "E-JSON-X"}},
            "cannot expect a diagnostic",
        ),
        ({"expect": {"stage": "run", "outcome": "ok"}}, "must pin its 'value'"),
        ({"expect": {"stage": "import", "outcome": "ok", "value": 1}}, "'value' only belongs"),
        (
            {"expect": {"stage": "validate", "outcome": "ok", "fuelUsed": 3}},
            "'fuelUsed' only belongs to stage 'run'",
        ),
        ({"expect": {**REJECTED, "diagnostic": "json-invalid"}}, "is not a code like"),
        ({"expect": {"stage": "run", "outcome": "error", "error": "Oops"}}, "'error' must be a category"),
        ({"expect": {**REJECTED, "pointer": "functions/0"}}, "RFC 6901 pointer"),
        ({"expect": {**REJECTED, "line": 0}}, "'line' must be a positive integer"),
        ({"expect": {**REJECTED, "column": True}}, "'column' must be a positive integer"),
        (
            {"moduleText": None, "module": {}, "expect": {**REJECTED, "line": 1}},
            "line/column need a text source",
        ),
        (
            {"expect": {"stage": "run", "outcome": "ok", "value": 1, "usage": {"hostCalls": -1}}},
            "non-negative",
        ),
        ({"moduleText": None, "moduleTextGenerator": {"template": 1}}, "needs a string 'template'"),
    ],
)
def test_malformed_cases_are_refused(overrides: dict[str, Any], fragment: str) -> None:
    with pytest.raises(CaseFormatError) as info:
        check_case(case(**overrides), "f.json", "import")
    assert fragment in str(info.value)


def test_every_optional_field_of_the_format_is_accepted() -> None:
    raw = case(
        description="all of it",
        policy={
            "policyId": "p",
            "limits": {"maxFuel": 1000},
            "allowedEffects": ["Cpu"],
            "grants": [{"id": "file.read", "parameters": {"root": "$ROOT"}}],
            "allowRuntimeAsync": False,
            "deterministic": {"logicalNowUnixMillis": 0, "randomSeed": 7},
            "declaredOpaqueIdTypes": ["PlayerId"],
            "inputBounds": {"main": {"count": [0, 10]}},
            "requireStaticBound": False,
        },
        bindings=[
            {
                "id": "b.return",
                "behavior": {"kind": "return", "value": True},
                "parameters": ["I32"],
                "returnType": "Bool",
            },
            {"id": "b.echo", "behavior": {"kind": "echo", "arg": 0}},
            {"id": "b.seq", "behavior": {"kind": "sequence", "values": [1, 2]}},
            {"id": "b.raise", "behavior": {"kind": "raise", "message": "boom"}},
            {"id": "b.pending", "behavior": {"kind": "pending"}},
            {"id": "b.async", "behavior": {"kind": "async-return", "value": 1}},
            {"id": "b.sleep", "behavior": {"kind": "sleep", "ms": 5}},
            {"id": "b.foreign", "behavior": {"kind": "foreign"}},
            {"id": "b.malformed", "behavior": {"kind": "malformed", "value": "x"}},
        ],
        files={"config/settings.json": "{}"},
        entrypoint="run",
        args=[1, 2],
        expect={
            "stage": "run",
            "outcome": "ok",
            "value": None,
            "fuelUsed": 10,
            "usage": {"hostCalls": 1},
            "bindingCalls": {"b.echo": 1},
        },
    )
    checked = check_case(raw, "f.json", "run")
    assert checked.expect.has_value and checked.expect.value is None
    assert checked.expect.fuel_used == 10
    assert checked.entrypoint == "run"


def test_our_policy_and_binding_additions_are_accepted() -> None:
    raw = case(
        policy={"rejectUnusedGrants": False},
        bindings=[
            {
                "id": "b.abs",
                "compiledTarget": {"kind": "RuntimeStub", "method": "AbsI32"},
                "grantParameters": {"required": [], "optional": []},
                "behavior": {"kind": "refuse", "category": "NotFound", "message": "gone"},
            }
        ],
    )
    checked = check_case(raw, "f.json", "bindings")
    assert checked.raw["policy"] == {"rejectUnusedGrants": False}


def test_all_five_module_sources_are_accepted() -> None:
    sources: list[dict[str, Any]] = [
        {"moduleText": GOOD_MODULE},
        {"module": {"id": "m", "version": "1.0.0", "functions": []}},
        {"kernelText": 'module "m" version "1.0.0";'},
        {"moduleBase64": base64.b64encode(GOOD_MODULE.encode()).decode()},
        {"moduleTextGenerator": {"template": GOOD_MODULE}},
    ]
    keys = set()
    for source in sources:
        raw = {"name": "s", "expect": {"stage": "import", "outcome": "ok"}, **source}
        keys.add(check_case(raw, "f.json", "import").source_key)
    assert keys == {"moduleText", "module", "kernelText", "moduleBase64", "moduleTextGenerator"}


def test_a_file_holds_one_case_or_a_cases_array(tmp_path: Path) -> None:
    single = write_cases(tmp_path, "cases/import/one.json", case("one"))
    many = write_cases(tmp_path, "cases/import/many.json", case("two"), case("three"))
    assert [c.name for c in load_file(single)] == ["one"]
    loaded = load_file(many)
    assert [c.name for c in loaded] == ["two", "three"]
    assert loaded[1].origin.endswith("many.json#/cases/1 (three)")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"cases": []}', "non-empty array"),
        ('{"cases": [], "extra": 1}', "may hold nothing else"),
        ('{"name": "a", "name": "b"}', "duplicate key 'name'"),
        ('{"name": NaN}', "not valid JSON"),
        ("{", "not valid JSON"),
    ],
)
def test_malformed_case_files_are_refused(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseFormatError) as info:
        load_file(path)
    assert fragment in str(info.value)


def test_names_are_unique_across_files_and_all_errors_are_listed(tmp_path: Path) -> None:
    write_cases(tmp_path, "cases/import/a.json", case("same"))
    write_cases(tmp_path, "cases/import/b.json", case("same"))
    write_cases(tmp_path, "cases/import/c.json", case("other", colour=1))
    with pytest.raises(CorpusError) as info:
        load_cases([tmp_path])
    messages = [error.message for error in info.value.errors]
    assert len(messages) == 2
    assert any("name already used by" in message for message in messages)
    assert any("unknown case key" in message for message in messages)


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CaseFormatError, match="no such file"):
        load_cases([tmp_path / "nowhere.json"])


def test_area_is_the_first_directory_below_cases(tmp_path: Path) -> None:
    assert area_of(tmp_path / "cases" / "import" / "deep" / "x.json") == "import"
    assert area_of(tmp_path / "elsewhere" / "x.json") == "elsewhere"
