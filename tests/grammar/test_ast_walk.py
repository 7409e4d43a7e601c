"""``dotboxd.core.ast_walk.expressions``: every expression of a block, in source order, iteratively."""

from __future__ import annotations

from dotboxd.core import ast
from dotboxd.core.ast_walk import expressions


def _i32(n: int) -> ast.Literal:
    return ast.Literal(ast.LiteralKind.I32, n)


def test_every_statement_op_and_expression_node_is_visited_in_source_order() -> None:
    call = ast.Call("f", (ast.Var("a"), ast.Unary(ast.UnaryOp.NEG, _i32(1))))
    body = (
        ast.Set("x", call),
        ast.If(
            ast.Binary(ast.BinaryOp.LT, ast.Var("x"), _i32(2)),
            (ast.Return(_i32(3)),),
            (ast.ExprStmt(ast.Var("y")),),
        ),
        ast.While(ast.Var("c"), (ast.Break(), ast.Continue())),
        ast.ForRange("i", _i32(4), _i32(5), (ast.Set("z", ast.Var("i")),)),
    )
    seen = [
        e.name if isinstance(e, (ast.Var, ast.Call)) else getattr(e, "value", type(e).__name__)
        for e in expressions(body)
    ]
    assert seen == ["f", "a", "Unary", 1, "Binary", "x", 2, 3, "y", "c", 4, 5, "i"]


def test_a_deeply_nested_expression_does_not_exhaust_the_stack() -> None:
    e: ast.Expr = _i32(0)
    for _ in range(20_000):
        e = ast.Unary(ast.UnaryOp.NEG, e)
    assert sum(1 for _ in expressions((ast.Return(e),))) == 20_001
