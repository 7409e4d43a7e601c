"""The 200-level nesting limit of ``spec/validation.md`` is exact for every nesting construct.

Mutation testing (``reports/mutation.md``) showed that the structure pass could count an ``if``,
``while``, ``for`` or operator level as two, or stop one level early, without any test noticing:
the existing test only nested 150 and 400 additions. Here each construct is nested to exactly the
limit (accepted) and one level more (E-STRUCT-DEPTH). Function body statements are at level 1; a
statement's condition, bounds, value and inner statements are one level deeper than the statement.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dotboxd.core.ast import (
    Binary,
    BinaryOp,
    Expr,
    ForRange,
    Function,
    If,
    Literal,
    LiteralKind,
    Module,
    Return,
    Stmt,
    TypeRef,
    Visibility,
    While,
)

from .helpers import accept, code_of

LIMIT = 200


def one() -> Literal:
    return Literal(LiteralKind.I32, 1)


def program(body: tuple[Stmt, ...]) -> Module:
    main = Function("main", Visibility.ENTRYPOINT, (), TypeRef("I32"), (*body, Return(one())))
    return Module(
        id="m", version="1.0.0", target_sandbox_version="1.0.0", capability_requests=(), functions=(main,)
    )


def nested_ifs(levels: int) -> tuple[Stmt, ...]:
    inner: Stmt = Return(one())
    for _ in range(levels):
        inner = If(Literal(LiteralKind.BOOL, True), (inner,))
    return (inner,)


def nested_whiles(levels: int) -> tuple[Stmt, ...]:
    inner: Stmt = Return(one())
    for _ in range(levels):
        inner = While(Literal(LiteralKind.BOOL, True), (inner,))
    return (inner,)


def nested_fors(levels: int) -> tuple[Stmt, ...]:
    inner: Stmt = Return(one())
    for n in range(levels):
        inner = ForRange(f"i{n}", Literal(LiteralKind.I32, 0), one(), (inner,))
    return (inner,)


def nested_additions(levels: int) -> tuple[Stmt, ...]:
    expr: Expr = one()
    for _ in range(levels):
        expr = Binary(BinaryOp.ADD, expr, one())
    return (Return(expr),)


# (builder, the most levels that fit): k statements put the innermost `return` at level k + 1 and
# its literal at k + 2; an addition chain of k sits under a `return` at level 1, its leaves at k + 2.
CONSTRUCTS: dict[str, tuple[Callable[[int], tuple[Stmt, ...]], int]] = {
    "if": (nested_ifs, LIMIT - 2),
    "while": (nested_whiles, LIMIT - 2),
    "for": (nested_fors, LIMIT - 2),
    "addition": (nested_additions, LIMIT - 2),
}


@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_nesting_is_accepted_at_the_limit_and_refused_one_level_over(construct: str) -> None:
    build, most = CONSTRUCTS[construct]
    accept(program(build(most)))
    assert code_of(program(build(most + 1))) == "E-STRUCT-DEPTH"
