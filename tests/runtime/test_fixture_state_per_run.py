"""Fixture state is per run (conformance/README.md, "Fixture state is per run"): a ``sequence``
fixture indexes its values by the calls of the current run, so one catalogue reused for several
runs, on either backend and in any order, replays the sequence from its start every time. Before,
the fixture kept its own lifetime counter, and the second run of a reused catalogue saw the tail of
the sequence (harnesses had to reset it by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.host import SandboxHost
from dotboxd.runtime.fixtures import FixtureInvoker, fixture_invokers
from dotboxd.validator.policy import Policy

CASE_FILE = Path(__file__).resolve().parents[2] / "conformance" / "cases" / "run" / "bindings.json"


def _sequence_case() -> dict[str, Any]:
    cases = json.loads(CASE_FILE.read_text(encoding="utf-8"))["cases"]
    return next(c for c in cases if c["name"] == "run-bindings-sequence")


def _host_and_plan() -> tuple[SandboxHost, Any, dict[str, Any]]:
    case = _sequence_case()
    entries = case["bindings"]
    descriptors = load_binding_manifest(entries)
    invokers = fixture_invokers(entries, {d.id: d.return_type for d in descriptors})
    catalog = BindingRegistry(descriptors).build().with_invokers(invokers)
    host = SandboxHost(catalog)
    return host, host.prepare(case["kernelText"], Policy.from_json(case["policy"])), case


@pytest.mark.parametrize(
    "backends",
    [("reference",) * 3, ("optimized",) * 3, ("reference", "optimized", "reference")],
    ids=["reference", "optimized", "alternating"],
)
def test_a_reused_sequence_fixture_starts_over_in_every_run(backends: tuple[str, ...]) -> None:
    host, plan, case = _host_and_plan()
    values = [host.execute(plan, "main", [], backend=name).to_json()["value"] for name in backends]
    assert values == [case["expect"]["value"]] * len(backends)  # 123 each time, never 333


def test_a_sequence_fixture_counts_its_lifetime_calls_but_indexes_by_the_run() -> None:
    host, plan, _ = _host_and_plan()
    for _ in range(2):
        host.execute(plan, "main", [])
    invoker = plan.catalog["probe.next"].invoke
    assert isinstance(invoker, FixtureInvoker) and invoker.takes_context
    assert invoker.calls == 6
