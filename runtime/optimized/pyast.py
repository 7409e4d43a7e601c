"""Small constructors for the Python ``ast`` nodes the code generator emits.

Why a module of its own: generated code is built from nodes, never from text, and every node kind
built here is one the verifier allows.

Why the node classes are subclasses: ``compile()`` needs a source position on every statement and
expression, and setting four position attributes on each node is most of the cost of building it
(a ``fix_missing_locations`` walk afterwards is dearer still). The classes below are the ``ast``
classes themselves plus one fixed position held as *class* attributes, which ``compile()`` reads
like instance attributes; they add no fields, methods or behaviour, keep the ``ast`` class names
(``ast.unparse`` and ``ast.dump`` dispatch on the name) and are what the verifier's allowlist names
next to the plain ``ast`` classes. Context and operator nodes are shared singletons.
"""

from __future__ import annotations

import ast
from typing import Any, TypeVar

RANGE = "_range"
"""The namespace name of ``builtins.range`` (the only builtin generated code may use)."""

Expr = ast.expr
Stmt = ast.stmt

_A = TypeVar("_A", bound=ast.AST)

POSITION: dict[str, Any] = {"lineno": 1, "col_offset": 0, "end_lineno": 1, "end_col_offset": 0}
"""The one source position of every generated node (generated code has no meaningful lines)."""


def _positioned(base: type[_A]) -> type[_A]:
    """``base`` with ``POSITION`` as class attributes (same name, no new fields or behaviour)."""
    namespace: dict[str, Any] = {**POSITION, "__slots__": (), "__module__": __name__, "__doc__": base.__doc__}
    return type(base.__name__, (base,), namespace)


Name = _positioned(ast.Name)
Constant = _positioned(ast.Constant)
Tuple = _positioned(ast.Tuple)
Call = _positioned(ast.Call)
BinOp = _positioned(ast.BinOp)
UnaryOp = _positioned(ast.UnaryOp)
BoolOp = _positioned(ast.BoolOp)
Compare = _positioned(ast.Compare)
Assign = _positioned(ast.Assign)
AugAssign = _positioned(ast.AugAssign)
If = _positioned(ast.If)
While = _positioned(ast.While)
For = _positioned(ast.For)
Break = _positioned(ast.Break)
Continue = _positioned(ast.Continue)
Pass = _positioned(ast.Pass)
ExprStmt = _positioned(ast.Expr)
Return = _positioned(ast.Return)
FunctionDef = _positioned(ast.FunctionDef)
Arg = _positioned(ast.arg)

POSITIONED: dict[type[ast.AST], type[ast.AST]] = {
    cls: cls.__mro__[1]
    for cls in (
        Name,
        Constant,
        Tuple,
        Call,
        BinOp,
        UnaryOp,
        BoolOp,
        Compare,
        Assign,
        AugAssign,
        If,
        While,
        For,
        Break,
        Continue,
        Pass,
        ExprStmt,
        Return,
        FunctionDef,
        Arg,
    )
}
"""Each positioned class -> the ``ast`` class it stands for (the verifier treats them as one)."""

LOAD = ast.Load()
STORE = ast.Store()
ADD = ast.Add()
SUB = ast.Sub()
MULT = ast.Mult()
DIV = ast.Div()
FLOORDIV = ast.FloorDiv()
MOD = ast.Mod()
LT = ast.Lt()
LTE = ast.LtE()
GT = ast.Gt()
GTE = ast.GtE()
EQ = ast.Eq()
NOTEQ = ast.NotEq()
AND = ast.And()
OR = ast.Or()
NOT = ast.Not()
USUB = ast.USub()


def name(ident: str) -> ast.Name:
    shared = _SHARED.get(ident)
    if shared is not None:
        return shared
    return Name(ident, LOAD)


_SHARED = {ident: Name(ident, LOAD) for ident in ("R", "f", "d", "lr")}
"""Loads of the fixed parameters are shared nodes: ``compile()`` never mutates its input and the
generator never patches a name, so one node per name serves the whole module."""


def store(ident: str) -> ast.Name:
    return _FUEL_STORE if ident == "f" else Name(ident, STORE)


_FUEL_STORE = Name("f", STORE)
"""The store to the fuel local, shared like the parameter loads."""


def const(value: bool | int | float | None) -> ast.Constant:
    return Constant(value)


def assign(target: str, value: Expr) -> ast.Assign:
    return Assign([store(target)], value)


def assign2(first: str, second: str, value: Expr) -> ast.Assign:
    """``first, second = value`` (a stub or function returning a pair)."""
    return Assign([Tuple([store(first), store(second)], STORE)], value)


def aug(target: str, op: ast.operator, value: Expr) -> ast.AugAssign:
    return AugAssign(store(target), op, value)


def binop(left: Expr, op: ast.operator, right: Expr) -> ast.BinOp:
    return BinOp(left, op, right)


def add(left: Expr, right: Expr) -> Expr:
    return BinOp(left, ADD, right)


def sub(left: Expr, right: Expr) -> Expr:
    return BinOp(left, SUB, right)


def mul(left: Expr, right: Expr) -> Expr:
    return BinOp(left, MULT, right)


def compare(left: Expr, op: ast.cmpop, right: Expr) -> ast.Compare:
    return Compare(left, [op], [right])


def or_(*values: Expr) -> Expr:
    return BoolOp(OR, list(values))


def and_(*values: Expr) -> Expr:
    return BoolOp(AND, list(values))


def not_(value: Expr) -> Expr:
    return UnaryOp(NOT, value)


def neg(value: Expr) -> Expr:
    return UnaryOp(USUB, value)


def call(func: str, *args: Expr) -> ast.Call:
    callee = _CALLEES.get(func)
    if callee is None:
        callee = _CALLEES[func] = Name(func, LOAD)
    return Call(callee, list(args), [])


_CALLEES: dict[str, ast.Name] = {}
"""Callee names are shared nodes too (the generator never marks or patches a callee); the table
only ever holds the stub, helper and generated-function names, so it stays small."""


def expr_stmt(value: Expr) -> ast.Expr:
    return ExprStmt(value)


def if_(test: Expr, body: list[Stmt], orelse: list[Stmt] | None = None) -> ast.If:
    return If(test, body or [Pass()], orelse or [])


def pass_() -> ast.Pass:
    return Pass()


def break_() -> ast.Break:
    return Break()


def continue_() -> ast.Continue:
    return Continue()


def tuple_(*values: Expr) -> ast.Tuple:
    return Tuple(list(values), LOAD)


def ret(value: Expr) -> ast.Return:
    return Return(value)


def function(fn_name: str, params: list[str], body: list[Stmt]) -> ast.FunctionDef:
    arguments = ast.arguments(
        posonlyargs=[],
        args=[Arg(p) for p in params],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    return FunctionDef(fn_name, arguments, body or [Pass()], [], None)


def range_loop(target: str, args: list[Expr], body: list[Stmt], orelse: list[Stmt] | None = None) -> ast.For:
    return For(Name(target, STORE), Call(Name(RANGE, LOAD), args, []), body or [Pass()], orelse or [])


def while_true(body: list[Stmt]) -> ast.While:
    return While(Constant(True), body, [])


def module(body: list[Stmt]) -> ast.Module:
    return ast.Module(body, [])
