"""Breadth and structure: across a fixed sample the generator reaches every built-in, operator,
statement kind, literal kind and fixture behaviour, and it keeps its structural promises."""

from __future__ import annotations

from collections import Counter

from dotboxd.conformance.generator import RandomSource, build_program
from dotboxd.conformance.generator.coverage import program_features
from dotboxd.conformance.generator.liveness import live_calls
from dotboxd.conformance.generator.measure import expected_features
from dotboxd.core import ast
from dotboxd.core.ast_walk import expressions
from dotboxd.core.types import ListType, MapType, OpaqueIdType, RecordType

from .conftest import Validated


def test_every_builtin_operator_statement_literal_and_behaviour_appears(
    validated_sample: list[Validated],
) -> None:
    seen: Counter[str] = Counter()
    for v in validated_sample:
        seen.update(program_features(v.program, v.plan))
    missing = [key for key in expected_features() if key not in seen]
    assert not missing, f"never generated: {missing}"
    for op in ("add", "sub", "mul", "div", "rem", "lt", "gte"):
        for t in ("I32", "I64", "F64"):
            assert f"op:{op}:{t}" in seen, f"{op} on {t} never generated"
    assert any(
        key.startswith("op:eq:List") or key.startswith("op:eq:Map") or key.startswith("op:eq:Record")
        for key in seen
    )


def test_composite_types_and_opaque_ids_appear_in_signatures(validated_sample: list[Validated]) -> None:
    kinds: Counter[str] = Counter()
    for v in validated_sample:
        for t in v.program.param_types:
            kinds[type(t).__name__] += 1
    for cls in (ListType, MapType, RecordType, OpaqueIdType):
        assert kinds[cls.__name__] > 0, f"no entrypoint parameter of kind {cls.__name__}"


def test_calls_only_go_to_earlier_functions(validated_sample: list[Validated]) -> None:
    for v in validated_sample:
        functions = v.program.module.functions
        order = {f.id: i for i, f in enumerate(functions)}
        entries = [f for f in functions if f.visibility is ast.Visibility.ENTRYPOINT]
        assert [f.id for f in entries] == [functions[-1].id] == [v.program.entry]
        for index, fn in enumerate(functions):
            everything = list(live_calls(fn.body)) + _all_calls(fn.body)
            for name in everything:
                if name in order:
                    assert order[name] < index, f"{fn.id} calls {name}: not acyclic by construction"


def _all_calls(stmts: tuple[ast.Stmt, ...]) -> list[str]:
    return [e.name for e in expressions(stmts) if isinstance(e, ast.Call)]


def test_the_same_seed_text_draws_the_same_program() -> None:
    assert build_program(RandomSource("same")) == build_program(RandomSource("same"))
    assert build_program(RandomSource("same")) != build_program(RandomSource("other"))


def test_no_pending_fixture_where_the_async_grant_could_await_it(validated_sample: list[Validated]) -> None:
    # With dotboxd.runtime.async granted, a pending result is awaited until the wall-time budget runs
    # out: a Timeout whose timing depends on the machine, which a generated case must never pin.
    for v in validated_sample:
        entries = v.program.bindings_json
        if any(e["isAsync"] for e in entries):
            assert all(e["behavior"]["kind"] != "pending" for e in entries), entries
