"""Rejections of the text form: golden diagnostics, the wire's codes and pointers for bad names and
literals, and every budget (checked before any recursion)."""

from __future__ import annotations

import json

import pytest

from dotboxd.core.diagnostics import DotBoxDError, Span
from dotboxd.grammar import jsonscan
from dotboxd.grammar.text import MAX_TREE_DEPTH, parse_text
from dotboxd.grammar.wire import import_module, to_wire

HEADER = 'module "m" version "1.0.0";\n'
FN = HEADER + "fn f() -> I32 {\n"


def rejection(source: str | bytes) -> DotBoxDError:
    with pytest.raises(DotBoxDError) as info:
        parse_text(source, "demo.dbk")
    return info.value


def render(source: str) -> str:
    return rejection(source).diagnostic.render(source, "demo.dbk")


# --- golden diagnostics --------------------------------------------------------------------------


def test_golden_missing_semicolon() -> None:
    assert render(FN + "    x = 1\n}\n") == (
        "demo.dbk:3:10: error[E-TEXT-SYNTAX] missing ';' (found '}' on line 4); expected one of "
        "'!=', '%', '&&', '*', '+', '-', '/', ';', '<', '<=', '==', '>', '>=', '||'\n"
        "    3 |     x = 1\n"
        "                 ^\n"
        "  hint: simple statements and declarations end with ';'"
    )


def test_golden_unterminated_string() -> None:
    assert render(FN + '    x = "abc;\n}\n') == (
        "demo.dbk:3:9: error[E-TEXT-SYNTAX] unterminated string or name: the closing quote is missing "
        "on this line\n"
        '    3 |     x = "abc;\n'
        "                ^\n"
        "  hint: a literal ends on the line where it starts; write line breaks as \\n"
    )


def test_golden_keyword_used_as_a_name() -> None:
    assert render(FN + "    if = 1;\n}\n") == (
        "demo.dbk:3:8: error[E-TEXT-SYNTAX] unexpected '='; expected one of '!', '(', '-', 'false', "
        '\'opaque\', \'true\', a "string", a `quoted name`, a guid"..." literal, a name, a path"..." '
        'literal, a uri"..." literal, an F64 number, an I64 integer (42L), an integer\n'
        "    3 |     if = 1;\n"
        "               ^\n"
        "  hint: 'if' is a keyword; a name spelled like a keyword is written in backticks: `if`"
    )


def test_golden_unexpected_end() -> None:
    text = render(FN + "    x = 1;\n")
    assert text.startswith(
        "demo.dbk:3:11: error[E-TEXT-SYNTAX] unexpected end of the input; expected one of "
    )
    assert "'}'" in text and "'return'" in text
    assert text.endswith(
        "    3 |     x = 1;\n                  ^\n  hint: the text ends inside a block: close every '{' with '}'"
    )


def test_golden_bad_path_literal() -> None:
    assert render(FN + '    return file.readText(path"../secret.txt");\n}\n') == (
        "demo.dbk:3:26: error[E-JSON-PATH] the path literal \"../secret.txt\" has a '..' segment\n"
        "  at /functions/0/body/0/value/args/0/path\n"
        '    3 |     return file.readText(path"../secret.txt");\n'
        "                                 ^^^^^^^^^^^^^^^^^^^"
    )


def test_golden_host_reference() -> None:
    assert render(FN + '    return System.IO.File.ReadAllText(path"a");\n}\n') == (
        'demo.dbk:3:12: error[E-IR-CLR-REF] a call name contains the host-reference fragment "System."\n'
        "  at /functions/0/body/0/value/call\n"
        '    3 |     return System.IO.File.ReadAllText(path"a");\n'
        "                   ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "  evidence: fragment = System.\n"
        "  hint: kernels cannot name host types, assemblies or IL; expose host operations as bindings"
    )


# --- syntax errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "span", "fragment"),
    [
        ("", Span(1, 1), "unexpected end of the input; expected 'module'"),
        ("module m version 1;", Span(1, 8), "unexpected name 'm'"),
        (FN + "    return;\n}", Span(3, 11), "unexpected ';'"),
        (FN + "    x = 1 $ 2;\n}", Span(3, 11), "unexpected character '$'"),
        (FN + "    x = 1\u00a0;\n}", Span(3, 10), "unexpected character U+00A0"),
        (FN + '    x = "a\\qb";\n}', Span(3, 11), 'invalid escape sequence "\\\\q"'),
        (FN + '    x = "a\tb";\n}', Span(3, 11), "raw control character U+0009"),
        (FN + '    x = "\\ud800";\n}', Span(3, 10), "lone UTF-16 surrogate"),
        (FN + "    x = `a\\qb`;\n}", Span(3, 11), "invalid escape"),
        (FN + "    x = 007;\n}", Span(3, 9), "leading zero"),
        (FN + "    x = 1.;\n}", Span(3, 10), "unexpected character '.'"),
        (FN + "    x = a < b > c;\n}", Span(3, 15), "unexpected '>'"),
        (FN + "    x = f<I32>();\n}", Span(3, 14), "unexpected '>'"),
        (HEADER + "fn f() I32 {}", Span(2, 8), "expected '->'"),
        (HEADER + "\ufefffn f() -> I32 {}", Span(2, 1), "U+FEFF"),
        ("\ufeff" + HEADER, Span(1, 1), "byte-order mark"),
        (FN + "    x = 'a';\n}", Span(3, 9), 'unexpected character "\'"'),
    ],
)
def test_syntax_errors(source: str, span: Span, fragment: str) -> None:
    error = rejection(source)
    assert error.code == "E-TEXT-SYNTAX"
    assert error.diagnostic.span == span
    assert fragment in error.diagnostic.message


