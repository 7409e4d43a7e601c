"""DotBoxD's resolution order and block scoping, on both backends.

A module function that shadows a binding or a built-in must be the code that runs, on the reference
interpreter and in the generated code alike (the validator's call target is the one both dispatch
on); a binding it shadows is never invoked and needs no grant. Sibling blocks may bind one name with
different types, and both backends must agree exactly on values, errors and usage. Expected values
are computed here in Python, so the tests fail if both backends were wrong in the same way.
"""

from __future__ import annotations

from typing import Any

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.core.builtins import BUILTINS
from dotboxd.host import SandboxHost
from dotboxd.validator.plan import CallKind

from .differential import differences, run_plan_both
from .kernels import double, poke, policy, prepare


def _kernel(*functions: str) -> str:
    return 'module "k" version "1.0.0";\n' + "\n".join(functions) + "\n"


def _both(
    text: str, vectors: list[list[Any]], bindings: tuple[BindingDescriptor, ...] = (double,)
) -> list[Any]:
    plan = prepare(text, bindings=bindings)
    values = []
    for args, (reference, optimized) in zip(
        vectors, run_plan_both(plan, "main", vectors, encoding="python"), strict=True
    ):
        diff = differences(reference, optimized)
        assert not diff, f"args {args!r}:\n  " + "\n  ".join(diff)
        # no host binding is reached: the only calls counted are built-ins that are host calls
        # (math.*, string.*, int32.toStringInvariant; ``Builtin.counts_as_host_call``)
        called = reference["bindingCalls"]
        assert all(name in BUILTINS and BUILTINS[name].counts_as_host_call for name in called), called
        values.append(reference["value"] if reference["ok"] else reference["error"][1])
    return values


def test_shadowing_a_capability_binding_runs_the_module_function_without_a_grant() -> None:
    # threat T-VAL-02: the call names a host binding that needs a capability; the module function of
    # that id must run instead, on both backends, and the binding must never be invoked
    text = _kernel(
        "entrypoint fn main(x I32) -> I32 {\nreturn test.world.poke(x) + test.double(x);\n}",
        "fn test.world.poke(x I32) -> I32 {\nreturn x + 100;\n}",
        "fn test.double(x I32) -> I32 {\nreturn x * 3;\n}",
    )
    plan = prepare(text, bindings=(double, poke))
    assert plan.required_capabilities == () and dict(plan.bindings) == {}
    assert _both(text, [[1], [-7], [2**20]], bindings=(double, poke)) == [
        x + 100 + x * 3 for x in (1, -7, 2**20)
    ]


def test_shadowing_a_builtin_runs_the_module_function_on_both_backends() -> None:
    text = _kernel(
        "entrypoint fn main(x I32) -> I32 {\nreturn math.abs(x) + math.max(x, 0);\n}",
        "fn math.abs(x I32) -> I32 {\nreturn x - 1;\n}",
    )
    plan = prepare(text)
    targets = {plan.call_target(c).kind for c in _calls(plan.module.functions[0].body[0].value)}  # type: ignore[attr-defined]
    assert targets == {CallKind.FUNCTION, CallKind.BUILTIN}
    assert _both(text, [[5], [-5], [-(2**31) + 1]]) == [x - 1 + max(x, 0) for x in (5, -5, -(2**31) + 1)]


def test_shadowing_is_local_to_the_module() -> None:
    host = SandboxHost(bindings=[double])
    plain = host.prepare(_kernel("entrypoint fn main(x I32) -> I32 {\nreturn test.double(x);\n}"), policy())
    result = host.execute(plain, "main", [4], encoding="python")
    assert result.ok and result.value_json() == 8 and result.binding_calls == {"test.double": 1}


def _calls(expr: Any) -> list[Any]:
    out = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if hasattr(e, "args"):
            out.append(e)
            stack.extend(e.args)
        for attr in ("left", "right", "operand"):
            if hasattr(e, attr):
                stack.append(getattr(e, attr))
    return out


SIBLING_IF = _kernel(
    "entrypoint fn main(c Bool, n I32) -> I32 {",
    "r = 0;",
    'if c { x = n * 2; r = x + 1; } else { x = "abc"; r = string.length(x); }',
    "x = list.of(n, n, n);",  # a fresh binding: neither branch's x survives the if
    "return r + list.count(x);",
    "}",
)
SIBLING_LOOPS = _kernel(
    "entrypoint fn main(n I32) -> I32 {",
    "acc = 0;",
    "for i in 0 .. n { t = i * i; acc = acc + t; }",
    'k = 0;\nwhile k < n { t = "ab"; t = string.concatBudgeted(t, t); acc = acc + string.length(t); k = k + 1; }',
    "for j in 0 .. 3 { t = numeric.toI64(j); if t > 0L { acc = acc + 1; } }",
    "return acc;",
    "}",
)


def test_sibling_branches_bind_one_name_with_different_types_on_both_backends() -> None:
    # threat: a backend or the prover that keeps one slot type per name would mistake a value of
    # one sibling block for the other's (wrong results, or an unsound bound)
    expected = [(n * 2 + 1 if c else 3) + 3 for c, n in ((True, 5), (False, 5), (True, -9))]
    assert _both(SIBLING_IF, [[True, 5], [False, 5], [True, -9]]) == expected


def test_sibling_loop_bodies_bind_one_name_with_different_types_on_both_backends() -> None:
    def oracle(n: int) -> int:
        return sum(i * i for i in range(n)) + 4 * max(n, 0) + 2

    assert _both(SIBLING_LOOPS, [[0], [1], [7]]) == [oracle(n) for n in (0, 1, 7)]


def test_prover_bounds_hold_for_block_scoped_names_of_different_types() -> None:
    from dotboxd.grammar.text import parse_text
    from tests.prover.harness import check_program
    from tests.prover.harness import prepare as prepare_proof

    for source, inputs in ((SIBLING_IF, [[True, 5], [False, 7]]), (SIBLING_LOOPS, [[0], [3], [40]])):
        prepared = prepare_proof(parse_text(source), {"inputBounds": {"main": {"n": [0, 50]}}}, [], "main")
        assert prepared is not None
        proof = prepared.report.function("main")
        assert {b.resource: b.verdict.value for b in proof.budgets}["fuel"] == "PROVED"
        assert check_program(prepared, inputs).violations == []


def test_prover_reads_a_rebound_name_at_its_loop_head_with_its_current_type() -> None:
    # ``t`` is first bound as a String inside an if (not surviving it), then bound afresh as I32 and
    # counted up by a loop: the prover must track it as I32 at the loop head to bound the loop
    from dotboxd.grammar.text import parse_text
    from tests.prover.harness import check_program
    from tests.prover.harness import prepare as prepare_proof

    source = _kernel(
        "entrypoint fn main(n I32) -> I32 {",
        'k = 0;\nif n > 3 { t = "abc"; k = string.length(t); }',
        "t = 0;\nwhile t < n { t = t + 1; }",
        "return t + k;",
        "}",
    )
    prepared = prepare_proof(parse_text(source), {"inputBounds": {"main": {"n": [0, 50]}}}, [], "main")
    assert prepared is not None
    verdicts = {b.resource: b.verdict.value for b in prepared.report.function("main").budgets}
    assert verdicts["fuel"] == "PROVED" and verdicts["loopIterations"] == "PROVED"
    assert check_program(prepared, [[0], [9], [50]]).violations == []
    assert _both(source, [[0], [2], [9]]) == [0, 2, 12]
