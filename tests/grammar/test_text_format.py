"""The formatter: canonical layout, minimal parentheses, quoting, and the two examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from dotboxd.core import ast
from dotboxd.core.ast import BinaryOp, LiteralKind, UnaryOp
from dotboxd.grammar.formatter import format_expr, format_module, format_name
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

a, b, c = ast.Var("a"), ast.Var("b"), ast.Var("c")


def i32(n: int) -> ast.Literal:
    return ast.Literal(LiteralKind.I32, n)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (ast.Binary(BinaryOp.SUB, ast.Binary(BinaryOp.SUB, a, b), c), "a - b - c"),
        (ast.Binary(BinaryOp.SUB, a, ast.Binary(BinaryOp.SUB, b, c)), "a - (b - c)"),
        (ast.Binary(BinaryOp.MUL, ast.Binary(BinaryOp.ADD, a, b), c), "(a + b) * c"),
        (ast.Binary(BinaryOp.ADD, a, ast.Binary(BinaryOp.MUL, b, c)), "a + b * c"),
        (ast.Binary(BinaryOp.AND, ast.Binary(BinaryOp.OR, a, b), c), "(a || b) && c"),
        (ast.Binary(BinaryOp.OR, a, ast.Binary(BinaryOp.AND, b, c)), "a || b && c"),
        (ast.Binary(BinaryOp.EQ, ast.Binary(BinaryOp.LT, a, b), c), "a < b == c"),
        (ast.Binary(BinaryOp.LT, a, ast.Binary(BinaryOp.EQ, b, c)), "a < (b == c)"),
        (ast.Unary(UnaryOp.NOT, ast.Binary(BinaryOp.EQ, a, b)), "!(a == b)"),
        (ast.Binary(BinaryOp.EQ, ast.Unary(UnaryOp.NOT, a), b), "!a == b"),
        (i32(-5), "-5"),
        (ast.Unary(UnaryOp.NEG, i32(5)), "-(5)"),
        (ast.Unary(UnaryOp.NEG, i32(-5)), "-(-5)"),
        (ast.Unary(UnaryOp.NEG, ast.Unary(UnaryOp.NEG, a)), "-(-a)"),
        (ast.Unary(UnaryOp.NEG, ast.Binary(BinaryOp.ADD, a, b)), "-(a + b)"),
        (ast.Binary(BinaryOp.SUB, a, i32(-5)), "a - -5"),
        (ast.Literal(LiteralKind.I64, -(2**63)), "-9223372036854775808L"),
        (ast.Literal(LiteralKind.F64, 1e20), "1e+20"),
        (ast.Literal(LiteralKind.F64, 3.0), "3.0"),
        (ast.Literal(LiteralKind.F64, -0.0), "-0.0"),
        (
            ast.Literal(LiteralKind.STRING, 'q"\\\n\t\x01\x7f\u2028é'),
            '"q\\"\\\\\\n\\t\\u0001\x7f\u2028é"',
        ),
        (ast.Literal(LiteralKind.OPAQUE_ID, "p-1", "PlayerId"), 'opaque PlayerId "p-1"'),
        (ast.Literal(LiteralKind.PATH, "a/b.json"), 'path"a/b.json"'),
        (ast.Call("list.empty", (), ast.TypeRef("I32")), "list.empty[I32]()"),
        (ast.Call("f", (a, ast.Literal(LiteralKind.UNIT, None))), "f(a, ())"),
    ],
)
def test_expression_text(expr: ast.Expr, text: str) -> None:
    assert format_expr(expr) == text
    module = ast.Module(
        "m",
        "1.0.0",
        "1.0.0",
        (),
        (ast.Function("f", ast.Visibility.PRIVATE, (), ast.TypeRef("I32"), (ast.Return(expr),)),),
    )
    assert parse_text(format_module(module)) == module


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("level", "level"),
        ("game.world.kill", "game.world.kill"),
        ("_x1", "_x1"),
        ("if", "`if`"),
        ("opaque", "`opaque`"),
        ("a.", "`a.`"),
        ("a..b", "`a..b`"),
        ("1abc", "`1abc`"),
        ("loot-score", "`loot-score`"),
        ("x y", "`x y`"),
        ("a`b\\c", "`a\\`b\\\\c`"),
        ("é", "`é`"),
    ],
)
def test_names_are_plain_or_quoted(name: str, text: str) -> None:
    assert format_name(name) == text


def test_canonical_layout() -> None:
    module = parse_text(
        'module "demo" version "2" target "0.9.0"; meta "k" = "v"; requires "file.read";\n'
        "entrypoint fn main(n I32) -> I32 { total = 0; for i in 0..n { if i % 2 == 0 { continue; } "
        "else if i > 10 { break; } else { total = total + i; } } while false {} return total; }\n"
        "fn helper() -> Unit { return (); }"
    )
    assert format_module(module) == (
        'module "demo" version "2.0.0" target "0.9.0";\n'
        "\n"
        'requires "file.read";\n'
        "\n"
        'meta "k" = "v";\n'
        "\n"
        "entrypoint fn main(n I32) -> I32 {\n"
        "    total = 0;\n"
        "    for i in 0..n {\n"
        "        if i % 2 == 0 {\n"
        "            continue;\n"
        "        } else if i > 10 {\n"
        "            break;\n"
        "        } else {\n"
        "            total = total + i;\n"
        "        }\n"
        "    }\n"
        "    while false {}\n"
        "    return total;\n"
        "}\n"
        "\n"
        "fn helper() -> Unit {\n"
        "    return ();\n"
        "}\n"
    )


@pytest.mark.parametrize("name", ["loot-score", "config-reader"])
def test_examples_match_their_wire_twins_and_are_canonical(name: str) -> None:
    text = (EXAMPLES / f"{name}.dbk").read_text(encoding="utf-8")
    wire = (EXAMPLES / f"{name}.json").read_text(encoding="utf-8")
    module = parse_text(text, f"{name}.dbk")
    assert module == import_module(wire)
    assert format_module(module) == text
