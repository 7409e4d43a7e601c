"""Strict mode (``requireStaticBound``): install only what is PROVED, with the evidence on refusal."""

from __future__ import annotations

import pytest

from dotboxd.core.codes import category_of
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import ExecutionPlan, Policy, SandboxHost
from dotboxd.validator.prover import Verdict, require_static_bound

QUADRATIC = (
    'module "t" version "1.0.0";\n'
    "entrypoint fn main(n I32) -> I32 {\n"
    "acc = 0;\nfor i in 0 .. n { for j in 0 .. n { acc = acc + 1; } }\nreturn acc;\n}\n"
)
COLLATZ = (
    'module "t" version "1.0.0";\n'
    "entrypoint fn main(n I32) -> I32 {\n"
    "x = n;\nwhile x > 1 { if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; } }\nreturn x;\n}\n"
)


def _plan(source: str, policy: Policy) -> ExecutionPlan:
    return SandboxHost().prepare(source, policy)


def test_refuted_budget_is_refused_with_witness_and_overshoot() -> None:
    plan = _plan(QUADRATIC, Policy.default())
    with pytest.raises(DotBoxDError) as caught:
        require_static_bound(plan)
    codes = [d.code for d in caught.value.diagnostics]
    assert codes == ["E-PROOF-REFUTED", "E-PROOF-REFUTED"]  # fuel and loop iterations, one each
    fuel = caught.value.diagnostics[0]
    assert category_of(fuel.code) == "PolicyDenied"
    assert fuel.pointer == "/functions/0"
    assert fuel.evidence["resource"] == "fuel" and fuel.evidence["reached"] > fuel.evidence["limit"]
    assert fuel.evidence["witness"] and "needs at least" in fuel.message
    assert "inputBounds" in fuel.hint


def test_unknown_is_never_accepted() -> None:
    plan = _plan(COLLATZ, Policy.default())
    with pytest.raises(DotBoxDError) as caught:
        require_static_bound(plan)
    assert {d.code for d in caught.value.diagnostics} == {"E-PROOF-UNPROVEN"}
    assert all(d.evidence["verdict"] == Verdict.UNKNOWN.value for d in caught.value.diagnostics)


def test_proved_kernel_is_accepted_and_the_report_returned() -> None:
    policy = Policy.builder().with_input_bounds("main", n=(0, 40)).require_static_bound().build()
    plan = _plan(QUADRATIC, policy)
    report = require_static_bound(plan)
    assert report.all_proved()
    assert [f.verdict for f in report.functions] == [Verdict.PROVED]


def test_validate_calls_the_hook_under_a_strict_policy() -> None:
    """Installing through the host API refuses the refuted kernel with the prover's diagnostics."""
    strict = Policy.builder().require_static_bound().build()
    with pytest.raises(DotBoxDError) as caught:
        SandboxHost().prepare(QUADRATIC, strict)
    assert [d.code for d in caught.value.diagnostics] == ["E-PROOF-REFUTED", "E-PROOF-REFUTED"]