def test_generic_call_with_angle_brackets_gets_a_hint() -> None:
    error = rejection(FN + "    x = list.empty<I32>();\n}\n")
    assert error.diagnostic.hint == "a generic call is written with brackets: list.empty[I32]()"


def test_lone_surrogate_in_source_text() -> None:
    error = rejection(HEADER + "fn f() -> I32 { x = \ud800; }")
    assert error.code == "E-TEXT-SYNTAX"
    assert error.diagnostic.span == Span(2, 21)


# --- the wire's literal and identifier rules, with the wire's codes and pointers -----------------


@pytest.mark.parametrize(
    ("expr", "code", "pointer_tail"),
    [
        ("2147483648", "E-JSON-TYPE", "/i32"),
        ("-2147483649", "E-JSON-TYPE", "/i32"),
        ("-(2147483648)", "E-JSON-TYPE", "/operand/i32"),
        ("9223372036854775808L", "E-JSON-TYPE", "/i64"),
        ("99999999999999999999999999999", "E-JSON-TYPE", "/i32"),
        ("1e309", "E-JSON-TYPE", "/f64"),
        ("-1e309", "E-JSON-TYPE", "/f64"),
        ('guid"0123-45"', "E-JSON-GUID", "/guid"),
        ('path"/etc/passwd"', "E-JSON-PATH", "/path"),
        ('path"C:\\\\Windows\\\\win.ini"', "E-JSON-PATH", "/path"),
        ('path"CON.txt"', "E-JSON-PATH", "/path"),
        ('uri"https://user@host/x"', "E-JSON-URI", "/uri"),
        ('uri"file.json"', "E-JSON-URI", "/uri"),
        ('opaque playerId "p"', "E-JSON-OPAQUE", "/opaqueId/type"),
        ('opaque PlayerId "p 1"', "E-JSON-OPAQUE", "/opaqueId/value"),
        ('"loads System.Reflection.Assembly"', "E-IR-CLR-REF", "/string"),
        ('path"plugin.dll"', "E-IR-CLR-REF", "/path"),
        ("Type.GetType()", "E-IR-CLR-REF", "/call"),
        ("`   `", "E-IR-ID", "/var"),
        ("`a\\u0007`()", "E-IR-ID", "/call"),
    ],
)
def test_literal_and_name_rules_match_the_wire(expr: str, code: str, pointer_tail: str) -> None:
    error = rejection(FN + f"    return {expr};\n}}\n")
    assert error.code == code
    assert error.diagnostic.pointer == "/functions/0/body/0/value" + pointer_tail


@pytest.mark.parametrize(
    ("source", "code", "pointer"),
    [
        ('module "" version "1";', "E-IR-ID", "/id"),
        ('module "m" version "1.0";', "E-JSON-VERSION", "/version"),
        ('module "m" version "1" target "x";', "E-JSON-VERSION", "/targetSandboxVersion"),
        (HEADER + 'requires "System.IO";', "E-IR-CLR-REF", "/capabilityRequests/0/id"),
        (
            HEADER + 'requires "a"; requires "b" reason "via rawIL loader";',
            "E-IR-CLR-REF",
            "/capabilityRequests/1/reason",
        ),
        (HEADER + 'meta "a/b" = "1"; meta "a/b" = "2";', "E-JSON-SCHEMA", "/metadata/a~1b"),
        (HEADER + 'meta "\\n" = "1";', "E-IR-ID", "/metadata/\n"),
        (HEADER + 'meta "k" = "Culture=neutral";', "E-IR-CLR-REF", "/metadata/k"),
        (HEADER + "fn `\\t`() -> I32 {}", "E-IR-ID", "/functions/0/id"),
        (HEADER + "fn f(` ` I32) -> I32 {}", "E-IR-ID", "/functions/0/parameters/0/name"),
        (HEADER + "fn f() -> `List<I32>` {}", "E-JSON-TYPE", "/functions/0/returnType"),
        (HEADER + "fn f() -> Map<`a>`, I32> {}", "E-JSON-TYPE", "/functions/0/returnType/arguments/0"),
        (HEADER + "fn f() -> `` <I32> {}", "E-IR-ID", "/functions/0/returnType/name"),
        (HEADER + "fn f() -> I32 { for `` in 0..1 {} }", "E-IR-ID", "/functions/0/body/0/local"),
        (HEADER + "fn f() -> I32 { `msil` = 1; }", "E-IR-CLR-REF", "/functions/0/body/0/name"),
    ],
)
def test_declaration_rules_match_the_wire(source: str, code: str, pointer: str) -> None:
    error = rejection(source)
    assert error.code == code
    assert error.diagnostic.pointer == pointer


