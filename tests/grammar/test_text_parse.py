"""Unit tests of the text form, one syntax form at a time (expected trees are written out by hand)."""

from __future__ import annotations

import json
import logging

import pytest
from lark import Lark

from dotboxd.core import ast
from dotboxd.core.ast import BinaryOp, LiteralKind
from dotboxd.core.diagnostics import DotBoxDError, Span
from dotboxd.grammar.text import keywords, parse_text
from dotboxd.grammar.wire import import_module

HEADER = 'module "m" version "1.0.0";\n'


def body_of(statements: str, signature: str = "fn f() -> I32") -> tuple[ast.Stmt, ...]:
    module = parse_text(f"{HEADER}{signature} {{\n{statements}\n}}\n")
    return module.functions[0].body


def expr_of(text: str) -> ast.Expr:
    (stmt,) = body_of(f"return {text};")
    assert isinstance(stmt, ast.Return)
    return stmt.value


def lit(kind: LiteralKind, value: ast.LiteralValue, brand: str | None = None) -> ast.Literal:
    return ast.Literal(kind, value, brand)


def i32(n: int) -> ast.Literal:
    return lit(LiteralKind.I32, n)


def var(name: str) -> ast.Var:
    return ast.Var(name)


def binary(op: BinaryOp, left: ast.Expr, right: ast.Expr) -> ast.Binary:
    return ast.Binary(op, left, right)


# --- the grammar itself --------------------------------------------------------------------------


def test_grammar_is_lalr_without_conflicts(caplog: pytest.LogCaptureFixture) -> None:
    """Lark resolves shift/reduce conflicts silently (as shifts); with debug on it logs them, and a
    conflict would mean some input parses differently from what the grammar text suggests."""
    from importlib import resources

    grammar = resources.files("dotboxd.grammar").joinpath("kernel.lark").read_text(encoding="utf-8")
    with caplog.at_level(logging.DEBUG, logger="lark"):
        Lark(grammar, parser="lalr", lexer="basic", keep_all_tokens=True, debug=True)
    conflicts = [r.getMessage() for r in caplog.records if "conflict" in r.getMessage().lower()]
    assert conflicts == []


def test_keywords_are_the_reserved_words() -> None:
    assert keywords() == {
        "module", "version", "target", "requires", "reason", "meta", "fn", "entrypoint", "private",
        "return", "if", "else", "while", "for", "in", "continue", "break", "true", "false", "opaque",
    }  # fmt: skip


# --- module header, requests, metadata -----------------------------------------------------------


def test_header_defaults_and_canonical_versions() -> None:
    m = parse_text('module "loot-score" version "v2";')
    assert (m.id, m.version, m.target_sandbox_version) == ("loot-score", "2.0.0", "1.0.0")
    assert m.functions == () and m.capability_requests == () and m.metadata == ()
    m = parse_text('module "m" version "1.2.3" target "1";')
    assert (m.version, m.target_sandbox_version) == ("1.2.3", "1.0.0")
    m = parse_text('module "m" version "1" target "0.9.0";')
    assert m.target_sandbox_version == "0.9.0"


def test_requests_metadata_and_item_order() -> None:
    m = parse_text(
        HEADER
        + 'meta "z" = "last";\n'
        + 'requires "file.read" reason "settings";\n'
        + "fn a() -> Unit { return (); }\n"
        + 'requires "clock.now";\n'
        + 'meta "a" = "first";\n'
        + "fn b() -> Unit { return (); }\n"
    )
    assert m.capability_requests == (
        ast.CapabilityRequest("file.read", "settings"),
        ast.CapabilityRequest("clock.now", None),
    )
    assert [r.pointer for r in m.capability_requests] == ["/capabilityRequests/0", "/capabilityRequests/1"]
    assert m.metadata == (("a", "first"), ("z", "last"))
    assert [(f.id, f.pointer) for f in m.functions] == [("a", "/functions/0"), ("b", "/functions/1")]


# --- functions, parameters, types ----------------------------------------------------------------


