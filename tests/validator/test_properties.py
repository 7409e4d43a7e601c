"""Hypothesis properties of the validator (issue 3, item 7).

(a) For accepted modules, the derived required capabilities are exactly the capabilities of the
    binding calls an independent brute-force walk finds reachable from the entrypoints.
(b) Replacing one node of a valid module with a forbidden shape is always rejected with that
    rule's code.
(c) Validation is deterministic and never raises anything but a diagnostic, on arbitrary
    import-valid trees as well as on generated and mutated ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.validator.api import validate

from ..strategies.ast_strategies import modules as syntax_modules
from .gen import CATALOG, POLICY, modules

# -- an independent reference walk -------------------------------------------------------------


def _exprs(e: ast.Expr) -> list[ast.Expr]:
    out: list[ast.Expr] = [e]
    if isinstance(e, ast.Binary):
        out += _exprs(e.left) + _exprs(e.right)
    elif isinstance(e, ast.Unary):
        out += _exprs(e.operand)
    elif isinstance(e, ast.Call):
        for a in e.args:
            out += _exprs(a)
    return out


def _live_calls(body: tuple[ast.Stmt, ...]) -> list[str]:
    """Call names in statements that can run (a statement after an unconditional exit cannot)."""
    names: list[str] = []
    for s in body:
        roots: list[ast.Expr] = []
        if isinstance(s, (ast.Set, ast.Return, ast.ExprStmt)):
            roots = [s.value]
        elif isinstance(s, ast.If):
            roots = [s.condition]
            names += _live_calls(s.then) + _live_calls(s.else_)
        elif isinstance(s, ast.While):
            roots = [s.condition]
            names += _live_calls(s.body)
        elif isinstance(s, ast.ForRange):
            roots = [s.start, s.end]
            names += _live_calls(s.body)
        names += [e.name for r in roots for e in _exprs(r) if isinstance(e, ast.Call)]
        if _exits(s):
            break
    return names


def _exits(s: ast.Stmt) -> bool:
    if isinstance(s, (ast.Return, ast.Break, ast.Continue)):
        return True
    if isinstance(s, ast.If):
        return any(_exits(x) for x in s.then) and any(_exits(x) for x in s.else_)
    return False


def brute_force_capabilities(module: ast.Module) -> set[str]:
    functions = {f.id: f for f in module.functions}
    seen: set[str] = set()
    todo = [f.id for f in module.functions if f.visibility.value == "entrypoint"]
    caps: set[str] = set()
    while todo:
        fid = todo.pop()
        if fid in seen:
            continue
        seen.add(fid)
        for name in _live_calls(functions[fid].body):
            if name in functions:
                todo.append(name)
            elif name in CATALOG:
                caps.update(CATALOG[name].required_capabilities)
    return caps


@given(modules())
def test_a_required_capabilities_match_a_brute_force_walk(module: ast.Module) -> None:
    plan = validate(module, POLICY, CATALOG)
    expected = brute_force_capabilities(module)
    assert set(plan.required_capabilities) >= expected
    assert set(plan.required_capabilities) == expected
    for cap in plan.required_capabilities:
        path = plan.capability_paths[cap]
        assert path[0] in plan.entrypoints and path[-1] in plan.bindings


# -- (b) mutations -------------------------------------------------------------------------------


def _replace_function(module: ast.Module, index: int, fn: ast.Function) -> ast.Module:
    fns = list(module.functions)
    fns[index] = fn
    return dataclasses.replace(module, functions=tuple(fns))


def _map_return(body: tuple[ast.Stmt, ...], new: Callable[[ast.Expr], ast.Expr]) -> tuple[ast.Stmt, ...]:
    """Replace the value of the function's return statement (generated bodies have exactly one)."""
    index = next(i for i, s in enumerate(body) if isinstance(s, ast.Return))
    last = body[index]
    assert isinstance(last, ast.Return)
    return (*body[:index], ast.Return(new(last.value)), *body[index + 1 :])


