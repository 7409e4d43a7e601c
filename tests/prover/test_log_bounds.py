"""Multiplicative progress: a ranking function that every iteration at least halves gives a
logarithmic trip count, ``bit_length(max r(entry))``, not ``r(entry)``."""

from __future__ import annotations

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan

HALVING = (
    'module "t" version "1.0.0";\nentrypoint fn main(x I32) -> I32 {\n'
    "c = 0;\nwhile x > 0 {\nx = x / 2;\nc = c + 1;\n}\nreturn c;\n}\n"
)
NOT_HALVING = (
    'module "t" version "1.0.0";\nentrypoint fn main(x I32) -> I32 {\n'
    "c = 0;\nwhile x > 0 {\nx = x - x / 3 - 1;\nc = c + 1;\n}\nreturn c;\n}\n"
)


@pytest.mark.parametrize("limit", [30, 31])
def test_halving_over_the_full_i32_range_is_bounded_by_31_iterations_and_no_fewer(limit: int) -> None:
    """Threat: an unsound bound (T-PRV-01). x = 2^31 - 1 halves 31 times before reaching 0."""
    host = SandboxHost()
    plan = host.prepare(HALVING, Policy.builder().with_limits(max_loop_iterations=limit).build())
    report = prove_plan(plan)
    assert "halved" in report.function("main").loops[0].method
    budget = report.function("main").budget("loopIterations")
    assert budget is not None
    assert (budget.verdict is Verdict.PROVED) is (limit == 31)
    assert host.execute(plan, "main", [2_147_483_647], encoding="json").ok is (limit == 31)


def test_a_loop_that_removes_only_a_third_gets_no_logarithmic_bound() -> None:
    """Threat: an unsound bound (T-PRV-01): x - x/3 - 1 shrinks by less than half, so the
    halving rule must not fire (its bound would be too small)."""
    report = prove_plan(SandboxHost().prepare(NOT_HALVING, Policy.default()))
    loop = report.function("main").loops[0]
    assert loop.verdict is Verdict.PROVED and "halved" not in loop.method


DOUBLING = (
    'module "t" version "1.0.0";\nentrypoint fn main(n I32) -> I32 {\n'
    "i = 1;\nc = 0;\nwhile i < n {\ni = i * 2;\nc = c + 1;\n}\nreturn c;\n}\n"
)
NOT_DOUBLING = DOUBLING.replace("i = i * 2;", "i = i + i / 3 + 1;")


@pytest.mark.parametrize("limit", [30, 31])
def test_doubling_up_to_the_i32_maximum_is_bounded_by_31_iterations_and_no_fewer(limit: int) -> None:
    """Threat: an unsound bound (T-PRV-01). From i = 1, i < 2^31 - 1 holds for i = 2^0 .. 2^30:
    31 iterations (the last one overflows computing 2^31), so 31 is proved and 30 is not."""
    host = SandboxHost()
    plan = host.prepare(DOUBLING, Policy.builder().with_limits(max_loop_iterations=limit).build())
    report = prove_plan(plan)
    loop = report.function("main").loops[0]
    assert loop.verdict is Verdict.PROVED and "doubled" in loop.method
    budget = report.function("main").budget("loopIterations")
    assert budget is not None
    assert (budget.verdict is Verdict.PROVED) is (limit == 31)
    result = host.execute(plan, "main", [2_147_483_647], encoding="json")
    assert result.error is not None
    assert result.error.code == ("R-ARITH-OVERFLOW" if limit == 31 else "R-QUOTA-LOOP")
    assert result.usage.loop_iterations == 31  # the 31st iteration runs, or is the one refused


def test_a_loop_that_grows_by_a_third_gets_no_logarithmic_bound() -> None:
    """Threat: an unsound bound (T-PRV-01): i + i/3 + 1 grows by less than double, so the
    doubling rule must not fire; the loop is still ranked by n - i (i stays >= 1)."""
    report = prove_plan(SandboxHost().prepare(NOT_DOUBLING, Policy.default()))
    loop = report.function("main").loops[0]
    assert loop.verdict is Verdict.PROVED and "doubled" not in loop.method