def test_the_same_bad_literal_gets_the_same_code_and_pointer_in_both_forms() -> None:
    text_error = rejection(FN + '    return f(1, path"a//b");\n}\n')
    wire = {
        "id": "m",
        "version": "1.0.0",
        "functions": [
            {
                "id": "f",
                "returnType": "I32",
                "body": [{"op": "return", "value": {"call": "f", "args": [{"i32": 1}, {"path": "a//b"}]}}],
            }
        ],
    }
    with pytest.raises(DotBoxDError) as info:
        import_module(json.dumps(wire))
    assert (text_error.code, text_error.diagnostic.pointer) == (
        info.value.code,
        info.value.diagnostic.pointer,
    )
    assert text_error.diagnostic.message == info.value.diagnostic.message


# --- budgets -------------------------------------------------------------------------------------


def test_source_size_budget() -> None:
    padding = "// " + "x" * 100 + "\n"
    source = HEADER + padding * (jsonscan.MAX_DOCUMENT_BYTES // len(padding) + 1)
    assert rejection(source).code == "E-JSON-LIMIT"
    assert rejection(source.encode("utf-8")).code == "E-JSON-LIMIT"


def test_string_budget_at_n_and_n_plus_one() -> None:
    limit = jsonscan.MAX_STRING_BYTES
    parse_text(FN + f'    return "{"a" * limit}";\n}}\n')
    error = rejection(FN + f'    return "{"a" * (limit + 1)}";\n}}\n')
    assert error.code == "E-JSON-LIMIT"
    assert error.diagnostic.evidence["actual"] == limit + 1


def test_token_budget() -> None:
    error = rejection(FN + "    x = 1;\n" * (jsonscan.MAX_TOKENS // 4 + 1) + "}\n")
    assert error.code == "E-JSON-LIMIT"
    assert "tokens" in error.diagnostic.message


def test_bracket_depth_at_n_and_n_plus_one() -> None:
    limit = jsonscan.MAX_DEPTH
    # The function body's '{' is the first bracket, so limit - 1 parentheses fit exactly.
    parse_text(FN + "    x = " + "(" * (limit - 1) + "1" + ")" * (limit - 1) + ";\n}\n")
    error = rejection(FN + "    x = " + "(" * limit + "1" + ")" * limit + ";\n}\n")
    assert error.code == "E-JSON-LIMIT"
    assert error.diagnostic.span == Span(3, 9 + limit - 1)


def test_wire_depth_is_enforced_exactly_like_the_wire() -> None:
    """`x = !!...!a`: module, functions, function, body, statement, value = 6 levels, then one per
    `!`. 58 fit in the wire's 64; at 59 both forms reject at the same pointer."""
    module = parse_text(FN + "    x = " + "!" * 58 + "a;\n}\n")
    wire = to_wire(module)
    assert import_module(json.dumps(wire)) == module
    statement = wire["functions"][0]["body"][0]
    statement["value"] = {"unary": "not", "operand": statement["value"]}
    with pytest.raises(DotBoxDError) as info:
        import_module(json.dumps(wire))
    text_error = rejection(FN + "    x = " + "!" * 59 + "a;\n}\n")
    assert text_error.code == info.value.code == "E-JSON-LIMIT"
    assert text_error.diagnostic.pointer == info.value.diagnostic.pointer
    assert text_error.diagnostic.span == Span(3, 9 + 59)  # the innermost `a`, the 65th level


def test_total_string_budget_of_the_wire_form() -> None:
    chunk = "s" * 60_000
    body = "".join(f'    x{i} = "{chunk}";\n' for i in range(9))  # 540,000 bytes of strings < 1 MiB text
    error = rejection(FN + body + "}\n")
    assert error.code == "E-JSON-LIMIT"
    assert "wire form" in error.diagnostic.message
    assert error.diagnostic.span is not None and error.diagnostic.span.line >= 3


@pytest.mark.parametrize(
    "source",
    [
        FN + "    x = " + "+".join(["a"] * 5000) + ";\n}\n",
        FN + "    x = " + "!" * 50_000 + "a;\n}\n",
        FN + "    x = " + "-" * 50_000 + "a;\n}\n",
        HEADER + "fn f() -> " + "List<" * 5000 + "I32" + ">" * 5000 + " {}\n",
        FN + "    " + "if a {} else " * 5000 + "{}\n}\n",
    ],
    ids=["binary-chain", "not-chain", "neg-chain", "type-nesting", "else-if-chain"],
)
def test_deep_trees_without_brackets_are_rejected_cleanly(source: str) -> None:
    error = rejection(source)
    assert error.code == "E-JSON-LIMIT"
    assert str(MAX_TREE_DEPTH) in error.diagnostic.message


def test_a_hundred_thousand_open_parentheses_fail_fast() -> None:
    error = rejection(FN + "    x = " + "(" * 100_000)
    assert error.code == "E-JSON-LIMIT"
    assert error.diagnostic.span == Span(3, 9 + jsonscan.MAX_DEPTH - 1)
