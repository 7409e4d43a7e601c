"""The ExecutionPlan: node facts, effects, capabilities with paths, operand order, gates and hashes."""

from __future__ import annotations

import dataclasses

import pytest

from dotboxd.core.ast import Binary, Call, ExprStmt, If, Return, Set
from dotboxd.core.bindings import BindingRegistry, Cost
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.effects import Effect
from dotboxd.core.types import BOOL, I32, STRING, ListType
from dotboxd.validator.plan import CallKind, OperandOrder, compute_plan_hash
from dotboxd.validator.policy import Policy

from .case_table import KILL, LATER, PEEK, PURE
from .helpers import accept, bindings, fn, main, rejection, text

KILL_POLICY = Policy.builder().grant("game.world.monster.write.kill").build()


def catalog(*entries: dict[str, object]) -> object:
    return BindingRegistry(bindings(*entries)).build()


def test_expression_types_and_locals() -> None:
    m = text(main("xs = list.of(a, 2);\nok = list.count(xs) > 1;\nreturn list.get(xs, 0);", params="a I32"))
    plan = accept(m)
    body = m.functions[0].body
    assert isinstance(body[0], Set) and isinstance(body[1], Set) and isinstance(body[2], Return)
    assert plan.type_of(body[0].value) == ListType(I32)
    assert plan.type_of(body[1].value) == BOOL
    assert plan.type_of(body[2].value) == I32
    info = plan.functions["main"]
    assert dict(info.local_types) == {"a": I32, "xs": ListType(I32), "ok": BOOL}
    assert plan.local_type("main", "xs") == ListType(I32)
    assert info.parameter_types == (I32,) and info.return_type == I32


def test_types_are_looked_up_by_identity() -> None:
    m = text(main("x = 1;\nreturn 1;"))
    plan = accept(m)
    equal_copy = dataclasses.replace(m.functions[0].body[1].value)  # type: ignore[union-attr]
    with pytest.raises(KeyError):
        plan.type_of(equal_copy)


def test_call_targets() -> None:
    m = text(
        main("x = helper();\ny = math.abs(x);\nok = game.world.kill(y);\nreturn y;"),
        fn("helper", "return 1;"),
    )
    plan = accept(m, KILL_POLICY, catalog(KILL))
    calls = [s.value for s in m.functions[0].body[:3]]  # type: ignore[union-attr]
    targets = [plan.call_target(c) for c in calls]  # type: ignore[arg-type]
    assert [t.kind for t in targets] == [CallKind.FUNCTION, CallKind.BUILTIN, CallKind.BINDING]
    assert targets[1].builtin is not None and targets[1].builtin.name == "math.abs"
    assert targets[2].binding is plan.binding("game.world.kill")


def test_effects_per_function_and_module() -> None:
    m = text(
        main('s = "x";\nreturn a() + pure();'),
        fn("a", "return b();"),
        fn("b", "return game.world.peek(1);"),
        fn("pure", "return 1;"),
        fn("orphan", "ok = game.world.kill(1);\nreturn 1;"),
    )
    plan = accept(m, Policy.builder().grant("game.world.read").build(), catalog(PEEK, KILL))
    fx = {fid: info.effects for fid, info in plan.functions.items()}
    assert fx["pure"] == Effect.CPU
    assert fx["b"] == fx["a"] == Effect.CPU | Effect.HOST_STATE_READ
    assert fx["main"] == Effect.CPU | Effect.ALLOC | Effect.HOST_STATE_READ
    assert fx["orphan"] == Effect.CPU | Effect.HOST_STATE_WRITE
    assert plan.required_effects == fx["main"]
    assert not plan.functions["orphan"].reachable and plan.functions["b"].reachable
    assert plan.required_capabilities == ("game.world.read",)
    assert dict(plan.capability_paths) == {"game.world.read": ("main", "a", "b", "game.world.peek")}
    assert set(plan.bindings) == {"game.world.peek"}  # orphan's binding is not callable in this plan


