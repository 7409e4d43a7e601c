"""Triangular loop nests are bounded by the arithmetic sum of their iterations (``sums.py``):
n(n+1)/2-like, not n + n^2. Checked against real runs on both backends."""

from __future__ import annotations

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.prover import Verdict, prove_plan

TRIANGULAR = """module "t" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
  acc = 0;
  i = 0;
  while i < n {
    j = 0;
    while j < i { acc = acc + 1; j = j + 1; }
    i = i + 1;
  }
  return acc;
}
"""

# the inner loop runs n - i times: the cost falls with the counter, so no sum is taken (the
# product bound still holds)
FALLING = TRIANGULAR.replace("while j < i", "while j < n - i")


def _plan(source: str, **limits: int) -> tuple[SandboxHost, ExecutionPlan]:
    host = SandboxHost()
    policy = (
        Policy.builder()
        .with_limits(max_wall_time_ms=60_000, **limits)
        .with_input_bounds("main", n=(0, 100))
        .build()
    )
    return host, host.prepare(source, policy)


def test_triangular_nest_iterations_are_bounded_by_the_sum_not_the_square() -> None:
    # n = 100: 100 outer + 4,950 inner iterations = 5,050; the product bound n + n^2 is 10,100
    host, plan = _plan(TRIANGULAR, max_loop_iterations=5_050, max_fuel=100_000)
    report = prove_plan(plan)
    loops = report.function("main").budget("loopIterations")
    assert loops is not None and loops.verdict is Verdict.PROVED, loops and loops.bound
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.PROVED
    for n in (0, 1, 2, 37, 100):
        bound = report.bound_at("main", "loopIterations", [n])
        fuel_bound = report.bound_at("main", "fuel", [n])
        assert bound == n + n * (n - 1) // 2  # exact: the sum of 0 + 1 + ... + (n - 1), plus n
        for backend in ("reference", "optimized"):
            result = host.execute(plan, "main", [n], backend=backend, encoding="json")
            assert result.ok and result.value == n * (n - 1) // 2
            assert result.usage.loop_iterations <= bound
            assert result.usage.fuel_used <= fuel_bound


@pytest.mark.parametrize("n", [1, 50, 100])
def test_a_cost_that_falls_with_the_counter_keeps_a_valid_bound(n: int) -> None:
    host, plan = _plan(FALLING, max_loop_iterations=20_000)
    report = prove_plan(plan)
    bound = report.bound_at("main", "loopIterations", [n])
    result = host.execute(plan, "main", [n], encoding="json")
    assert result.ok and bound is not None and result.usage.loop_iterations <= bound


def test_a_triangular_for_range_nest_is_bounded_by_the_sum() -> None:
    source = """module "t" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
  acc = 0;
  for i in 0 .. n { for j in 0 .. i { acc = acc + 1; } }
  return acc;
}
"""
    host, plan = _plan(source, max_loop_iterations=5_050)
    report = prove_plan(plan)
    loops = report.function("main").budget("loopIterations")
    assert loops is not None and loops.verdict is Verdict.PROVED
    for n in (0, 1, 9, 100):
        bound = report.bound_at("main", "loopIterations", [n])
        assert bound == n + n * (n - 1) // 2
        result = host.execute(plan, "main", [n], encoding="json")
        assert result.ok and result.usage.loop_iterations <= bound
