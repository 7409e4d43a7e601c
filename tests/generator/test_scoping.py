"""The generator's scope bookkeeping agrees with the validator's names/scopes and type passes.

``Scope.merge_if`` decides which locals survive an ``if``; these tests build the four exit
combinations by hand and check, for every local, that reading it after the ``if`` validates exactly
when the generator's scope says it is readable."""

from __future__ import annotations

import pytest

from dotboxd.conformance.generator.context import FunctionSig, FunctionState, ModuleEnv, Scope
from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.types import I32
from dotboxd.validator.api import validate

ONE = ast.Literal(ast.LiteralKind.I32, 1)
COND = ast.Literal(ast.LiteralKind.BOOL, True)


def _branch(names: list[str], exits: bool) -> tuple[ast.Stmt, ...]:
    body: list[ast.Stmt] = [ast.Set(n, ONE) for n in names]
    if exits:
        body.append(ast.Return(ONE))
    return tuple(body)


def _module(stmt: ast.If, read: str) -> ast.Module:
    body = (ast.Set("shared0", ONE), stmt, ast.Return(ast.Var(read)))
    fn = ast.Function("main", ast.Visibility.ENTRYPOINT, (), ast.TypeRef("I32"), body)
    return ast.Module("m", "1.0.0", "1.0.0", (), (fn,))


@pytest.mark.parametrize(
    ("then_exits", "else_exits"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_if_merge_matches_the_validator(then_exits: bool, else_exits: bool) -> None:
    then_names, else_names = ["both", "only_then"], ["both", "only_else"]
    env = ModuleEnv((), ())
    state = FunctionState(FunctionSig("main", (), I32), {}, 100)
    scope = Scope(env, state, {})
    scope.declare("shared0", I32)
    then_scope, else_scope = scope.child(), scope.child()
    for n in then_names:
        then_scope.declare(n, I32)
    for n in else_names:
        else_scope.declare(n, I32)
    scope.merge_if(then_scope, else_scope, then_exits, else_exits)
    stmt = ast.If(COND, _branch(then_names, then_exits), _branch(else_names, else_exits))
    for name in ["shared0", "both", "only_then", "only_else"]:
        module = _module(stmt, name)
        try:
            validate(module)
            accepted = True
        except DotBoxDError as refused:
            assert refused.code == "E-LOCAL-UNKNOWN", refused.diagnostics
            accepted = False
        assert accepted == (name in scope.visible), (
            f"{name}: generator {name in scope.visible}, validator {accepted}"
        )


def test_loop_locals_and_loop_variables_are_not_readable_after_the_loop() -> None:
    loop = ast.ForRange("i", ONE, ONE, (ast.Set("inner", ast.Var("i")),))
    for name in ("i", "inner"):
        fn = ast.Function(
            "main", ast.Visibility.ENTRYPOINT, (), ast.TypeRef("I32"), (loop, ast.Return(ast.Var(name)))
        )
        with pytest.raises(DotBoxDError) as refused:
            validate(ast.Module("m", "1.0.0", "1.0.0", (), (fn,)))
        assert refused.value.code == "E-LOCAL-UNKNOWN"
    env = ModuleEnv((), ())
    state = FunctionState(FunctionSig("main", (), I32), {"i": I32, "inner": I32}, 100)
    scope = Scope(env, state, {})
    assert scope.reusable() == ["i", "inner"]  # typed earlier, not readable: may only be re-set as I32
