"""A counterexample never counts cost that a callee only incurs after an operation that may fail.

Found by the soundness run (generator draw ``soundness-187``): a private function whose first
statement always fails (``list.get`` at index 2 of a one-element list) was inlined, the failing
operation was assumed not to fail inside the callee, and the callee's must cost (a loop over its
argument) then joined the caller's must prefix without that assumption. The budget was REFUTED with
a witness whose run ended in R-LIST-INDEX instead of a quota stop.
"""

from __future__ import annotations

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan

_ALWAYS_FAILS_FIRST = """module "t" version "1.0.0";
fn f(w I32) -> I32 {
  x = list.get(list.of(w), 2);
  for i in 0 .. w { }
  if string.equals("a", "a") { return x; }
  return x;
}
entrypoint fn main(n I32) -> I32 {
  return f(n);
}
"""

_LOOP_THEN_LEAVES = _ALWAYS_FAILS_FIRST.replace("  x = list.get(list.of(w), 2);\n", "  x = w;\n")


def _policy() -> Policy:
    return Policy.builder().with_limits(max_wall_time_ms=60_000, max_fuel=300).build()


def test_false_counterexample_from_a_callee_that_fails_before_its_cost_is_not_refuted() -> None:
    """Threat: a false REFUTED verdict (strict mode refuses a kernel that can never exceed its
    budget; a reviewer is shown a witness that really ends in a fault)."""
    host = SandboxHost()
    plan = host.prepare(_ALWAYS_FAILS_FIRST, _policy())
    fuel = prove_plan(plan).function("main").budget("fuel")
    assert fuel is not None
    assert fuel.verdict is not Verdict.REFUTED, fuel.witness and fuel.witness.text()
    # every input faults at the index before the loop: a large one does too
    result = host.execute(plan, "main", [10**6], encoding="json")
    assert result.error is not None and result.error.code == "R-LIST-INDEX"


def test_a_callee_that_leaves_its_must_path_after_a_loop_is_still_refuted_by_its_own_prefix() -> None:
    """The fix keeps the callee's own must prefix: the loop surely runs before the branch the
    prover cannot decide, so the callee's candidate (recorded inside it) still refutes the budget,
    and its witness is stopped by the fuel quota."""
    host = SandboxHost()
    plan = host.prepare(_LOOP_THEN_LEAVES, _policy())
    fuel = prove_plan(plan).function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.REFUTED and fuel.witness is not None
    result = host.execute(plan, "main", list(fuel.witness.args), encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-FUEL"
