"""Disagreements the adversarial fuzz of the fast forms found (``chunk_fuzz``), each minimized to
a kernel of its own.

A counter whose only step is zero (``a = a + 0``, ``a = a - 0``, I32 or I64, in a branch or beside
another counter) never moves, so the code generator gives it no room term - and, as the only
counter, reserves with ``_s_cap``. The verifier derived the loop's counters from the plan with that
counter among them and refused the module ("a loop with counters reserves without their room", or
"a room's terms are not the plan's counters'"), so the optimized backend answered R-OPT-VERIFIER
where the reference ran the kernel. Found by the value-range block of ``chunk_programs`` (seed 46
of the range-only run); fixed in ``counter_rooms.loop_counters``.
"""

from __future__ import annotations

import pytest

from .differential import assert_agree, assert_agree_at_every_fuel_budget, run_plan_both
from .kernels import prepare

ZERO_STEPS = {
    "alone": ("a = a + 0;", "a = a + 0L;"),
    "subtracted": ("a = a - 0;", "a = a - 0L;"),
    "in a branch": ("if a > 5 { a = a + 0; }", "if a > 5L { a = a + 0L; }"),
    "beside a counter": ("a = a + 0; b = b + 1;", "a = a + 0L; b = b + 1L;"),
    "beside a wide step": ("a = a - 0; b = b + 2147483647;", "a = a - 0L; b = b + 9223372036854775807L;"),
    "beside a reset": (
        "a = a + 0; a = a % 65536; b = b + i;",
        "a = a + 0L; a = a % 65536L; b = b + numeric.toI64(i);",
    ),
}
"""Zero-step counters: (the I32 body, the I64 body)."""


def _kernel(body: str, wide: bool = False) -> str:
    t, one, zero = ("I64", "1L", "0L") if wide else ("I32", "1", "0")
    return f"""module "zerostep" version "1.0.0";
entrypoint fn main(n I32) -> {t} {{
    a = {one}; b = {zero};
    for i in 0 .. n {{ {body} }}
    return a + b;
}}"""


@pytest.mark.parametrize("wide", [False, True], ids=["I32", "I64"])
@pytest.mark.parametrize("name", sorted(ZERO_STEPS))
def test_a_zero_step_counter_compiles_and_agrees(name: str, wide: bool) -> None:
    plan = prepare(_kernel(ZERO_STEPS[name][wide], wide))
    pairs = run_plan_both(plan, "main", [[0], [1], [5], [2049], [5000]])
    assert_agree(pairs, name)
    assert all(
        optimized["error"] is None or optimized["error"][1] != "R-OPT-VERIFIER" for _, optimized in pairs
    )


def test_a_zero_step_counter_agrees_at_every_fuel_budget() -> None:
    assert_agree_at_every_fuel_budget(
        prepare(_kernel(ZERO_STEPS["beside a counter"][0])), "main", [40], below=80
    )
