"""Sums of two guard comparisons as ranking functions: ``while x > 0 && y > 0`` whose paths each
lower one of the two is ranked by ``x + y``; a path that lowers neither keeps the loop unproved."""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.grammar.text import parse_text
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan

from .harness import check_program, prepare


def _kernel(else_branch: str) -> str:
    return (
        'module "t" version "1.0.0";\nentrypoint fn main(x I32, y I32, k I32) -> I32 {\n'
        f"c = 0;\nwhile x > 0 && y > 0 {{\nif k > 0 {{ x = x - 1; }} else {{ {else_branch} }}\n"
        "c = c + 1;\n}\nreturn c;\n}\n"
    )


def _ranked(source: str, max_loop_iterations: int, *, y_max: int, method: str) -> tuple[Any, Any]:
    """Prove ``source`` with x in [0, 20] and y in [0, y_max]: its loop must be PROVED by a ranking
    function spelled ``method``; returns the prepared program and its loopIterations budget."""
    policy = {
        "limits": {"maxLoopIterations": max_loop_iterations, "maxWallTimeMs": 60000},
        "inputBounds": {"main": {"x": [0, 20], "y": [0, y_max]}},
    }
    prepared = prepare(parse_text(source), policy, [], "main")
    assert prepared is not None
    loop = prepared.report.function("main").loops[0]
    assert loop.verdict is Verdict.PROVED and method in loop.method
    budget = prepared.report.function("main").budget("loopIterations")
    assert budget is not None
    return prepared, budget


def test_conjunctive_guard_lowering_either_local_is_ranked_by_the_sum_and_its_bound_holds() -> None:
    """Threat: an unsound bound (T-PRV-01): the path-sensitive x + y bound must cover real runs."""
    source = _kernel("y = y - 1;")
    prepared, budget = _ranked(source, 45, y_max=25, method="x + y")
    assert budget.verdict is Verdict.PROVED  # x + y <= 45 fits the limit
    inputs = [[20, 25, 0], [20, 25, 1], [1, 25, 1], [20, 1, 0], [0, 5, 1], [7, 9, -3]]
    assert check_program(prepared, inputs).violations == []


def test_a_path_that_lowers_neither_local_leaves_the_conjunctive_loop_unproved() -> None:
    """Threat: non-termination accepted (T-PRV-05): for k <= 0 this loop never ends."""
    plan = SandboxHost().prepare(_kernel("y = y + 0;"), Policy.default())
    assert prove_plan(plan).function("main").loops[0].verdict is Verdict.UNKNOWN


DISJUNCTIVE = (
    'module "t" version "1.0.0";\nentrypoint fn main(x I32, y I32) -> I32 {\n'
    "c = 0;\nwhile x > 0 || y > 0 {\nif x > 0 { x = x - 1; } else { y = y - 1; }\nc = c + 1;\n}\n"
    "return c;\n}\n"
)


@pytest.mark.parametrize("limit", [39, 40])
def test_disjunctive_guard_is_ranked_by_the_positive_parts_and_no_fewer_iterations(limit: int) -> None:
    """Threat: an unsound bound (T-PRV-01): x = y = 20 runs 40 iterations; a limit of 39 must not
    be PROVED, 40 must be."""
    prepared, budget = _ranked(DISJUNCTIVE, limit, y_max=20, method="max(0, x) + max(0, y)")
    assert (budget.verdict is Verdict.PROVED) is (limit == 40)
    assert check_program(prepared, [[20, 20], [0, 20], [20, 0], [3, 7]]).violations == []
