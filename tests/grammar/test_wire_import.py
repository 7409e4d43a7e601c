"""The strict wire importer: shapes, literal rules, budgets and hostile input."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError, Span
from dotboxd.grammar import jsonscan
from dotboxd.grammar.wire import dumps_wire, import_module, to_wire


def module_with(value: Any = None, body: Any = None, **extra: Any) -> dict[str, Any]:
    """A one-function module returning ``value`` (an expression), or with ``body`` statements."""
    fn = {"id": "main", "visibility": "entrypoint", "returnType": "I32"}
    fn["body"] = body if body is not None else [{"op": "return", "value": value}]
    module: dict[str, Any] = {"id": "m", "version": "1.0.0", "functions": [fn]}
    module.update(extra)
    return module


def code_of(doc: Any) -> str:
    text = doc if isinstance(doc, str | bytes) else json.dumps(doc)
    with pytest.raises(DotBoxDError) as info:
        import_module(text)
    return info.value.diagnostic.code


def diag_of(doc: Any) -> Any:
    text = doc if isinstance(doc, str | bytes) else json.dumps(doc)
    with pytest.raises(DotBoxDError) as info:
        import_module(text)
    return info.value.diagnostic


def test_examples_import_and_round_trip() -> None:
    for name in ("loot-score", "config-reader"):
        with open(f"examples/{name}.json", "rb") as handle:
            module = import_module(handle.read())
        assert module.id == name
        assert import_module(dumps_wire(module)) == module


def test_nodes_carry_pointer_and_span() -> None:
    text = '{"id": "m", "version": "1",\n "functions": [{"id": "main", "returnType": "I32",\n  "body": [{"op": "return", "value": {"i32": 7}}]}]}'
    module = import_module(text)
    stmt = module.functions[0].body[0]
    assert isinstance(stmt, ast.Return)
    assert stmt.pointer == "/functions/0/body/0"
    assert stmt.span == Span(3, 12)
    assert stmt.value.pointer == "/functions/0/body/0/value"
    assert stmt.value.span == Span(3, 38)


def test_defaults_and_canonical_versions() -> None:
    module = import_module(json.dumps(module_with({"i32": 1}, version="v2")))
    assert module.version == "2.0.0"
    assert module.target_sandbox_version == "1.0.0"
    assert module.functions[0].visibility is ast.Visibility.ENTRYPOINT
    private = json.loads(json.dumps(module_with({"i32": 1})))
    del private["functions"][0]["visibility"]
    assert import_module(json.dumps(private)).functions[0].visibility is ast.Visibility.PRIVATE


@pytest.mark.parametrize(
    ("literal", "kind", "value"),
    [
        ({"unit": True}, ast.LiteralKind.UNIT, None),
        ({"bool": False}, ast.LiteralKind.BOOL, False),
        ({"i32": -2147483648}, ast.LiteralKind.I32, -(2**31)),
        ({"i64": 9223372036854775807}, ast.LiteralKind.I64, 2**63 - 1),
        ({"f64": 1}, ast.LiteralKind.F64, 1.0),
        ({"f64": -1.7976931348623157e308}, ast.LiteralKind.F64, -1.7976931348623157e308),
        ({"string": "h\u00e9llo \U0001f600"}, ast.LiteralKind.STRING, "h\u00e9llo \U0001f600"),
        (
            {"guid": "0A1B2C3D-0000-4000-8000-00000000ABCD"},
            ast.LiteralKind.GUID,
            "0a1b2c3d-0000-4000-8000-00000000abcd",
        ),
        ({"path": "config/settings.json"}, ast.LiteralKind.PATH, "config/settings.json"),
        ({"uri": "https://example.org/a?b#c"}, ast.LiteralKind.URI, "https://example.org/a?b#c"),
    ],
)
def test_valid_literals(literal: dict[str, Any], kind: ast.LiteralKind, value: Any) -> None:
    stmt = import_module(json.dumps(module_with(literal))).functions[0].body[0]
    assert isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Literal)
    assert stmt.value.kind is kind
    assert stmt.value.value == value
    assert type(stmt.value.value) is type(value)


def test_opaque_id_literal() -> None:
    lit = {"opaqueId": {"type": "PlayerId", "value": "p-1:a_b.c"}}
    stmt = import_module(json.dumps(module_with(lit))).functions[0].body[0]
    assert isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Literal)
    assert (stmt.value.brand, stmt.value.value) == ("PlayerId", "p-1:a_b.c")


@pytest.mark.parametrize(
    ("literal", "code"),
    [
        ({"unit": False}, "E-JSON-TYPE"),
        ({"bool": 1}, "E-JSON-TYPE"),
        ({"i32": 2147483648}, "E-JSON-TYPE"),
        ({"i32": -2147483649}, "E-JSON-TYPE"),
        ({"i64": 9223372036854775808}, "E-JSON-TYPE"),
        ({"i32": "1"}, "E-JSON-TYPE"),
        ({"f64": "1.0"}, "E-JSON-TYPE"),
        ({"guid": "0a1b2c3d00004000800000000000abcd"}, "E-JSON-GUID"),
        ({"path": "./a"}, "E-JSON-PATH"),
        ({"path": "a/../b"}, "E-JSON-PATH"),
        ({"path": "/etc/passwd"}, "E-JSON-PATH"),
        ({"path": "C:\\Windows\\win.ini"}, "E-JSON-PATH"),
        ({"path": "file:///etc/passwd"}, "E-JSON-PATH"),
        ({"path": "dir/CON.txt"}, "E-JSON-PATH"),
        ({"path": "a/b."}, "E-JSON-PATH"),
        ({"path": "a//b"}, "E-JSON-PATH"),
        ({"uri": "example.org/a"}, "E-JSON-URI"),
        ({"uri": "https://user:pw@example.org/"}, "E-JSON-URI"),
        ({"uri": "https:///nohost"}, "E-JSON-URI"),
        ({"uri": "https://a\\b"}, "E-JSON-URI"),
        ({"opaqueId": {"type": "playerId", "value": "p"}}, "E-JSON-OPAQUE"),
        ({"opaqueId": {"type": "PlayerId", "value": ""}}, "E-JSON-OPAQUE"),
        ({"opaqueId": {"type": "PlayerId"}}, "E-JSON-MISSING"),
        ({"opaqueId": {"type": "PlayerId", "value": "p", "x": 1}}, "E-JSON-SCHEMA"),
        ({"string": "System.IO.File"}, "E-IR-CLR-REF"),
    ],
)
def test_invalid_literals(literal: dict[str, Any], code: str) -> None:
    assert code_of(module_with(literal)) == code


@pytest.mark.parametrize("text", ["[1e309]", "1e309", "-1e400"])
def test_overflowing_f64_rejected(text: str) -> None:
    assert (
        code_of(json.dumps(module_with({"f64": 0})).replace('"f64": 0', f'"f64": {text.strip("[]")}'))
        == "E-JSON-TYPE"
    )


@pytest.mark.parametrize(
    ("doc", "code"),
    [
        ('{"id": "m", "version": "1", "functions": [], }', "E-JSON-INVALID"),
        ('{"id": "m", // c\n "version": "1", "functions": []}', "E-JSON-INVALID"),
        ('{"id": "m", "version": "1", "functions": [NaN]}', "E-JSON-INVALID"),
        ('{"id": "m", "version": "1", "functions": [Infinity]}', "E-JSON-INVALID"),
        ("{'id': 'm'}", "E-JSON-INVALID"),
        ('{"id": "m", "id": "n", "version": "1", "functions": []}', "E-JSON-SCHEMA"),
        ('{"id": "m", "version": "1", "functions": []} {}', "E-JSON-INVALID"),
        (b'{"id": "m\xff", "version": "1", "functions": []}', "E-JSON-INVALID"),
        (b'\xef\xbb\xbf{"id": "m", "version": "1", "functions": []}', "E-JSON-INVALID"),
        ('{"id": "m\\ud800", "version": "1", "functions": []}', "E-JSON-INVALID"),
        ("", "E-JSON-INVALID"),
        ("[]", "E-JSON-TYPE"),
        ('{"version": "1", "functions": []}', "E-JSON-MISSING"),
        ('{"id": "m", "version": "1.0", "functions": []}', "E-JSON-VERSION"),
        ('{"id": "m", "version": "99999999999", "functions": []}', "E-JSON-VERSION"),
        ('{"id": "m\\u0001", "version": "1", "functions": []}', "E-IR-ID"),
        ('{"id": "", "version": "1", "functions": []}', "E-IR-ID"),
        (
            '{"id": "m", "version": "1", "functions": [], "capabilityRequests": [{"id": "file.read", "root": "/"}]}',
            "E-JSON-SCHEMA",
        ),
        ('{"id": "m", "version": "1", "functions": [], "metadata": {"k": 1}}', "E-JSON-TYPE"),
        ('{"id": "m", "version": "1", "functions": [], "metadata": {"k": "Assembly.Load"}}', "E-IR-CLR-REF"),
    ],
)
def test_document_level_rejections(doc: str | bytes, code: str) -> None:
    assert code_of(doc) == code


@pytest.mark.parametrize(
    ("stmt", "code"),
    [
        ({"op": "goto"}, "E-JSON-STATEMENT"),
        ({"value": {"i32": 1}}, "E-JSON-MISSING"),
        ({"op": "return"}, "E-JSON-MISSING"),
        ({"op": "return", "value": {"i32": 1}, "extra": 1}, "E-JSON-SCHEMA"),
        ({"op": "break", "label": "x"}, "E-JSON-SCHEMA"),
        ({"op": "if", "condition": {"bool": True}, "then": {}}, "E-JSON-TYPE"),
        ({"op": "return", "value": {"op": "pow", "left": {"i32": 1}, "right": {"i32": 1}}}, "E-JSON-OP"),
        ({"op": "return", "value": {"unary": "~", "operand": {"i32": 1}}}, "E-JSON-OP"),
        ({"op": "return", "value": {"left": {"i32": 1}}}, "E-JSON-EXPR"),
        ({"op": "return", "value": {"var": "x", "i32": 1}}, "E-JSON-SCHEMA"),
        ({"op": "return", "value": {"call": "Type.GetType"}}, "E-IR-CLR-REF"),
        ({"op": "return", "value": {"call": "System.IO.File.ReadAllText"}}, "E-IR-CLR-REF"),
        ({"op": "return", "value": {"call": "f", "args": {}}}, "E-JSON-TYPE"),
        ({"op": "set", "name": " ", "value": {"i32": 1}}, "E-IR-ID"),
        ("return", "E-JSON-TYPE"),
    ],
)
def test_statement_and_expression_rejections(stmt: Any, code: str) -> None:
    assert code_of(module_with(body=[stmt])) == code


def test_rejection_reports_pointer_and_span() -> None:
    doc = '{"id": "m", "version": "1", "functions": [\n  {"id": "f", "returnType": "I32",\n   "body": [{"op": "nope"}]}]}'
    diag = diag_of(doc)
    assert diag.code == "E-JSON-STATEMENT"
    assert diag.pointer == "/functions/0/body/0/op"
    assert diag.span == Span(3, 20)
    rendered = diag.render(doc, "m.json")
    assert rendered.splitlines()[0] == 'm.json:3:20: error[E-JSON-STATEMENT] unknown statement op "nope"'
    lines = rendered.splitlines()
    excerpt = next(i for i, line in enumerate(lines) if line.lstrip().startswith("3 |"))
    gutter = lines[excerpt].index("|") + 2
    assert lines[excerpt + 1] == " " * (gutter + 19) + "^"


def test_word_boundary_scan_allows_ordinary_names() -> None:
    body = [
        {"op": "set", "name": "callIndex", "value": {"i32": 1}},
        {"op": "return", "value": {"var": "callIndex"}},
    ]
    assert import_module(json.dumps(module_with(body=body))).functions[0].body[0] == ast.Set(
        "callIndex", ast.Literal(ast.LiteralKind.I32, 1)
    )
    assert code_of(module_with(body=[{"op": "set", "name": "calli", "value": {"i32": 1}}])) == "E-IR-CLR-REF"
    assert code_of(module_with({"string": "0x0A123456"})) == "E-IR-CLR-REF"


# --- budgets -------------------------------------------------------------------------------------


def nested_arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_depth_budget_at_and_over_the_limit() -> None:
    jsonscan.scan_document(nested_arrays(jsonscan.MAX_DEPTH))
    with pytest.raises(DotBoxDError) as info:
        jsonscan.scan_document(nested_arrays(jsonscan.MAX_DEPTH + 1))
    assert info.value.code == "E-JSON-LIMIT"


def test_hundred_thousand_deep_document_fails_fast_without_recursion() -> None:
    with pytest.raises(DotBoxDError) as info:
        import_module("[" * 100_000)
    assert info.value.code == "E-JSON-LIMIT"
    assert info.value.diagnostic.span == Span(1, 65)


def test_document_size_budget() -> None:
    at_limit = "[" + " " * (jsonscan.MAX_DOCUMENT_BYTES - 2) + "]"
    jsonscan.scan_document(at_limit.encode())
    with pytest.raises(DotBoxDError) as info:
        jsonscan.scan_document((at_limit + " ").encode())
    assert info.value.code == "E-JSON-LIMIT"


def test_items_budget() -> None:
    jsonscan.scan_document("[" + ",".join(["0"] * jsonscan.MAX_ITEMS) + "]")
    with pytest.raises(DotBoxDError) as info:
        jsonscan.scan_document("[" + ",".join(["0"] * (jsonscan.MAX_ITEMS + 1)) + "]")
    assert info.value.code == "E-JSON-LIMIT"
    members = ",".join(f'"k{i}":0' for i in range(jsonscan.MAX_ITEMS + 1))
    with pytest.raises(DotBoxDError) as info:
        jsonscan.scan_document("{" + members + "}")
    assert info.value.code == "E-JSON-LIMIT"


def test_token_budget() -> None:
    # 9 arrays of 10,000 numbers plus the containers: 90,011 tokens, then one array more.
    chunk = "[" + ",".join(["0"] * 10_000) + "]"
    jsonscan.scan_document("[" + ",".join([chunk] * 9) + "]")
    with pytest.raises(DotBoxDError) as info:
        jsonscan.scan_document("[" + ",".join([chunk] * 10) + "]")
    assert info.value.code == "E-JSON-LIMIT"
    assert "tokens" in info.value.diagnostic.message


def test_string_budgets() -> None:
    jsonscan.scan_document(json.dumps("a" * jsonscan.MAX_STRING_BYTES))
    with pytest.raises(DotBoxDError) as info:
        jsonscan.scan_document(json.dumps("a" * (jsonscan.MAX_STRING_BYTES + 1)))
    assert info.value.code == "E-JSON-LIMIT"
    # Multi-byte characters count in UTF-8 bytes: 32,768 two-byte characters are exactly 65,536 bytes.
    jsonscan.scan_document(json.dumps("\u00e9" * 32_768, ensure_ascii=False))
    with pytest.raises(DotBoxDError):
        jsonscan.scan_document(json.dumps("\u00e9" * 32_769, ensure_ascii=False))
    eight = [("b" * jsonscan.MAX_STRING_BYTES)] * 8
    jsonscan.scan_document(json.dumps(eight))
    with pytest.raises(DotBoxDError) as info:
        jsonscan.scan_document(json.dumps([*eight, "c"]))
    assert "all strings" in info.value.diagnostic.message


# --- hostile input never escapes as anything but a DotBoxDError ------------------------------------


@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data: bytes) -> None:
    with contextlib.suppress(DotBoxDError):
        import_module(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_random_json_never_crashes(value: Any) -> None:
    with contextlib.suppress(DotBoxDError):
        import_module(json.dumps(value))


@given(st.sampled_from(["id", "version", "functions", "capabilityRequests", "metadata"]), json_values)
def test_random_field_values_never_crash(field: str, value: Any) -> None:
    doc = module_with({"i32": 1})
    doc[field] = value
    try:
        module = import_module(json.dumps(doc))
    except DotBoxDError:
        return
    assert to_wire(module)["id"] == module.id


def test_caret_excerpt_counts_only_newlines() -> None:
    """U+2028 inside a string is not a line break for the scanner, so the excerpt must not treat it as one."""
    doc = '{"id": "m\u2028x", "version": "1",\n "functions": [], "bogus": 1}'
    diag = diag_of(doc)
    assert diag.span == Span(2, 19)
    lines = diag.render(doc).splitlines()
    excerpt = next(line for line in lines if line.lstrip().startswith("2 |"))
    assert excerpt.endswith('"functions": [], "bogus": 1}')
