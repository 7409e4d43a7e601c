"""Small constructors for the Python ``ast`` nodes the code generator emits.

Why a module of its own: generated code is built from nodes, never from text, and every node kind we
build here is one the verifier allows. Keeping the constructors in one place keeps the emitter
readable and makes the set of shapes we produce easy to audit against ``verifier.ALLOWED_NODES``.
"""

from __future__ import annotations

import ast

RANGE = "_range"
"""The namespace name of ``builtins.range`` (the only builtin generated code may use)."""

Expr = ast.expr
Stmt = ast.stmt


def name(ident: str) -> ast.Name:
    return ast.Name(id=ident, ctx=ast.Load())


def store(ident: str) -> ast.Name:
    return ast.Name(id=ident, ctx=ast.Store())


def const(value: None | bool | int | float) -> ast.Constant:
    return ast.Constant(value=value)


def assign(target: str, value: Expr) -> ast.Assign:
    return ast.Assign(targets=[store(target)], value=value)


def assign2(first: str, second: str, value: Expr) -> ast.Assign:
    """``first, second = value`` (a stub or function returning a pair)."""
    pair = ast.Tuple(elts=[store(first), store(second)], ctx=ast.Store())
    return ast.Assign(targets=[pair], value=value)


def aug(target: str, op: ast.operator, value: Expr) -> ast.AugAssign:
    return ast.AugAssign(target=store(target), op=op, value=value)


def binop(left: Expr, op: ast.operator, right: Expr) -> ast.BinOp:
    return ast.BinOp(left=left, op=op, right=right)


def add(left: Expr, right: Expr) -> Expr:
    return binop(left, ast.Add(), right)


def sub(left: Expr, right: Expr) -> Expr:
    return binop(left, ast.Sub(), right)


def mul(left: Expr, right: Expr) -> Expr:
    return binop(left, ast.Mult(), right)


def compare(left: Expr, op: ast.cmpop, right: Expr) -> ast.Compare:
    return ast.Compare(left=left, ops=[op], comparators=[right])


def between(low: Expr, value: Expr, high: Expr) -> ast.Compare:
    """``low <= value <= high``."""
    return ast.Compare(left=low, ops=[ast.LtE(), ast.LtE()], comparators=[value, high])


def or_(*values: Expr) -> Expr:
    return ast.BoolOp(op=ast.Or(), values=list(values))


def and_(*values: Expr) -> Expr:
    return ast.BoolOp(op=ast.And(), values=list(values))


def not_(value: Expr) -> Expr:
    return ast.UnaryOp(op=ast.Not(), operand=value)


def neg(value: Expr) -> Expr:
    return ast.UnaryOp(op=ast.USub(), operand=value)


def call(func: str, *args: Expr) -> ast.Call:
    return ast.Call(func=name(func), args=list(args), keywords=[])


def expr_stmt(value: Expr) -> ast.Expr:
    return ast.Expr(value=value)


def if_(test: Expr, body: list[Stmt], orelse: list[Stmt] | None = None) -> ast.If:
    return ast.If(test=test, body=body or [ast.Pass()], orelse=orelse or [])


def tuple_(*values: Expr) -> ast.Tuple:
    return ast.Tuple(elts=list(values), ctx=ast.Load())


def ret(value: Expr) -> ast.Return:
    return ast.Return(value=value)


def function(fn_name: str, params: list[str], body: list[Stmt]) -> ast.FunctionDef:
    arguments = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=p) for p in params],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    return ast.FunctionDef(
        name=fn_name, args=arguments, body=body or [ast.Pass()], decorator_list=[], returns=None
    )


def range_loop(target: str, args: list[Expr], body: list[Stmt], orelse: list[Stmt] | None = None) -> ast.For:
    return ast.For(target=store(target), iter=call(RANGE, *args), body=body, orelse=orelse or [])


def while_true(body: list[Stmt]) -> ast.While:
    return ast.While(test=const(True), body=body, orelse=[])
