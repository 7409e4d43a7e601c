"""The per-module prove budget: ``proveRlimit`` in the policy bounds the prover's Z3 work.

The budget is Z3's ``rlimit`` work counter, never wall time, so a verdict stays a function of the
module, the policy and the prover version. Once it is spent the remaining questions are UNKNOWN
(never PROVED), so strict mode refuses the kernel with a diagnostic that names the budget; and
strict mode asks about entrypoints first (and only), so hundreds of private functions cannot
starve them.
"""

from __future__ import annotations

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan, require_static_bound
from dotboxd.validator.prover.hook import require_static_bound as hook

COUNTER = """module "b" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
  i = 0;
  while i < n { i = i + 1; }
  return i;
}
"""


def _many_loop_functions(count: int) -> str:
    """A module of ``count`` private loop functions (~175 bytes each) and one entrypoint."""
    fns = [
        f"fn f{k}(n I32, m I32) -> I32 {{\n  i = 0;\n  acc = {k};\n"
        f"  while i < n && acc < m {{\n    if i % 3 == {k % 3} {{ acc = acc + 2; }} else {{ acc = acc + 1; }}\n"
        "    i = i + 1;\n  }\n  return acc;\n}"
        for k in range(count)
    ]
    calls = " + ".join(f"f{k}(n, m) / 4" for k in range(4))
    return (
        'module "big" version "1.0.0";\n'
        + "\n".join(fns)
        + (f"\nentrypoint fn main(n I32, m I32) -> I32 {{\n  return {calls};\n}}\n")
    )


def _policy(units: int | None = None) -> Policy:
    """The strict policy's content; plans are prepared without strict mode and the hook is
    called on them directly (``validate`` would call it and raise)."""
    return (
        Policy.builder()
        .with_limits(max_wall_time_ms=60_000)
        .with_input_bounds("main", n=(0, 100), m=(0, 100))
        .with_prove_rlimit(units)
        .build()
    )


def test_a_spent_prove_budget_is_unknown_and_strict_mode_refuses_naming_it() -> None:
    """Threat: prover denial of service, or a budget-starved proof accepted (T-PRV-07, T-PRV-10)."""
    plan = SandboxHost().prepare(COUNTER, _policy(None))
    assert hook(plan).all_proved()  # the default budget proves it
    plan = SandboxHost().prepare(COUNTER, _policy(1))
    report = prove_plan(plan)
    assert report.solver_work <= 1
    assert report.function("main").verdict is Verdict.UNKNOWN
    with pytest.raises(DotBoxDError) as caught:
        require_static_bound(plan)
    assert {d.code for d in caught.value.diagnostics} == {"E-PROOF-UNPROVEN"}
    assert any("proveRlimit" in d.message for d in caught.value.diagnostics)


def test_strict_mode_on_a_module_of_290_loop_functions_stays_within_the_prove_budget() -> None:
    """Threat: prover denial of service by many loop functions (T-PRV-07). A ~50 KB module of 290
    private loop functions: strict mode proves the entrypoint (which inlines the four it calls)
    and nothing else, within the policy's budget."""
    source = _many_loop_functions(290)
    assert len(source) > 45_000
    budget = 3_000_000
    plan = SandboxHost().prepare(source, _policy(budget))
    report = hook(plan)
    assert [f.function for f in report.functions] == ["main"]
    assert report.all_proved()
    assert 0 < report.solver_work <= budget


def test_prove_rlimit_is_a_policy_field_with_a_range() -> None:
    policy = Policy.from_json({"policyId": "p", "proveRlimit": 5_000_000})
    assert policy.prove_rlimit == 5_000_000
    assert policy.to_json()["proveRlimit"] == 5_000_000
    assert "proveRlimit" not in Policy.default().to_json()
    assert policy.policy_hash != Policy.from_json({"policyId": "p"}).policy_hash
    for bad in (0, -3):
        with pytest.raises(DotBoxDError) as caught:
            Policy.from_json({"policyId": "p", "proveRlimit": bad})
        assert caught.value.diagnostics[0].code == "E-POLICY-LIMIT"
    with pytest.raises(DotBoxDError) as caught:
        Policy.from_json({"policyId": "p", "proveRlimit": "many"})
    assert caught.value.diagnostics[0].code == "E-POLICY-SCHEMA"
