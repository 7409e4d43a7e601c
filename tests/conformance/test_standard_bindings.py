"""The ``{"id": ..., "standard": true}`` marker: a case asks for a standard binding's contract, and the
host gives it its facade - only then, never for a declared entry and never in place of one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dotboxd.conformance.availability import available_backends
from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.pipeline import evaluate
from dotboxd.conformance.shape import check_case
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.standard import case_descriptors, standard_ids
from dotboxd.core.bindings import binding_record, binding_to_json, standard_bindings
from dotboxd.grammar.text import parse_text
from dotboxd.runtime.facades import STANDARD_FACADES

CLOCK_TEXT = 'module "m" version "1.0.0";\nentrypoint fn main() -> I64 { return time.nowUnixMillis(); }\n'
NOW = 1_234_567
POLICY = {"grants": [{"id": "time.now"}], "deterministic": {"logicalNowUnixMillis": NOW}}
BACKENDS = available_backends()


def clock_case(bindings: list[Any]) -> dict[str, Any]:
    return {
        "name": "standard-marker",
        "kernelText": CLOCK_TEXT,
        "policy": POLICY,
        "bindings": bindings,
        "expect": {"stage": "run", "outcome": "ok", "value": NOW},
    }


def declared_copy(binding_id: str) -> dict[str, Any]:
    """The standard contract of ``binding_id`` written out as an ordinary case entry."""
    (standard,) = [d for d in standard_bindings() if d.id == binding_id]
    entry = binding_to_json(standard)
    assert "grantParameters" not in entry
    return entry


def test_the_marker_names_exactly_the_standard_contract() -> None:
    entries = [{"id": bid, "standard": True} for bid in standard_ids()]
    loaded = case_descriptors(entries)
    assert [binding_record(d) for d in loaded] == [binding_record(d) for d in standard_bindings()]
    assert all(d.invoke is None for d in loaded)
    assert [d.origin for d in loaded] == [f"/{i}" for i in range(len(entries))]


def test_a_marked_binding_gets_its_facade_and_a_declared_copy_does_not() -> None:
    module = parse_text(CLOCK_TEXT)
    marked = validate_case(module, clock_case([{"id": "time.nowUnixMillis", "standard": True}]), None)
    assert marked.catalog["time.nowUnixMillis"].invoke is STANDARD_FACADES["time.nowUnixMillis"]
    declared = validate_case(module, clock_case([declared_copy("time.nowUnixMillis")]), None)
    assert declared.catalog["time.nowUnixMillis"].invoke is None
    assert declared.catalog.manifest_hash != marked.catalog.manifest_hash


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_marker_runs_the_facade_on_every_backend(backend: str) -> None:
    actual = evaluate(clock_case([{"id": "time.nowUnixMillis", "standard": True}]), backend)
    assert (actual.outcome, actual.value) == ("ok", NOW)
    assert actual.binding_calls == {"time.nowUnixMillis": 1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_declared_copy_of_the_standard_contract_stays_a_fixture_less_binding(backend: str) -> None:
    actual = evaluate(clock_case([declared_copy("time.nowUnixMillis")]), backend)
    assert (actual.outcome, actual.diagnostic) == ("error", "R-BINDING-FAILED")
    assert actual.message == "binding 'time.nowUnixMillis' failed"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_marker_never_replaces_a_declared_binding(backend: str) -> None:
    own = {**declared_copy("time.nowUnixMillis"), "behavior": {"kind": "return", "value": 5}}
    for bindings in (
        [{"id": "time.nowUnixMillis", "standard": True}, own],
        [own, {"id": "time.nowUnixMillis", "standard": True}],
    ):
        actual = evaluate(clock_case(bindings), backend)
        assert (actual.stage, actual.outcome, actual.diagnostic) == ("validate", "rejected", "E-BINDING-DUP")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_marked_http_binding_reaches_the_facade_not_a_missing_invoker(backend: str) -> None:
    # only the facade knows the grant's allowlist; a missing invoker would fail generically
    case = {
        "name": "http-facade",
        "kernelText": 'module "m" version "1.0.0";\n'
        "entrypoint fn main(u SandboxUri) -> String { return net.http.get(u); }\n",
        "policy": {
            "grants": [
                {
                    "id": "net.http.get",
                    "parameters": {"allowedHosts": "example.com", "maxResponseBytes": "10"},
                }
            ],
            "allowRuntimeAsync": True,
        },
        "bindings": [{"id": "net.http.get", "standard": True}],
        "args": ["https://example.org/"],
        "expect": {"stage": "run", "outcome": "error", "error": "PermissionDenied"},
    }
    actual = evaluate(case, backend)
    assert (actual.error, actual.diagnostic, actual.message) == (
        "PermissionDenied",
        "R-BINDING-DENIED",
        "the uri's host or port is not allowed by the grant",
    )


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"id": "time.nowUnixMillis", "standard": False}, "'standard' must be true"),
        ({"id": "time.nowUnixMillis", "standard": "yes"}, "'standard' must be true"),
        (
            {"id": "time.nowUnixMillis", "standard": True, "behavior": {"kind": "return", "value": 1}},
            "'behavior'",
        ),
        ({"id": "time.nowUnixMillis", "standard": True, "returnType": "I32"}, "'returnType'"),
        ({"id": "game.clock", "standard": True}, "not a standard binding"),
    ],
)
def test_a_malformed_marker_is_a_case_format_error(entry: dict[str, Any], problem: str) -> None:
    with pytest.raises(CaseFormatError) as raised:
        check_case(json.loads(json.dumps(clock_case([entry]))), "here", "bindings")
    assert problem in str(raised.value)


def test_a_well_formed_marker_passes_the_shape_check() -> None:
    case = check_case(clock_case([{"id": "log.warn", "standard": True}]), "here", "bindings")
    assert case.raw["bindings"] == [{"id": "log.warn", "standard": True}]