def test_function_signature_forms() -> None:
    m = parse_text(
        HEADER
        + "entrypoint fn main(level I32, lookup Map<String, List<I32>>) -> I32 { return level; }\n"
        + "private fn p() -> Unit { return (); }\n"
        + "fn q() -> Unit {}\n"
    )
    main, p, q = m.functions
    assert main.visibility is ast.Visibility.ENTRYPOINT
    assert main.parameters == (
        ast.Param("level", ast.TypeRef("I32")),
        ast.Param(
            "lookup", ast.TypeRef("Map", (ast.TypeRef("String"), ast.TypeRef("List", (ast.TypeRef("I32"),))))
        ),
    )
    assert main.return_type == ast.TypeRef("I32")
    assert p.visibility is ast.Visibility.PRIVATE and q.visibility is ast.Visibility.PRIVATE
    assert q.body == ()
    lookup_type = main.parameters[1].type
    assert lookup_type.pointer == "/functions/0/parameters/1/type"
    assert (
        lookup_type.arguments[1].arguments[0].pointer
        == "/functions/0/parameters/1/type/arguments/1/arguments/0"
    )


# --- statements ----------------------------------------------------------------------------------


def test_set_versus_expression_statements() -> None:
    s1, s2, s3, s4 = body_of("x = 1;\nx == 1;\nx;\nlog.info(x);")
    assert s1 == ast.Set("x", i32(1))
    assert s2 == ast.ExprStmt(binary(BinaryOp.EQ, var("x"), i32(1)))
    assert s3 == ast.ExprStmt(var("x"))
    assert s4 == ast.ExprStmt(ast.Call("log.info", (var("x"),)))


def test_control_flow_statements() -> None:
    (w, f, i, r) = body_of(
        "while a < 3 { a = a + 1; continue; }\n"
        "for i in 0..n { break; }\n"
        "if c { x = 1; } else { x = 2; }\n"
        "return x;"
    )
    assert w == ast.While(
        binary(BinaryOp.LT, var("a"), i32(3)),
        (ast.Set("a", binary(BinaryOp.ADD, var("a"), i32(1))), ast.Continue()),
    )
    assert f == ast.ForRange("i", i32(0), var("n"), (ast.Break(),))
    assert i == ast.If(var("c"), (ast.Set("x", i32(1)),), (ast.Set("x", i32(2)),))
    assert r == ast.Return(var("x"))


def test_else_if_is_an_else_block_holding_one_if() -> None:
    (stmt,) = body_of("if a { return 1; } else if b { return 2; } else { return 3; }")
    assert isinstance(stmt, ast.If)
    assert stmt.else_ == (ast.If(var("b"), (ast.Return(i32(2)),), (ast.Return(i32(3)),)),)
    assert stmt.else_[0].pointer == "/functions/0/body/0/else/0"
    assert stmt.else_[0].then[0].pointer == "/functions/0/body/0/else/0/then/0"
    (plain,) = body_of("if a {}")
    assert plain == ast.If(var("a"), (), ())


def test_for_range_bounds_are_full_expressions() -> None:
    (stmt,) = body_of("for k in a + 1..n * 2 {}")
    assert stmt == ast.ForRange(
        "k", binary(BinaryOp.ADD, var("a"), i32(1)), binary(BinaryOp.MUL, var("n"), i32(2)), ()
    )


# --- expressions ---------------------------------------------------------------------------------


def test_precedence_levels_loosest_to_tightest() -> None:
    e = expr_of("a || b && c == d < e + f * !g")
    expected = binary(
        BinaryOp.OR,
        var("a"),
        binary(
            BinaryOp.AND,
            var("b"),
            binary(
                BinaryOp.EQ,
                var("c"),
                binary(
                    BinaryOp.LT,
                    var("d"),
                    binary(
                        BinaryOp.ADD,
                        var("e"),
                        binary(BinaryOp.MUL, var("f"), ast.Unary(ast.UnaryOp.NOT, var("g"))),
                    ),
                ),
            ),
        ),
    )
    assert e == expected


_COMPARISONS = [BinaryOp.EQ, BinaryOp.NE, BinaryOp.LT, BinaryOp.LTE, BinaryOp.GT, BinaryOp.GTE]


@pytest.mark.parametrize("op", [op for op in BinaryOp if op not in _COMPARISONS], ids=lambda o: str(o.symbol))
def test_arithmetic_and_logic_operators_are_left_associative(op: BinaryOp) -> None:
    s = op.symbol
    assert expr_of(f"a {s} b {s} c") == binary(op, binary(op, var("a"), var("b")), var("c"))
    assert expr_of(f"a {s} (b {s} c)") == binary(op, var("a"), binary(op, var("b"), var("c")))


