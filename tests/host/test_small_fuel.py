"""The fast lane's small fuel start (``runtime/optimized/small_fuel.py``).

A lane run of a loop-free, fast entry counts its fuel down from the entry's worst case instead of
the whole budget, so the generated code's charges stay on CPython's cached integers. What a host sees
must not change: the fuel used, the usage record, exhaustion at a tight budget. The whole corpus is
compared lane against ordinary path in ``test_fast_lane.py``; here, which entries get a small start,
that corpus cases really take it, and that a start too small could only fail closed.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend, compile_plan, small_fuel
from dotboxd.runtime.optimized.facts import FunctionFacts
from dotboxd.runtime.optimized.small_fuel import SMALL_INT_MAX, start_fuel
from tests.corpus_cases import corpus_cases

PRED = 'module "p" version "1.0.0";\nentrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }\n'
DIVIDE = 'module "d" version "1.0.0";\nentrypoint fn check(a I32, b I32) -> Bool { return a / b > 0; }\n'
LOOP = """module "l" version "1.0.0";
entrypoint fn check(a I32, b I32) -> Bool {
    acc = 0;
    for i in 0 .. a { acc = acc + b; }
    return acc > 0;
}"""


def _start(source: str, max_fuel: int = 100_000) -> tuple[int, int]:
    """(the start the lane would use, the worst case the facts give) for ``check`` of ``source``."""
    host = SandboxHost()
    plan = host.prepare(source)
    function = compile_plan(plan).functions["check"]
    return start_fuel(plan, "check", function, max_fuel), small_fuel.function_facts(plan, "check").max_cost


def test_a_loop_free_predicate_counts_down_from_its_worst_case() -> None:
    start, worst = _start(PRED)
    assert start == worst == 8  # return (1) + && (1) + hp > 0 (3) + level >= 10 (3)


@pytest.mark.parametrize("source", [DIVIDE, LOOP], ids=["fault-stub", "loop"])
def test_entries_whose_count_a_stub_reads_or_that_loop_keep_the_whole_budget(source: str) -> None:
    assert _start(source)[0] == 100_000


def test_a_budget_already_small_is_kept() -> None:
    assert _start(PRED, SMALL_INT_MAX)[0] == SMALL_INT_MAX
    assert _start(PRED, 7)[0] == 7  # below the worst case: exhaustion stays possible and exact


def _host() -> SandboxHost:
    return SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})


def test_lane_runs_report_the_fuel_of_the_ordinary_path_and_the_reference() -> None:
    host = _host()
    plan = host.prepare(PRED)
    for args in ([3, 12], [-3, 12], [3, 5]) * 3:  # the first runs compile and bind the lane
        lane = host.execute(plan, "check", args, backend="optimized")
        reference = host.execute(plan, "check", args)
        assert (lane.value, lane.usage, lane.error) == (reference.value, reference.usage, reference.error)
    rows = host.execute_many(plan, "check", [[3, 12], [-3, 12], [3, 5]], backend="optimized")
    assert [r.usage.fuel_used for r in rows] == [8, 5, 8]


@pytest.mark.parametrize("max_fuel", [4, 5, 7, 8, 257])
def test_exhaustion_at_a_tight_budget_is_the_reference_one(max_fuel: int) -> None:
    host = _host()
    policy = Policy.builder().with_limits(max_fuel=max_fuel).build()
    plan = host.prepare(PRED, policy)
    for _ in range(3):
        lane = host.execute(plan, "check", [3, 12], backend="optimized")
    reference = host.execute(plan, "check", [3, 12])
    assert lane.to_json() | {"runId": "", "backend": ""} == reference.to_json() | {"runId": "", "backend": ""}


def test_a_start_below_the_real_worst_case_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """If the facts ever understated a worst case, the exhaustion stub would find the meter with fuel
    left and refuse the run (internal fault), never report a wrong fuel count."""
    monkeypatch.setattr(
        small_fuel, "function_facts", lambda plan, fid: FunctionFacts(fid, size=1, max_cost=5)
    )
    host = _host()
    plan = host.prepare(PRED)
    results = [host.execute(plan, "check", [3, 12], backend="optimized") for _ in range(3)]
    assert results[-1].error is not None and results[-1].error.code == "R-HOST-INTERNAL"
    assert results[-1].value is None
    rows = host.execute_many(plan, "check", [[3, 12], [-3, 12]], backend="optimized")
    codes = [None if r.error is None else r.error.code for r in rows]
    assert codes == ["R-HOST-INTERNAL", None] and rows[1].usage.fuel_used == 5


def test_corpus_cases_take_the_small_start() -> None:
    """Not vacuous: the corpus comparison in ``test_fast_lane.py`` runs entries with a small start."""
    small = 0
    for case in corpus_cases():
        if case.expect.stage != "run":
            continue
        module = import_stage(case.raw, case.origin)
        if not isinstance(module, Module):
            continue
        with case_root(case.raw) as root:
            plan: Any = validate_case(module, case.raw, root).plan
        max_fuel = plan.policy.limits.max_fuel
        function = compile_plan(plan).functions.get(case.entrypoint)
        if function is not None and start_fuel(plan, case.entrypoint, function, max_fuel) < max_fuel:
            small += 1
    assert small >= 20
