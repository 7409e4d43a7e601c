"""Two-phase ranking over a Boolean phase flag (``validator/prover/phases.py``): a counter rises to
a bound while the flag holds, then falls. Bounds are checked against real runs on both backends;
a flag that can return to its first value must never give a termination proof."""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import dumps_wire
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import Verdict, prove_plan

RISE_FALL = """module "t" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
  i = 0;
  up = true;
  c = 0;
  while up || i > 0 {
    if up { if i < n { i = i + 1; } else { up = false; } } else { i = i - 1; }
    c = c + 1;
  }
  return c;
}
"""

FLIPS_BACK = RISE_FALL.replace("i = i - 1; }", "i = i - 1; if i == 0 { up = true; } }")

# the flag turns true once; the second phase counts another local down
HANDOFF = """module "t" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
  i = 0;
  k = m;
  done = false;
  while !done || k > 0 {
    if !done { if i < n { i = i + 1; } else { done = true; } } else { k = k - 1; }
  }
  return i + k;
}
"""


def _policy(**bounds: tuple[int, int]) -> Policy:
    builder = Policy.builder().with_limits(max_wall_time_ms=60_000, max_loop_iterations=1_000)
    return builder.with_input_bounds("main", **bounds).build() if bounds else builder.build()


def _loop(report: Any) -> Any:
    (loop,) = [loop for loop in report.function("main").loops if loop.kind == "while"]
    return loop


@pytest.mark.parametrize("form", ["text", "wire"])
def test_rise_then_fall_with_a_boolean_phase_is_proved_with_a_linear_bound(form: str) -> None:
    host = SandboxHost()
    source = RISE_FALL if form == "text" else dumps_wire(parse_text(RISE_FALL))
    plan = host.prepare(source, _policy(n=(0, 400)))
    report = prove_plan(plan)
    loop = _loop(report)
    assert loop.verdict is Verdict.PROVED and "two-phase" in loop.method
    # 2n + 1 iterations really run; the bound is 2n + 2, so 1,000 fits every n <= 400
    budget = report.function("main").budget("loopIterations")
    assert budget is not None and budget.verdict is Verdict.PROVED
    for n in (0, 1, 7, 400):
        bound = report.bound_at("main", "loopIterations", [n])
        for backend in ("reference", "optimized"):
            result = host.execute(plan, "main", [n], backend=backend, encoding="json")
            assert result.ok and result.value == 2 * n + 1
            assert result.usage.loop_iterations <= bound <= 2 * n + 2


def test_a_second_phase_over_another_local_is_bounded_by_its_entry_value() -> None:
    host = SandboxHost()
    plan = host.prepare(HANDOFF, _policy(n=(0, 300), m=(0, 300)))
    report = prove_plan(plan)
    assert _loop(report).verdict is Verdict.PROVED
    for n, m in ((0, 0), (5, 9), (300, 300)):
        bound = report.bound_at("main", "loopIterations", [n, m])
        result = host.execute(plan, "main", [n, m], encoding="json")
        assert result.ok
        assert result.usage.loop_iterations <= bound <= n + m + 2


def test_a_phase_flag_that_turns_back_never_proves_termination() -> None:
    """Threat: a loop that runs forever (the flag returns to its first value) is accepted as
    bounded by a two-phase ranking function; strict mode would then admit a kernel that only the
    meter stops."""
    host = SandboxHost()
    plan = host.prepare(FLIPS_BACK, _policy())
    assert _loop(prove_plan(plan)).verdict is not Verdict.PROVED
    result = host.execute(plan, "main", [3], encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-LOOP"