def test_async_binding_adds_concurrency_and_the_async_capability() -> None:
    m = text(main("return test.async.echo(1);"))
    plan = accept(m, Policy.builder().allow_runtime_async().build(), catalog(LATER))
    assert plan.required_effects == Effect.CPU | Effect.CONCURRENCY
    assert plan.required_capabilities == ("dotboxd.runtime.async",)


def test_dead_code_adds_nothing_but_is_marked() -> None:
    m = text(main("return 1;\nok = game.world.kill(1);\nx = helper();"), fn("helper", "return 2;"))
    plan = accept(m, None, catalog(KILL))
    body = m.functions[0].body
    assert [plan.is_dead(s) for s in body] == [False, True, True]
    assert plan.required_capabilities == () and not plan.bindings
    assert plan.functions["main"].callees == frozenset() and not plan.functions["helper"].reachable
    assert plan.type_of(body[2].value) == I32  # type: ignore[union-attr]


def test_dead_code_after_if_whose_branches_both_exit() -> None:
    m = text(main("while true {\nif c { break; } else { continue; }\nx = 1;\n}\nreturn 0;", params="c Bool"))
    plan = accept(m)
    loop_body = m.functions[0].body[0].body  # type: ignore[union-attr]
    assert [plan.is_dead(s) for s in loop_body] == [False, True]


def order(source: str, registry: object = None, policy: Policy | None = None) -> OperandOrder:
    m = text(main(source, params="a I32, b Bool"), fn("f", "return true;", ret="Bool"))
    plan = accept(m, policy, registry)
    stmt = m.functions[0].body[0]
    assert isinstance(stmt, If) and isinstance(stmt.condition, Binary)
    return plan.operand_order(stmt.condition)


def test_and_or_order_failure_free_cheaper_right_runs_first() -> None:
    assert order("if ((a > 7) == (a < 3)) && b { return 1; }\nreturn 0;") is OperandOrder.RIGHT_FIRST
    assert order("if b || ((a > 7) == (a < 3)) { return 1; }\nreturn 0;") is OperandOrder.AUTHORED
    # intrinsics that cannot fail (no value error, no host call, nothing built) may move too
    src = "if (numeric.toI64(a) > numeric.toI64(7)) && b { return 1; }\nreturn 0;"
    assert order(src) is OperandOrder.RIGHT_FIRST


@pytest.mark.parametrize(
    "left",
    [
        "math.abs(a) > 7",  # InvalidInput at MIN, and a host call
        "math.min(a, 3) > 7",  # cannot overflow, but a host call (maxHostCalls)
        "a * 3 > 7",  # overflow
        "a / 3 > 7",  # (division: / 0 and MIN / -1 in general)
        "-a > 7",  # -MIN overflows
        'string.isEmpty("x") == (a > 7)',  # a host call, and a new text
        "list.count(list.of(a, a)) > 7",  # list.of builds a value (list length, allocation)
        "f() == (a > 100)",  # a module function may fail anywhere
    ],
)
def test_and_or_order_keeps_authored_order_when_an_operand_can_fail(left: str) -> None:
    assert order(f"if ({left}) && b {{ return 1; }}\nreturn 0;") is OperandOrder.AUTHORED


def test_and_or_order_keeps_authored_order_for_every_binding_call() -> None:
    registry = catalog(KILL)
    src = "if (game.world.kill(a) == (a > 100)) && b { return 1; }\nreturn 0;"
    assert order(src, registry, KILL_POLICY) is OperandOrder.AUTHORED
    # a PureIntrinsic binding too: every binding call takes a host call, which can be refused
    src = "if (test.pure.twice(a) + a > 100) && b { return 1; }\nreturn 0;"
    assert order(src, catalog(PURE)) is OperandOrder.AUTHORED


def test_and_or_order_equal_cost_stays_authored() -> None:
    assert order("if (a > 1) && (a < 9) { return 1; }\nreturn 0;") is OperandOrder.AUTHORED


