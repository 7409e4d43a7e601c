"""``while true`` loops left by a leading ``if C { break; }`` (or ``return``): the ranking function
is read off ``not C``, and the bound counts the iteration that leaves (``r(entry) + 1``)."""

from __future__ import annotations

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan

BREAK = (
    'module "t" version "1.0.0";\nentrypoint fn main(n I32) -> I32 {\n'
    "i = 0;\nwhile true {\nif i >= n { break; }\ni = i + 1;\n}\nreturn i;\n}\n"
)
LATE_EXIT = (
    'module "t" version "1.0.0";\nentrypoint fn main(n I32) -> I32 {\n'
    "i = 0;\nwhile true {\ni = i - 1;\nif i >= n { break; }\n}\nreturn i;\n}\n"
)


def _policy(limit: int) -> Policy:
    return (
        Policy.builder()
        .with_limits(max_wall_time_ms=60_000, max_loop_iterations=limit)
        .with_input_bounds("main", n=(0, 50))
        .build()
    )


@pytest.mark.parametrize("limit", [50, 51])
def test_early_exit_ranking_counts_the_leaving_iteration_so_no_budget_is_underestimated(limit: int) -> None:
    """Threat: an unsound bound (T-PRV-01). For n = 50 the body runs 51 times (the last one
    breaks): a loopIterations limit of 50 must not be PROVED, 51 must be."""
    host = SandboxHost()
    plan = host.prepare(BREAK, _policy(limit))
    report = prove_plan(plan)
    loop = report.function("main").loops[0]
    assert loop.verdict is Verdict.PROVED and "early exit" in loop.method
    budget = report.function("main").budget("loopIterations")
    assert budget is not None
    result = host.execute(plan, "main", [50], encoding="json")
    assert result.ok is (limit == 51)
    assert (budget.verdict is Verdict.PROVED) is (limit == 51)


def test_an_exit_after_the_body_changed_the_counter_gives_no_ranking_function() -> None:
    """Threat: non-termination accepted (T-PRV-05): the exit test must see the loop-head values,
    so a break after an assignment is not read as a guard (this loop never leaves for n >= 0)."""
    host = SandboxHost()
    plan = host.prepare(LATE_EXIT, _policy(100_000))
    assert prove_plan(plan).function("main").loops[0].verdict is Verdict.UNKNOWN
