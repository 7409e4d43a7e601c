"""Defences against the import-stage threats of threat-model/README.md (T-IMP-*).

Each test names the attack it defends against. Some drive the importer directly with hostile
input or systematic mutations of valid modules; others run the slice of the conformance corpus that
pins the rule (by tag), so the threat table and the corpus cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.loader import CORPUS_ROOT, load_cases
from dotboxd.conformance.report import failure_line
from dotboxd.conformance.runner import run_cases
from dotboxd.core.ast import Module
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.wire import import_module

IMPORT_CASES = load_cases([CORPUS_ROOT / "import"])


def corpus_slice(*tags: str, minimum: int = 1) -> None:
    """Run every import case carrying all ``tags``; all must pass and there must be enough of them."""
    cases = [case for case in IMPORT_CASES if set(tags) <= set(case.tags)]
    assert len(cases) >= minimum, f"only {len(cases)} cases tagged {tags}"
    report = run_cases(
        cases, {"reference": InProcessBackend("reference")}, ["reference"], frozenset({"reference"})
    )
    assert [failure_line(r) for r in report.results if not r.passed] == []


def rejection(data: bytes | str) -> DotBoxDError:
    with pytest.raises(DotBoxDError) as info:
        import_module(data)
    return info.value


def sample_modules() -> list[dict[str, Any]]:
    """Valid modules that between them contain every kind of JSON object the wire format has."""
    names = {
        "import-every-statement-op",
        "import-every-literal-kind",
        "import-generic-types",
        "import-module-all-properties",
    }
    modules = []
    for case in IMPORT_CASES:
        if case.name in names:
            modules.append(case.raw["module"] if "module" in case.raw else json.loads(case.raw["moduleText"]))
    assert len(modules) == len(names)
    return modules


def objects(value: Any, pointer: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every JSON object in ``value`` with its RFC 6901 pointer."""
    if isinstance(value, dict):
        yield pointer, value
        for key, item in value.items():
            yield from objects(item, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from objects(item, f"{pointer}/{index}")


def dumps_with(value: Any, target: str, extra: str, pointer: str = "") -> str:
    """JSON text of ``value`` with the raw member text ``extra`` appended to the object at ``target``."""
    if isinstance(value, dict):
        members = [
            json.dumps(key)
            + ":"
            + dumps_with(item, target, extra, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
            for key, item in value.items()
        ]
        if pointer == target:
            members.append(extra)
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return (
            "["
            + ",".join(dumps_with(item, target, extra, f"{pointer}/{i}") for i, item in enumerate(value))
            + "]"
        )
    return json.dumps(value)


# --- T-IMP-01..04: parser denial of service ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000],
    ids=["unclosed-arrays", "closed-arrays", "objects"],
)
def test_deep_nesting_fails_fast_without_recursion(text: str) -> None:
    for data in (text, text.encode()):
        error = rejection(data)
        assert error.code == "E-JSON-LIMIT"
        assert error.diagnostic.evidence.get("limit") == 64


def test_depth_budget_is_exact() -> None:
    corpus_slice("budget", "budget-depth", minimum=8)


@pytest.mark.parametrize("as_bytes", [True, False])
def test_oversized_documents_are_rejected_before_scanning(as_bytes: bool) -> None:
    garbage = "\u00e9" * (600 * 1024)  # 1.2 MB of UTF-8, not even JSON: the size check must come first
    error = rejection(garbage.encode() if as_bytes else garbage)
    assert error.code == "E-JSON-LIMIT"
    corpus_slice("budget", "budget-documentBytes", minimum=4)


def test_token_floods_are_rejected() -> None:
    corpus_slice("budget", "budget-tokens", minimum=3)


def test_item_floods_are_rejected() -> None:
    corpus_slice("budget", "budget-items", minimum=6)


def test_string_bloat_is_rejected() -> None:
    corpus_slice("budget", "budget-stringBytes", minimum=8)
    corpus_slice("budget", "budget-totalStringBytes", minimum=2)


# --- T-IMP-05: duplicate-key ambiguity --------------------------------------------------------


def test_a_duplicate_key_is_rejected_in_every_object() -> None:
    checked = 0
    for module in sample_modules():
        for pointer, obj in objects(module):
            if not obj:
                continue
            key, value = next(iter(obj.items()))
            text = dumps_with(module, pointer, json.dumps(key) + ":" + json.dumps(value))
            error = rejection(text)
            assert error.code == "E-JSON-SCHEMA", (pointer, error.diagnostic.message)
            assert error.diagnostic.pointer == f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}"
            checked += 1
    assert checked >= 50


def test_duplicate_key_corpus_passes() -> None:
    corpus_slice("duplicate-key", minimum=20)


# --- T-IMP-06: smuggled host names ------------------------------------------------------------


def test_host_names_are_rejected_in_every_scanned_position() -> None:
    corpus_slice("clr-ref", "position", minimum=16)


