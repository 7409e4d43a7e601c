"""The owned-list shape: a list the entrypoint builds by appending in a loop, then reads.

Why: the optimized backend appends in place to a list it proves owned (``runtime/optimized/owned.py``:
``xs = list.empty...; for i in a .. b { xs = list.add(xs, <scalar>); }``, the list read only by
``list.count``/``list.get``), and settles the adds' charges in bulk. The rest of the generator
never draws that shape (a fresh list local, only ever self-appended, never passed on), so without it
the differential tests would never run the in-place path. ``with_owned_list`` puts one such block at
the head of the entrypoint: a forRange of up to 40 iterations adding a scalar computed from the loop
variable (sometimes a second add under an ``if``), then ``list.count`` and one ``list.get`` compared
with the values the generator computed itself, returning a literal of the entry's type when they
differ (so a wrong item would show as a wrong result, not only in the usage counters).

``build_program`` draws the decision last, after every other choice, so a program without the block
is exactly the program the generator drew before the block existed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dotboxd.core import ast
from dotboxd.core.types import BOOL, F64, I32, I64, SandboxType, resolve_type

from . import vocab
from .exprs import call, i32
from .source import Source

K = ast.LiteralKind
B = ast.BinaryOp
LIST = "ownedList"
INDEX = "ownedIndex"
COUNT = "ownedCount"

Item = tuple[Callable[[ast.Expr], ast.Expr], Callable[[int], bool | int | float]]
"""How the added item is written from the loop variable, and its value for a loop value."""


def _item(src: Source, element: SandboxType) -> Item:
    if element == I32:
        k, c = src.integer(-3, 3), src.integer(-5, 5)
        return (
            lambda v: ast.Binary(B.ADD, ast.Binary(B.MUL, v, i32(k)), i32(c)),
            lambda i: i * k + c,
        )
    if element == I64:
        k = src.integer(-3, 3)
        return (
            lambda v: ast.Binary(B.MUL, call("numeric.toI64", v), ast.Literal(K.I64, k)),
            lambda i: i * k,
        )
    if element == F64:
        return (
            lambda v: ast.Binary(B.MUL, call("numeric.toF64", v), ast.Literal(K.F64, 0.5)),
            lambda i: i * 0.5,
        )
    return (  # Bool; the loop variable is never negative, so % is the same in C# and Python
        lambda v: ast.Binary(B.EQ, ast.Binary(B.REM, v, i32(2)), i32(0)),
        lambda i: i % 2 == 0,
    )


def with_owned_list(src: Source, fn: ast.Function, brands: tuple[str, ...]) -> ast.Function:
    """``fn`` with an owned-list block at the head of its body (module docstring)."""
    element = src.choice((I32, I64, F64, BOOL))
    write, value = _item(src, element)
    start = src.integer(0, 2)
    end = start + src.integer(0, 40)
    every = src.integer(2, 4) if src.chance(40) else 0
    var = ast.Var(INDEX)
    body: list[ast.Stmt] = []
    items: list[bool | int | float] = []
    for i in range(start, end):
        if every and i % every == 0:
            items.append(value(i + 1))
        items.append(value(i))
    if every:
        extra = ast.Set(LIST, call("list.add", ast.Var(LIST), write(ast.Binary(B.ADD, var, i32(1)))))
        body.append(ast.If(ast.Binary(B.EQ, ast.Binary(B.REM, var, i32(every)), i32(0)), (extra,)))
    body.append(ast.Set(LIST, call("list.add", ast.Var(LIST), write(var))))
    block: list[ast.Stmt] = [
        ast.Set(LIST, call("list.empty", generic=element)),
        ast.ForRange(INDEX, i32(start), i32(end), tuple(body)),
        ast.Set(COUNT, call("list.count", ast.Var(LIST))),
    ]
    ret = resolve_type(fn.return_type, brands)
    if vocab.literal_able(ret):
        differs = ast.Binary(B.NE, ast.Var(COUNT), i32(len(items)))
        if items:
            at = src.integer(0, len(items) - 1)
            got = call("list.get", ast.Var(LIST), i32(at))
            differs = ast.Binary(B.OR, differs, ast.Binary(B.NE, got, _literal(element, items[at])))
        block.append(ast.If(differs, (ast.Return(vocab.literal(src, ret)),)))
    return dataclasses.replace(fn, body=(*block, *fn.body))


_KINDS: dict[SandboxType, ast.LiteralKind] = {I32: K.I32, I64: K.I64, F64: K.F64, BOOL: K.BOOL}


def _literal(element: SandboxType, item: bool | int | float) -> ast.Literal:
    return ast.Literal(_KINDS[element], item)


__all__ = ["COUNT", "INDEX", "LIST", "with_owned_list"]