def mutate_clr_call(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    body = _map_return(f.body, lambda e: ast.Call("System.IO.File.ReadAllText", ()))
    return _replace_function(m, i, dataclasses.replace(f, body=body)), "E-IR-CLR-REF"


def mutate_unknown_var(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    return _replace_function(
        m, i, dataclasses.replace(f, body=_map_return(f.body, lambda e: ast.Var("zz_undefined")))
    ), "E-LOCAL-UNKNOWN"


def mutate_unknown_call(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    return _replace_function(
        m, i, dataclasses.replace(f, body=_map_return(f.body, lambda e: ast.Call("no.such.call", ())))
    ), "E-CALL-UNKNOWN"


def mutate_object_param(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    return _replace_function(
        m, i, dataclasses.replace(f, return_type=ast.TypeRef("Object"))
    ), "E-TYPE-UNKNOWN"


def mutate_wrong_return_type(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    other = (
        ast.Literal(ast.LiteralKind.I64, 1)
        if f.return_type.name != "I64"
        else ast.Literal(ast.LiteralKind.BOOL, True)
    )
    return _replace_function(
        m, i, dataclasses.replace(f, body=_map_return(f.body, lambda e: other))
    ), "E-TYPE-MISMATCH"


def mutate_stray_break(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    return _replace_function(m, i, dataclasses.replace(f, body=(ast.Break(), *f.body))), "E-LOOP-CONTROL"


def mutate_drop_return(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    body = tuple(s for s in f.body if not isinstance(s, ast.Return))
    return _replace_function(m, i, dataclasses.replace(f, body=body)), "E-FN-RETURN"


def mutate_self_call(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    f = m.functions[i]
    call = ast.Call(f.id, tuple(ast.Var(p.name) for p in f.parameters))
    return _replace_function(
        m, i, dataclasses.replace(f, body=_map_return(f.body, lambda e: call))
    ), "E-CALL-RECURSION"


def mutate_duplicate_id(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    j = (i + 1) % len(m.functions)
    if i == j:
        return dataclasses.replace(m, functions=(*m.functions, m.functions[i])), "E-STRUCT-DUP-FN"
    return _replace_function(
        m, i, dataclasses.replace(m.functions[i], id=m.functions[j].id)
    ), "E-STRUCT-DUP-FN"


def mutate_private_main(m: ast.Module, i: int) -> tuple[ast.Module, str]:
    fns = tuple(dataclasses.replace(f, visibility=type(f.visibility)("private")) for f in m.functions)
    return dataclasses.replace(m, functions=fns), "E-STRUCT-ENTRY"


MUTATIONS = [
    mutate_clr_call,
    mutate_unknown_var,
    mutate_unknown_call,
    mutate_object_param,
    mutate_wrong_return_type,
    mutate_stray_break,
    mutate_drop_return,
    mutate_self_call,
    mutate_duplicate_id,
    mutate_private_main,
]


@given(modules(), st.sampled_from(MUTATIONS), st.data())
def test_b_one_forbidden_node_is_rejected_with_its_code(
    module: ast.Module, mutation: object, data: st.DataObject
) -> None:
    validate(module, POLICY, CATALOG)  # the original is valid
    index = data.draw(st.integers(0, len(module.functions) - 1))
    mutated, code = mutation(module, index)  # type: ignore[operator]
    try:
        validate(mutated, POLICY, CATALOG)
    except DotBoxDError as error:
        assert error.code == code, [d.to_json() for d in error.diagnostics]
    else:
        raise AssertionError(f"{code} mutation accepted")


# -- (c) determinism and no tracebacks -----------------------------------------------------------


def _verdict(module: ast.Module) -> object:
    try:
        plan = validate(module, POLICY, CATALOG)
    except DotBoxDError as error:
        return [d.to_json() for d in error.diagnostics]
    return plan.plan_hash


@given(syntax_modules())
def test_c_arbitrary_trees_get_a_deterministic_verdict(module: ast.Module) -> None:
    assert _verdict(module) == _verdict(module)


@given(modules(), st.sampled_from(MUTATIONS), st.data())
def test_c_generated_and_mutated_trees_get_a_deterministic_verdict(
    module: ast.Module, mutation: object, data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(module.functions) - 1))
    mutated, _ = mutation(module, index)  # type: ignore[operator]
    for m in (module, mutated):
        first = _verdict(m)
        assert first == _verdict(m)