def test_hashes() -> None:
    m = text(main("return 1;"))
    plan = accept(m)
    for h in (plan.module_hash, plan.policy_hash, plan.binding_manifest_hash, plan.plan_hash):
        assert len(h) == 64 and int(h, 16) >= 0
    again = accept(text(main("return 1;")))
    assert again.plan_hash == plan.plan_hash and again.module_hash == plan.module_hash
    assert accept(m, Policy.builder().with_fuel(5).build()).plan_hash != plan.plan_hash
    assert accept(m, None, catalog(KILL)).plan_hash != plan.plan_hash
    assert accept(text(main("return 2;"))).plan_hash != plan.plan_hash
    plan.verify_integrity()
    forged = dataclasses.replace(plan, required_effects=Effect.CPU | Effect.FILE_READ)
    with pytest.raises(DotBoxDError) as info:
        forged.verify_integrity()
    assert info.value.code == "E-PLAN-INTEGRITY"
    assert compute_plan_hash(plan) == plan.plan_hash


def test_the_cost_table_version_is_part_of_the_plan_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan made under one cost table must not pass for a plan of another (its fuel verdicts and
    proofs came from that table, and compiled artifacts are keyed by the plan hash)."""
    plan = accept(text(main("return 1;")))
    monkeypatch.setattr("dotboxd.validator.plan.COST_TABLE_VERSION", "dotboxd-costs-test")
    assert compute_plan_hash(plan) != plan.plan_hash
    assert accept(text(main("return 1;"))).plan_hash != plan.plan_hash
    with pytest.raises(DotBoxDError) as info:
        plan.verify_integrity()
    assert info.value.code == "E-PLAN-INTEGRITY"


def test_revocation_and_expiry_gate_an_existing_plan() -> None:
    m = text(main("ok = game.world.kill(1);\nreturn 1;"))
    policy = Policy.builder().grant("game.world.monster.write.kill", expires_at_unix_ms=10_000).build()
    plan = accept(m, policy, catalog(KILL), now_unix_ms=5_000)
    plan.ensure_usable(now_unix_ms=9_999)
    with pytest.raises(DotBoxDError) as info:
        plan.ensure_usable(now_unix_ms=10_000)
    assert info.value.code == "E-POLICY-CAP"
    policy.revoke("game.world.monster.write.kill")
    with pytest.raises(DotBoxDError) as info:
        plan.ensure_usable(now_unix_ms=9_999)
    assert info.value.code == "E-POLICY-REVOKED"
    assert info.value.diagnostic.category == "PolicyDenied"
    # and validating again now fails with the revocation, not a missing grant
    assert rejection(m, policy, catalog(KILL), now_unix_ms=5_000).code == "E-POLICY-REVOKED"


def test_plan_refuses_a_changed_catalogue() -> None:
    m = text(main("ok = game.world.kill(1);\nreturn 1;"))
    registry = BindingRegistry(bindings(KILL)).build()
    plan = accept(m, KILL_POLICY, registry)
    plan.check_bindings(registry)
    plan.check_bindings(registry.with_invokers({"game.world.kill": lambda x: True}))
    changed = BindingRegistry([dataclasses.replace(registry["game.world.kill"], cost=Cost(1))]).build()
    with pytest.raises(DotBoxDError) as info:
        plan.check_bindings(changed)
    assert info.value.code == "E-PLAN-BINDINGS"
    with pytest.raises(DotBoxDError):
        plan.check_bindings(BindingRegistry().build())


def test_plan_is_read_only() -> None:
    plan = accept(text(main("return 1;")))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.plan_hash = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.functions["x"] = plan.functions["main"]  # type: ignore[index]
    with pytest.raises(TypeError):
        plan.expr_types[0] = STRING  # type: ignore[index]


def test_summary_is_json_ready() -> None:
    import json

    plan = accept(text(main("return 1;")))
    doc = json.loads(json.dumps(plan.summary()))
    assert doc["requiredEffects"] == ["Cpu"] and doc["planHash"] == plan.plan_hash


def test_expression_statement_types_too() -> None:
    m = text(main('string.length("abc");\nreturn 1;'))
    plan = accept(m)
    stmt = m.functions[0].body[0]
    assert isinstance(stmt, ExprStmt) and isinstance(stmt.value, Call)
    assert plan.type_of(stmt.value) == I32
