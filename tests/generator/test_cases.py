"""``generate_cases``: deterministic per seed, in the shared case format, self-contained (the case
alone reproduces its expectation), and written as a loadable case file by ``write_cases``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from dotboxd.conformance.generator import ProgramWithInputs, generate_cases, programs_with_inputs, write_cases
from dotboxd.conformance.generator.program import entry_param_types
from dotboxd.conformance.loader import load_file
from dotboxd.conformance.shape import check_case
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.core.types import to_type_ref
from dotboxd.core.values import decode_typed, encode_typed
from dotboxd.grammar import literals
from dotboxd.grammar.wire import import_module
from dotboxd.host import SandboxHost
from dotboxd.runtime.fixtures import fixture_invokers
from dotboxd.validator.policy import Policy

COUNT = 6


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return generate_cases(COUNT, 7)


def test_generation_is_deterministic_per_seed(cases: list[dict[str, Any]]) -> None:
    assert generate_cases(COUNT, 7) == cases
    assert generate_cases(COUNT, 8) != cases
    assert json.dumps(generate_cases(2, 7), sort_keys=True) == json.dumps(cases[:2], sort_keys=True)


def test_cases_follow_the_shared_case_format(cases: list[dict[str, Any]]) -> None:
    names = [c["name"] for c in cases]
    assert len(set(names)) == COUNT
    for case in cases:
        checked = check_case(case, "generated.json", "generated")
        assert checked.expect.stage == "run"
        assert checked.expect.fuel_used is not None
        assert "generated" in checked.tags


def _run_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """Run a case from its own fields only (an independent reading of the case format)."""
    entries = list(case.get("bindings", []))
    descriptors = load_binding_manifest(entries)
    catalog = BindingRegistry(descriptors).build()
    catalog = catalog.with_invokers(fixture_invokers(entries, {d.id: d.return_type for d in descriptors}))
    host = SandboxHost(catalog)
    plan = host.prepare(import_module(json.dumps(case["module"])), Policy.from_json(case.get("policy", {})))
    result = host.execute(plan, case.get("entrypoint", "main"), case.get("args", []), encoding="json")
    return result.to_json()


def test_each_case_reproduces_its_expectation(cases: list[dict[str, Any]]) -> None:
    for case in cases:
        actual = _run_case(case)
        expect = case["expect"]
        assert actual["outcome"] == expect["outcome"], case["name"]
        assert actual["fuelUsed"] == expect["fuelUsed"], case["name"]
        assert actual.get("value") == expect.get("value"), case["name"]
        assert actual.get("error") == expect.get("error"), case["name"]
        assert actual["usage"]["loopIterations"] == expect["usage"]["loopIterations"]
        for bid, calls in expect.get("bindingCalls", {}).items():
            assert actual["bindingCalls"].get(bid, 0) == calls


def test_write_cases_writes_a_loadable_case_file(tmp_path: Path) -> None:
    path = write_cases(tmp_path / "generated", 3, 5)
    loaded = load_file(path)
    assert [c.name for c in loaded] == [c["name"] for c in generate_cases(3, 5)]


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        generate_cases(-1, 0)


@settings(max_examples=25)
@given(programs_with_inputs())
def test_inputs_are_canonical_values_of_the_parameter_types(drawn: ProgramWithInputs) -> None:
    types = entry_param_types(drawn.program)
    assert drawn.inputs[0] == drawn.program.args_json
    for vector in drawn.inputs:
        assert len(vector) == len(types)
        for value, t in zip(vector, types, strict=True):
            ref = to_type_ref(t)
            assert encode_typed(decode_typed(value, ref, literals), ref) == value
