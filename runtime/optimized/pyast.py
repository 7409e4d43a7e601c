"""Small constructors for the Python ``ast`` nodes the code generator emits.

Why a module of its own: generated code is built from nodes, never from text, and every node kind
built here is one the verifier allows. Nodes get their (dummy) source positions at construction,
which is much cheaper than a ``fix_missing_locations`` walk over the finished module; context and
operator nodes are shared singletons.
"""

from __future__ import annotations

import ast
from typing import Any

RANGE = "_range"
"""The namespace name of ``builtins.range`` (the only builtin generated code may use)."""

Expr = ast.expr
Stmt = ast.stmt

LOAD = ast.Load()
STORE = ast.Store()
ADD = ast.Add()
SUB = ast.Sub()
MULT = ast.Mult()
_POS: dict[str, Any] = {"lineno": 1, "col_offset": 0, "end_lineno": 1, "end_col_offset": 0}


def name(ident: str) -> ast.Name:
    shared = _SHARED.get(ident)
    if shared is not None:
        return shared
    return ast.Name(ident, LOAD, **_POS)


_SHARED = {ident: ast.Name(ident, LOAD, **_POS) for ident in ("R", "f", "d", "lr")}
"""Loads of the fixed parameters are shared nodes: ``compile()`` never mutates its input and the
generator never patches a name, so one node per name serves the whole module."""


def store(ident: str) -> ast.Name:
    return ast.Name(ident, STORE, **_POS)


def const(value: bool | int | float | None) -> ast.Constant:
    return ast.Constant(value, **_POS)


def assign(target: str, value: Expr) -> ast.Assign:
    return ast.Assign([store(target)], value, **_POS)


def assign2(first: str, second: str, value: Expr) -> ast.Assign:
    """``first, second = value`` (a stub or function returning a pair)."""
    pair = ast.Tuple([store(first), store(second)], STORE, **_POS)
    return ast.Assign([pair], value, **_POS)


def aug(target: str, op: ast.operator, value: Expr) -> ast.AugAssign:
    return ast.AugAssign(store(target), op, value, **_POS)


def binop(left: Expr, op: ast.operator, right: Expr) -> ast.BinOp:
    return ast.BinOp(left, op, right, **_POS)


def add(left: Expr, right: Expr) -> Expr:
    return binop(left, ADD, right)


def sub(left: Expr, right: Expr) -> Expr:
    return binop(left, SUB, right)


def mul(left: Expr, right: Expr) -> Expr:
    return binop(left, MULT, right)


def compare(left: Expr, op: ast.cmpop, right: Expr) -> ast.Compare:
    return ast.Compare(left, [op], [right], **_POS)


def or_(*values: Expr) -> Expr:
    return ast.BoolOp(ast.Or(), list(values), **_POS)


def and_(*values: Expr) -> Expr:
    return ast.BoolOp(ast.And(), list(values), **_POS)


def not_(value: Expr) -> Expr:
    return ast.UnaryOp(ast.Not(), value, **_POS)


def neg(value: Expr) -> Expr:
    return ast.UnaryOp(ast.USub(), value, **_POS)


def call(func: str, *args: Expr) -> ast.Call:
    return ast.Call(name(func), list(args), [], **_POS)


def expr_stmt(value: Expr) -> ast.Expr:
    return ast.Expr(value, **_POS)


def if_(test: Expr, body: list[Stmt], orelse: list[Stmt] | None = None) -> ast.If:
    return ast.If(test, body or [pass_()], orelse or [], **_POS)


def pass_() -> ast.Pass:
    return ast.Pass(**_POS)


def break_() -> ast.Break:
    return ast.Break(**_POS)


def continue_() -> ast.Continue:
    return ast.Continue(**_POS)


def tuple_(*values: Expr) -> ast.Tuple:
    return ast.Tuple(list(values), LOAD, **_POS)


def ret(value: Expr) -> ast.Return:
    return ast.Return(value, **_POS)


def function(fn_name: str, params: list[str], body: list[Stmt]) -> ast.FunctionDef:
    arguments = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(p, **_POS) for p in params],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    return ast.FunctionDef(fn_name, arguments, body or [pass_()], [], None, **_POS)


def range_loop(target: str, args: list[Expr], body: list[Stmt], orelse: list[Stmt] | None = None) -> ast.For:
    return ast.For(store(target), call(RANGE, *args), body, orelse or [], **_POS)


def while_true(body: list[Stmt]) -> ast.While:
    return ast.While(const(True), body, [], **_POS)


def module(body: list[Stmt]) -> ast.Module:
    return ast.Module(body, [])