@pytest.mark.parametrize("op", _COMPARISONS, ids=lambda o: str(o.symbol))
def test_comparisons_do_not_chain(op: BinaryOp) -> None:
    s = op.symbol
    with pytest.raises(DotBoxDError) as info:
        expr_of(f"a {s} b {s} c")
    assert info.value.code == "E-TEXT-SYNTAX"
    assert expr_of(f"(a {s} b) {s} c") == binary(op, binary(op, var("a"), var("b")), var("c"))
    assert expr_of(f"a {s} (b {s} c)") == binary(op, var("a"), binary(op, var("b"), var("c")))


def test_parentheses_group_without_a_node() -> None:
    assert expr_of("(a + b) * c") == binary(BinaryOp.MUL, binary(BinaryOp.ADD, var("a"), var("b")), var("c"))
    assert expr_of("((a))") == var("a")


def test_negative_number_literals_versus_negation() -> None:
    assert expr_of("-5") == i32(-5)
    assert expr_of("- 5") == i32(-5)
    assert expr_of("-(5)") == ast.Unary(ast.UnaryOp.NEG, i32(5))
    assert expr_of("--5") == ast.Unary(ast.UnaryOp.NEG, i32(-5))
    assert expr_of("-(-5)") == ast.Unary(ast.UnaryOp.NEG, i32(-5))
    assert expr_of("-x") == ast.Unary(ast.UnaryOp.NEG, var("x"))
    assert expr_of("a - -5") == binary(BinaryOp.SUB, var("a"), i32(-5))
    assert expr_of("-5 * a") == binary(BinaryOp.MUL, i32(-5), var("a"))
    assert expr_of("-2147483648") == i32(-(2**31))
    assert expr_of("-9223372036854775808L") == lit(LiteralKind.I64, -(2**63))
    neg_zero = expr_of("-0.0")
    assert isinstance(neg_zero, ast.Literal) and json.dumps(neg_zero.value) == "-0.0"


def test_calls_generic_types_and_dotted_names() -> None:
    assert expr_of("math.abs(x)") == ast.Call("math.abs", (var("x"),))
    assert expr_of("game.world.kill()") == ast.Call("game.world.kill")
    assert expr_of("list.empty[I32]()") == ast.Call("list.empty", (), ast.TypeRef("I32"))
    e = expr_of("map.empty[Map<String, I32>]()")
    assert e == ast.Call("map.empty", (), ast.TypeRef("Map", (ast.TypeRef("String"), ast.TypeRef("I32"))))
    assert isinstance(e, ast.Call) and e.generic_type is not None
    assert e.generic_type.pointer == "/functions/0/body/0/value/genericType"
    assert expr_of("f(1, g(2), ())") == ast.Call(
        "f", (i32(1), ast.Call("g", (i32(2),)), lit(LiteralKind.UNIT, None))
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("()", lit(LiteralKind.UNIT, None)),
        ("true", lit(LiteralKind.BOOL, True)),
        ("false", lit(LiteralKind.BOOL, False)),
        ("42", i32(42)),
        ("2147483647", i32(2**31 - 1)),
        ("42L", lit(LiteralKind.I64, 42)),
        ("2147483648L", lit(LiteralKind.I64, 2**31)),
        ("1.5", lit(LiteralKind.F64, 1.5)),
        ("1e3", lit(LiteralKind.F64, 1000.0)),
        ("1E+3", lit(LiteralKind.F64, 1000.0)),
        ("2.5e-3", lit(LiteralKind.F64, 0.0025)),
        ("0.0", lit(LiteralKind.F64, 0.0)),
        (
            '"a\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"',
            lit(LiteralKind.STRING, 'a"b\\c/\b\f\n\r\té😀'),
        ),
        ('"raw é 😀"', lit(LiteralKind.STRING, "raw é 😀")),
        (
            'guid"0123ABCD-89ab-cdef-0123-456789ABCDEF"',
            lit(LiteralKind.GUID, "0123abcd-89ab-cdef-0123-456789abcdef"),
        ),
        ('path"config/settings.json"', lit(LiteralKind.PATH, "config/settings.json")),
        ('uri"https://example.com/a?b#c"', lit(LiteralKind.URI, "https://example.com/a?b#c")),
        ('opaque PlayerId "p-1"', lit(LiteralKind.OPAQUE_ID, "p-1", "PlayerId")),
    ],
)
def test_every_literal_kind(text: str, expected: ast.Literal) -> None:
    value = expr_of(text)
    assert value == expected
    assert isinstance(value, ast.Literal) and type(value.value) is type(expected.value)


def test_int_and_float_stay_distinct() -> None:
    assert expr_of("1") != expr_of("1.0")
    assert expr_of("1") != expr_of("1L")


