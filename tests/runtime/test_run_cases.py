"""Every run-stage case of conformance/cases/run passes on the reference backend, checked by this
file's own small runner (host API + fixture bindings), and the case files are what the generator
script produces (expected fuel comes from the cost table, never from the interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dotboxd.conformance.values import same_value
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.host import SandboxHost
from dotboxd.runtime.fixtures import FixtureInvoker, fixture_invokers
from dotboxd.validator.policy import Policy

ROOT = Path(__file__).resolve().parents[2]
CASES_DIR = ROOT / "conformance" / "cases" / "run"


def _cases() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(CASES_DIR.glob("*.json")):
        out.extend(json.loads(path.read_text(encoding="utf-8"))["cases"])
    return out


CASES = _cases()


def _run(case: dict[str, Any]) -> dict[str, Any]:
    entries = case.get("bindings", [])
    descriptors = load_binding_manifest(entries) if entries else ()
    invokers = fixture_invokers(entries, {d.id: d.return_type for d in descriptors})
    catalog = BindingRegistry(descriptors).build().with_invokers(invokers)
    host = SandboxHost(catalog)
    plan = host.prepare(case["kernelText"], Policy.from_json(case.get("policy", {})))
    result = host.execute(plan, case.get("entrypoint", "main"), case.get("args", []), encoding="json")
    actual = result.to_json()
    # the host's count of charged calls, as the conformance runner reads it (a refused attempt is
    # counted, spec/costs.md section 9); the fixtures' own counts never exceed it
    charged = dict(result.binding_calls)
    for bid, fn in invokers.items():
        if isinstance(fn, FixtureInvoker):
            assert fn.calls <= charged.get(bid, 0), (bid, fn.calls, charged)
    actual["bindingCalls"] = charged
    return actual


def test_corpus_size() -> None:
    assert len(CASES) >= 300
    assert sum(1 for c in CASES if "fuelUsed" in c["expect"]) >= 100
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_run_case(case: dict[str, Any]) -> None:
    expect = case["expect"]
    actual = _run(case)
    assert actual["stage"] == expect["stage"] == "run"
    assert actual["outcome"] == expect["outcome"], actual
    if expect["outcome"] == "ok":
        assert same_value(expect["value"], actual["value"]), (expect["value"], actual["value"])
    else:
        assert actual["error"] == expect["error"], actual
        if "diagnostic" in expect:
            assert actual["code"] == expect["diagnostic"], actual
    if "fuelUsed" in expect:
        assert actual["fuelUsed"] == expect["fuelUsed"], actual
    for key, value in expect.get("usage", {}).items():
        assert actual["usage"][key] == value, (key, actual["usage"])
    for bid, count in expect.get("bindingCalls", {}).items():
        assert actual["bindingCalls"].get(bid, 0) == count, actual["bindingCalls"]
    for fragment in ("hunter2", "/secret", "Traceback"):
        assert fragment not in json.dumps(actual)


def test_case_files_are_generated() -> None:
    script = ROOT / "conformance" / "tools" / "make_run_cases.py"
    out = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
