"""Grants: the generator grants exactly the capabilities the validator derives (dead code and
unreachable functions need none)."""

from __future__ import annotations

from dotboxd.conformance.generator.liveness import reachable_bindings
from dotboxd.core import ast
from dotboxd.core.bindings import load_binding_manifest
from dotboxd.validator.api import validate
from dotboxd.validator.policy import Policy

from .conftest import Validated

I32 = ast.TypeRef("I32")
ONE = ast.Literal(ast.LiteralKind.I32, 1)


def _binding(bid: str, cap: str) -> dict[str, object]:
    return {
        "id": bid,
        "parameters": [],
        "returnType": "I32",
        "effects": ["Cpu", "HostStateRead"],
        "capability": cap,
        "cost": {"baseFuel": 1},
        "audit": "PerCall",
        "safety": "ReadOnlyExternal",
    }


def test_dead_and_unreachable_calls_need_no_grant() -> None:
    live = ast.Call("fx.live.get")
    dead = ast.Call("fx.dead.get")
    orphan = ast.Call("fx.orphan.get")
    helper = ast.Function("helper", ast.Visibility.PRIVATE, (), I32, (ast.Return(orphan),))
    loop = ast.ForRange("i", ONE, ONE, (ast.Break(), ast.ExprStmt(dead)))
    main = ast.Function(
        "main",
        ast.Visibility.ENTRYPOINT,
        (),
        I32,
        (
            loop,
            ast.If(ast.Literal(ast.LiteralKind.BOOL, True), (ast.Return(live),), (ast.Return(ONE),)),
            ast.ExprStmt(dead),
        ),
    )
    module = ast.Module("m", "1.0.0", "1.0.0", (), (helper, main))
    entries = [
        _binding("fx.live.get", "fx.cap.live"),
        _binding("fx.dead.get", "fx.cap.dead"),
        _binding("fx.orphan.get", "fx.cap.orphan"),
    ]
    ids = {str(e["id"]): e for e in entries}
    assert reachable_bindings(module, ids) == ["fx.live.get"]
    policy = Policy.from_json({"grants": [{"id": "fx.cap.live", "parameters": {}}]})
    plan = validate(module, policy, load_binding_manifest(entries))
    assert set(plan.required_capabilities) == {"fx.cap.live"}


def test_sample_policies_grant_exactly_the_required_capabilities(validated_sample: list[Validated]) -> None:
    checked = 0
    for v in validated_sample:
        if v.plan is None:
            continue
        granted = {g["id"] for g in v.program.policy_json.get("grants", [])}
        if v.program.policy_json.get("allowRuntimeAsync"):
            granted.add("dotboxd.runtime.async")
        assert set(v.plan.required_capabilities) == granted
        checked += bool(granted)
    assert checked > 0, "the sample should contain programs that need grants"
