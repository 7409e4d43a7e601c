"""Lexicographic ranking functions and unrolled short loops: their bounds hold on real runs.

A lexicographic pair ``(x, y)`` bounds ``while x > 0 { if y > 0 { y-- } else { x--; y = n } }`` by
``x + (x + 1) * max(y, n)``; a variant whose restart also resets ``x`` has no such pair and must
stay unproved. An unrolled loop's cost is the interpreter's, iteration by iteration, so its bound
is exact.
"""

from __future__ import annotations

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan

LEX = """module "t" version "1.0.0";
entrypoint fn main(x I32, y I32, n I32) -> I32 {
  c = 0;
  while x > 0 {
    if y > 0 { y = y - 1; } else { x = x - 1; y = n; }
    c = c + 1;
  }
  return c;
}
"""
LEX_RESETS_BOTH = LEX.replace("x = x - 1; y = n;", "x = n; y = n;")

SHORT_WHILE = """module "t" version "1.0.0";
entrypoint fn main(x I32) -> I32 {
  s = 0;
  i = 0;
  while i < 3 { s = s + x; i = i + 1; }
  return s;
}
"""


def _policy() -> Policy:
    return (
        Policy.builder()
        .with_limits(max_wall_time_ms=60_000)
        .with_input_bounds("main", x=(-5, 6), y=(-5, 9), n=(-3, 7))
        .build()
    )


@pytest.mark.parametrize("args", [(2, 3, 5), (3, 0, 7), (6, 9, 0), (1, -5, 7), (0, 4, 4), (6, 9, 7)])
def test_lexicographic_bound_covers_every_run(args: tuple[int, int, int]) -> None:
    """Threat: an unsound bound (T-PRV-01) from the lexicographic trip-count rule."""
    host = SandboxHost()
    plan = host.prepare(LEX, _policy())
    report = prove_plan(plan)
    loop = report.function("main").loops[0]
    assert loop.verdict is Verdict.PROVED and loop.method.startswith("lexicographic")
    result = host.execute(plan, "main", list(args), encoding="json")
    assert result.ok
    bound = report.bound_at("main", "loopIterations", list(args))
    assert bound is not None and result.usage.loop_iterations <= bound
    fuel = report.bound_at("main", "fuel", list(args))
    assert fuel is not None and result.usage.fuel_used <= fuel


def test_a_restart_of_both_parts_is_not_a_lexicographic_ranking() -> None:
    """Threat: non-termination accepted (T-PRV-05): with x reset to n too, x = n = 1, y = 0
    loops forever, so no ranking may be found."""
    host = SandboxHost()
    plan = host.prepare(LEX_RESETS_BOTH, _policy())
    report = prove_plan(plan)
    assert report.function("main").loops[0].verdict is Verdict.UNKNOWN
    budget = report.function("main").budget("loopIterations")
    assert budget is not None and budget.verdict is not Verdict.PROVED
    result = host.execute(plan, "main", [1, 0, 1], encoding="json")
    assert result.error is not None and result.error.category == "QuotaExceeded"  # it never ends


def test_an_unrolled_loop_is_charged_exactly_as_the_interpreter_charges_it() -> None:
    """Threat: drift between the static cost table and the meter (T-PRV-02): the unrolled walk
    charges the guard, the iteration and the body in the interpreter's order, so the bound is the
    usage exactly, and the overflow in the running sum is refuted with a faulting witness."""
    host = SandboxHost()
    plan = host.prepare(SHORT_WHILE, Policy.builder().with_limits(max_wall_time_ms=60_000).build())
    report = prove_plan(plan)
    proof = report.function("main")
    assert proof.loops[0].method.startswith("unrolled") and proof.loops[0].iterations == "3"
    result = host.execute(plan, "main", [7], encoding="json")
    assert result.ok
    for resource, attr in (("fuel", "fuel_used"), ("loopIterations", "loop_iterations")):
        assert report.bound_at("main", resource, [7]) == getattr(result.usage, attr)
    refuted = [s for s in proof.safety if s.verdict is Verdict.REFUTED]
    assert refuted and refuted[0].witness is not None
    for backend in ("reference", "optimized"):
        run = host.execute(plan, "main", list(refuted[0].witness.args), backend=backend, encoding="json")
        assert run.error is not None and run.error.code == "R-ARITH-OVERFLOW"