# --- names ---------------------------------------------------------------------------------------


def test_quoted_names() -> None:
    m = parse_text(
        HEADER + "fn `odd-name`(`if` I32, `a b` `My Type`) -> I32 {\n"
        "    `x\\`y` = `if`;\n"
        "    return `f\\u00e9`(`a b`);\n"
        "}\n"
    )
    fn = m.functions[0]
    assert fn.id == "odd-name"
    assert [p.name for p in fn.parameters] == ["if", "a b"]
    assert fn.parameters[1].type == ast.TypeRef("My Type")
    assert fn.body == (ast.Set("x`y", var("if")), ast.Return(ast.Call("fé", (var("a b"),))))


def test_prefix_words_are_names_unless_a_quote_touches_them() -> None:
    assert expr_of("path") == var("path")
    assert expr_of("pathx") == var("pathx")
    assert expr_of("path.x") == var("path.x")
    assert expr_of("uri(guid)") == ast.Call("uri", (var("guid"),))
    assert expr_of('path"a"') == lit(LiteralKind.PATH, "a")
    assert expr_of("if.x") == var("if.x")


def test_comments_and_layout_do_not_matter() -> None:
    compact = parse_text('module "m" version "1";fn f(a I32)->I32{x=a*2;return x;}')
    spread = parse_text(
        '// a module\nmodule "m"   version "1" ;\n\n'
        "fn f( a I32 ) -> I32 { // comment\n"
        "\tx = a\n\t\t* 2 ;   // more\r\n"
        "  return x ;\n}\n// trailing"
    )
    assert compact == spread


# --- locations -----------------------------------------------------------------------------------


def test_spans_point_at_the_first_character_of_each_node() -> None:
    source = HEADER + "fn f() -> I32 {\n    x = (a + b) * -c;\n    return x;\n}\n"
    m = parse_text(source)
    stmt = m.functions[0].body[0]
    assert isinstance(stmt, ast.Set) and isinstance(stmt.value, ast.Binary)
    assert m.span == Span(1, 1)
    assert m.functions[0].span == Span(2, 1)
    assert stmt.span == Span(3, 5)
    assert stmt.value.span == Span(3, 9)  # the '(' that opens the product's left operand
    assert stmt.value.left.span == Span(3, 10)
    assert stmt.value.right.span == Span(3, 19)
    assert m.functions[0].body[1].span == Span(4, 5)


def test_pointers_match_the_wire_form_for_the_same_program() -> None:
    text = HEADER + (
        "fn f(a I32) -> I32 {\n"
        "    if a < 1 { return -a; } else { x = g[List<I32>](a, 2); }\n"
        "    for i in 0..a { while true { break; } }\n"
        "    return x;\n"
        "}\n"
    )
    from_text = parse_text(text)
    from_wire = import_module(json.dumps(_wire(from_text)))
    assert from_text == from_wire
    assert _pointers(from_text) == _pointers(from_wire)
    assert "/functions/0/body/0/then/0/value/operand" in _pointers(from_text)
    assert "/functions/0/body/0/else/0/value/genericType/arguments/0" in _pointers(from_text)


def _wire(module: ast.Module) -> dict[str, object]:
    from dotboxd.grammar.wire import to_wire

    return to_wire(module)


def _pointers(module: ast.Module) -> list[str]:
    from tests.grammar.test_text_roundtrip import iter_nodes

    return [node.pointer for node in iter_nodes(module)]


def test_bytes_input_is_utf8() -> None:
    source = HEADER + 'fn f() -> String { return "é"; }'
    assert parse_text(source.encode("utf-8")) == parse_text(source)
    with pytest.raises(DotBoxDError) as info:
        parse_text(b'module "m" version "1";\xff')
    assert info.value.code == "E-TEXT-SYNTAX"
    assert info.value.diagnostic.span == Span(1, 24)


def test_spec_document_is_in_step() -> None:
    """spec/text-syntax.md lists exactly the grammar's keywords and shows the two examples verbatim."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = (root / "spec" / "text-syntax.md").read_text(encoding="utf-8")
    blocks = spec.split("```text\n")[1:]
    bodies = [block.split("```", 1)[0] for block in blocks]
    keyword_block = next(b for b in bodies if b.startswith("module version"))
    assert set(keyword_block.split()) == keywords()
    for name in ("loot-score", "config-reader"):
        assert (root / "examples" / f"{name}.dbk").read_text(encoding="utf-8") in bodies
