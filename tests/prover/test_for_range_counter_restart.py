"""A forRange's own counter is not a loop constant: ``limit = i`` inside ``for i in ...`` is no
"restart value" for the inductive-bounds rule.

Found by the soundness run (generator draw ``soundness-1991``): the rule took ``i`` (the counter's
per-iteration atom) as a value set the same on every iteration, kept ``limit <= max(entry, i)`` as
a loop-head invariant, and the counter's atom leaked into the value of ``limit`` after the loop.
Proving then crashed with a KeyError while evaluating a bound over an atom that is no input (a
traceback instead of a verdict), and the invariant itself was not one.
"""

from __future__ import annotations

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import prove_plan

COUNTER_ASSIGNED = """module "t" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
  limit = n;
  for i in -1 .. math.min(n, 5) { limit = i; }
  acc = 0;
  for j in 0 .. limit { acc = acc + 1; }
  return acc;
}
"""


def test_prover_does_not_crash_when_a_for_range_counter_is_copied_into_a_local() -> None:
    """Threat: a valid kernel makes the prover raise (a traceback from validate / prove instead of
    a verdict), and a loop-head invariant built on a per-iteration value under-bounds the cost."""
    host = SandboxHost()
    policy = Policy.builder().with_limits(max_wall_time_ms=60_000, max_fuel=300).build()
    plan = host.prepare(COUNTER_ASSIGNED, policy)
    report = prove_plan(plan)
    for n in (-5, 0, 3, 10, 1_000):
        for backend in ("reference", "optimized"):
            result = host.execute(plan, "main", [n], backend=backend, encoding="json")
            for resource, used in (
                ("fuel", result.usage.fuel_used),
                ("loopIterations", result.usage.loop_iterations),
            ):
                bound = report.bound_at("main", resource, [n])
                assert bound is not None and used <= bound, (n, resource, used, bound)
