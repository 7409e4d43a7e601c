"""Differential agreement on generated programs: the optimized backend against the reference.

Programs come from the type-directed generator of the conformance suite
(``dotboxd.conformance.generator.programs_with_inputs``): well-typed modules with loops, break and
continue, private calls, collections, strings, records, opaque ids and fixture bindings (some
misbehaving), a policy that sometimes tightens a limit, and one to four input vectors. Each
vector runs on both backends and everything observable is compared (``differential.observe``).

At least 2,000 programs run per CI run (``CI=true``); ``DOTBOXD_DEEP=1`` runs 20,000; a local run
without either runs 300. A disagreement fails with the minimal program Hypothesis shrinks to,
printed in the text form.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from dotboxd.conformance.generator import ProgramWithInputs, programs_with_inputs
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.grammar.formatter import format_module

from .differential import differences, run_plan_both


def _examples() -> int:
    if os.environ.get("DOTBOXD_DEEP") == "1":
        return 20_000
    if os.environ.get("CI", "").lower() == "true":
        return 2_000
    return 300


EXAMPLES = _examples()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(programs_with_inputs(max_extra=3))
def test_generated_programs_agree_on_both_backends(drawn: ProgramWithInputs) -> None:
    program = drawn.program
    raw = {"policy": program.policy_json, "bindings": program.bindings_json}
    validated = validate_case(program.module, raw, None)
    pairs = run_plan_both(validated.plan, program.entry, drawn.inputs)
    for args, (reference, optimized) in zip(drawn.inputs, pairs, strict=True):
        diff = differences(reference, optimized)
        assert not diff, (
            f"backends disagree on input {args!r}:\n  "
            + "\n  ".join(diff)
            + "\n\nprogram:\n"
            + format_module(program.module)
            + f"\npolicy: {program.policy_json!r}\nbindings: {program.bindings_json!r}"
        )


def test_the_ci_profile_runs_at_least_two_thousand_programs() -> None:
    previous = os.environ.get("CI")
    os.environ["CI"] = "true"
    try:
        assert _examples() >= 2_000
    finally:
        if previous is None:
            del os.environ["CI"]
        else:
            os.environ["CI"] = previous