def test_every_dangerous_fragment_is_rejected() -> None:
    corpus_slice("clr-ref", "fragment", minimum=13)
    corpus_slice("clr-ref", "word", minimum=20)
    corpus_slice("clr-ref", "hex", minimum=3)


@pytest.mark.parametrize(
    "name", ["System.IO.File.ReadAllText", "Type.GetType", "system.diagnostics.process.start"]
)
def test_the_forbidden_call_examples_cannot_name_host_code(name: str) -> None:
    module = {
        "id": "m",
        "version": "1.0.0",
        "functions": [
            {
                "id": "main",
                "visibility": "entrypoint",
                "returnType": "String",
                "body": [{"op": "return", "value": {"call": name, "args": [{"string": "/etc/passwd"}]}}],
            }
        ],
    }
    error = rejection(json.dumps(module))
    assert (error.code, error.diagnostic.pointer) == ("E-IR-CLR-REF", "/functions/0/body/0/value/call")


# --- T-IMP-07/08: path and uri literal abuse --------------------------------------------------


def literal(kind: str, text: str) -> str:
    return json.dumps(
        {
            "id": "m",
            "version": "1.0.0",
            "functions": [
                {"id": "main", "returnType": "Unit", "body": [{"op": "expr", "value": {kind: text}}]}
            ],
        }
    )


@pytest.mark.parametrize(
    "path",
    [
        "./config.json",
        "sub/../config.json",
        "../secret.txt",
        "/rooted/path",
        "C:\\Windows\\win.ini",
        "\\\\server\\share\\x",
        "file:///etc/passwd",
        "config/../../secret.txt",
        "CON",
        "data/aux.txt",
        "config.json ",
        "config.json.",
        "a\u0000b",
    ],
)
def test_path_escapes_are_rejected_never_normalized(path: str) -> None:
    assert rejection(literal("path", path)).code == "E-JSON-PATH"
    assert isinstance(import_module(literal("path", "config.json")), Module)


def test_path_corpus_passes() -> None:
    corpus_slice("literal", "path", minimum=40)


@pytest.mark.parametrize(
    "uri",
    [
        "https://user:secret@example.com/",
        "https://example.com:443@evil.example/",
        "https://exa\\mple.com/",
        "https:///etc/passwd",
        "file:/etc/passwd",
        "//example.com/x",
        "https://exa mple.com/",
        "https://example.com/\u0007",
    ],
)
def test_uri_confusion_is_rejected(uri: str) -> None:
    assert rejection(literal("uri", uri)).code == "E-JSON-URI"


def test_uri_corpus_passes() -> None:
    corpus_slice("literal", "uri", minimum=30)


# --- T-IMP-09..13: lenient-parser differentials, shape smuggling, identifiers, crashes ----------


def test_number_edges_are_exact() -> None:
    corpus_slice("literal", "edge", minimum=14)


def test_lenient_json_extensions_are_rejected() -> None:
    corpus_slice("strict-json", minimum=45)


def test_an_unknown_property_is_rejected_in_every_closed_object() -> None:
    checked = 0
    for module in sample_modules():
        for pointer, _ in objects(module):
            if pointer == "/metadata":
                continue  # metadata is the one open-ended object (string keys to string values)
            error = rejection(dumps_with(module, pointer, '"zzSmuggled":{"unit":true}'))
            assert (error.code, error.diagnostic.pointer) == ("E-JSON-SCHEMA", f"{pointer}/zzSmuggled"), (
                pointer
            )
            checked += 1
    assert checked >= 50


def test_a_capability_request_cannot_carry_trusted_parameters() -> None:
    for field in ("root", "maxBytesPerRun", "allowedHosts", "parameters", "grantedBy"):
        module = {
            "id": "m",
            "version": "1.0.0",
            "functions": [],
            "capabilityRequests": [{"id": "file.read", field: "/"}],
        }
        error = rejection(json.dumps(module))
        assert (error.code, error.diagnostic.pointer) == ("E-JSON-SCHEMA", f"/capabilityRequests/0/{field}")


def test_text_form_applies_the_wire_rules() -> None:
    corpus_slice("text-form", minimum=5)


def test_identifier_spoofing_is_rejected() -> None:
    corpus_slice("identifier", minimum=15)


def test_opaque_id_shapes_are_enforced() -> None:
    corpus_slice("opaque-id", minimum=15)


def _import_outcome(data: bytes | str) -> None:
    try:
        result = import_module(data)
    except DotBoxDError as error:
        assert error.diagnostic.code.startswith(("E-JSON-", "E-IR-"))
        assert error.diagnostic.span is not None
    else:
        assert isinstance(result, Module)


@given(st.binary(max_size=512))
def test_hostile_bytes_only_ever_yield_a_diagnostic(data: bytes) -> None:
    _import_outcome(data)


VALID = json.dumps(sample_modules()[0])


@given(st.integers(0, len(VALID) - 1), st.integers(0, 8), st.text(max_size=6))
def test_mutated_modules_only_ever_yield_a_diagnostic(at: int, cut: int, insert: str) -> None:
    _import_outcome(VALID[:at] + insert + VALID[at + cut :])
