"""The JSON Schemas of spec/schema/ describe what the project really reads and writes.

Each schema is checked three ways: it is a valid 2020-12 schema; its closed key sets are the ones
the code accepts (so a key added to the code without the schema, or the reverse, fails here); and
the project's own documents validate - every case file of the corpus, every policy and binding
list in it that the real loaders accept (and, for the policies, the schema refuses the ones the
resolver refuses as E-POLICY-SCHEMA), the standard binding manifest, the example policy, and the
hello and response lines ``conformance serve`` writes and the request lines the runner sends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from dotboxd.conformance import shape
from dotboxd.conformance.loader import CORPUS_ROOT, case_files, load_cases
from dotboxd.conformance.model import Actual
from dotboxd.conformance.protocol import REQUEST_KEYS, hello_line, request_line
from dotboxd.conformance.sources import wire_request_case
from dotboxd.core import binding_manifest, bindings
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.validator import policy as policy_module
from dotboxd.validator.policy import Policy

ROOT = CORPUS_ROOT.parents[1]
SCHEMAS = ROOT / "spec" / "schema"
NAMES = ("kernel-module", "policy", "binding-manifest", "conformance-case", "protocol")


@cache
def registry() -> Registry:
    resources = []
    for name in NAMES:
        document = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


def validator(name: str, fragment: str = "") -> Draft202012Validator:
    base = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))["$id"]
    return Draft202012Validator({"$ref": base + fragment}, registry=registry())


def errors(name: str, document: Any, fragment: str = "") -> list[str]:
    return [f"{e.json_path}: {e.message[:200]}" for e in validator(name, fragment).iter_errors(document)]


@pytest.mark.parametrize("name", NAMES)
def test_every_schema_is_a_valid_2020_12_schema(name: str) -> None:
    Draft202012Validator.check_schema(json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8")))


def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))
    return data


def test_closed_key_sets_match_the_code() -> None:
    policy = _schema("policy")
    assert set(policy["properties"]) == policy_module.POLICY_KEYS == shape.POLICY_KEYS
    assert set(policy["properties"]["limits"]["properties"]) == set(policy_module.LIMIT_BY_JSON)
    assert set(policy["$defs"]["grant"]["properties"]) == policy_module.GRANT_KEYS
    manifest = _schema("binding-manifest")
    assert set(manifest["$defs"]["entry"]["properties"]) == binding_manifest._ENTRY_KEYS
    assert set(manifest["$defs"]["cost"]["properties"]) == binding_manifest._COST_KEYS
    case = _schema("conformance-case")["$defs"]
    assert set(case["case"]["properties"]) == shape.CASE_KEYS
    assert set(case["requestCase"]["properties"]) == shape.REQUEST_CASE_KEYS
    assert set(case["expect"]["properties"]) == shape.EXPECT_KEYS
    assert set(case["casePolicy"]["properties"]) == shape.POLICY_KEYS
    declared = case["caseBinding"]["anyOf"][1]["propertyNames"]["enum"]
    assert set(declared) | {shape.STANDARD_KEY} == shape.BINDING_KEYS
    kinds = {b["properties"]["kind"]["const"] for b in case["caseBinding"]["properties"]["behavior"]["oneOf"]}
    assert kinds == set(shape.BEHAVIOR_PARAMS)
    protocol = _schema("protocol")["$defs"]
    assert set(protocol["request"]["properties"]) == REQUEST_KEYS
    assert set(protocol["response"]["properties"]) == set(Actual(stage=None, outcome="ok").to_json())


def test_every_corpus_case_file_validates() -> None:
    failures = []
    files = case_files([CORPUS_ROOT])
    assert len(files) > 40
    for path in files:
        document = json.loads(path.read_text("utf-8"))
        failures += [f"{path.relative_to(ROOT)} {error}" for error in errors("conformance-case", document)]
    assert failures == []


def test_the_case_schema_refuses_what_the_case_checker_refuses() -> None:
    good = {"name": "a", "moduleText": "{}", "expect": {"stage": "import", "outcome": "ok"}}
    assert errors("conformance-case", good) == []
    broken = [
        {**good, "name": "Not-Kebab"},
        {**good, "kernelText": "x"},  # two sources
        {k: v for k, v in good.items() if k != "moduleText"},  # no source
        {**good, "expect": {"stage": "run", "outcome": "ok"}},  # a successful run pins its value
        {**good, "expect": {"stage": "run", "outcome": "rejected", "diagnostic": "E-X-Y"}},
        {**good, "expect": {"stage": "import", "outcome": "ok", "bogus": 1}},
        {**good, "bindings": [{"id": "b", "standard": True, "returnType": "I32"}]},
        {**good, "bindings": [{"id": "b", "returnType": "I32", "behavior": {"kind": "echo"}}]},
    ]
    for document in broken:
        assert errors("conformance-case", document), document


def _case_policies() -> Iterator[tuple[str, Any]]:
    for case in load_cases():
        if "policy" in case.raw:
            yield case.name, case.raw["policy"]


def test_policies_the_resolver_accepts_validate_and_schema_errors_do_not() -> None:
    accepted = refused = 0
    failures = []
    for name, document in [*_case_policies(), ("example", _example_policy())]:
        try:
            Policy.from_json(document, {"$ROOT": "/tmp/root"})
        except DotBoxDError as error:
            if error.code == "E-POLICY-SCHEMA" and not errors("policy", document):
                failures.append(
                    f"{name}: the resolver refuses it ({error.diagnostic.message}), the schema does not"
                )
            refused += error.code == "E-POLICY-SCHEMA"
            continue
        accepted += 1
        failures += [f"{name}: {e}" for e in errors("policy", document)]
    assert failures == []
    assert accepted > 500 and refused >= 5


def _example_policy() -> dict[str, Any]:
    """The policy ``make demo`` writes for the config-reader example."""
    root = str(ROOT / "examples" / "config-root")
    grant = {"id": "file.read", "parameters": {"root": root, "maxBytesPerRun": "4096"}}
    return {"grants": [grant], "allowRuntimeAsync": True}


def test_binding_manifests_the_loader_accepts_validate() -> None:
    standard = bindings.manifest_to_json(bindings.standard_bindings())
    assert errors("binding-manifest", standard) == []
    checked = 0
    failures = []
    for case in load_cases():
        entries = case.raw.get("bindings")
        if not entries or any(shape.STANDARD_KEY in entry for entry in entries):
            continue
        try:
            bindings.BindingRegistry(bindings.load_binding_manifest(entries)).build()
        except DotBoxDError:
            continue
        checked += 1
        failures += [f"{case.name}: {e}" for e in errors("binding-manifest", entries)]
    assert failures == []
    assert checked > 100


def test_protocol_lines_validate() -> None:
    assert errors("protocol", json.loads(hello_line()), "#/$defs/hello") == []
    cases = load_cases()
    requests = [request_line(wire_request_case(case), "reference", case.expect.stage) for case in cases]
    failures = [e for line in requests for e in errors("protocol", json.loads(line), "#/$defs/request")]
    assert failures == []
    stdin = hello_line() + "".join(requests[:: max(1, len(requests) // 60)]) + "not json\n"
    done = subprocess.run(
        [sys.executable, "-m", "dotboxd.cli.main", "conformance", "serve"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == stdin.count("\n")
    assert errors("protocol", answers[0], "#/$defs/helloAnswer") == []
    failures = [e for answer in answers[1:] for e in errors("protocol", answer, "#/$defs/response")]
    assert failures == []
    assert {answer["outcome"] for answer in answers[1:]} >= {"ok", "rejected", "error", "unsupported"}
