"""Properties of the reference interpreter over well-typed programs from the type-directed generator:
it never fails closed with an internal fault, every usage counter stays within its limit, and a
run is deterministic (running it again gives the same value or error and the same usage)."""

from __future__ import annotations

from dataclasses import fields

from hypothesis import given, settings

from dotboxd.conformance.generator import GeneratedProgram, modules, run_reference
from dotboxd.runtime.meter import MeterLimits
from dotboxd.validator.policy import Policy

_PAIRS = [
    ("fuel_used", "max_fuel"),
    ("allocated_bytes", "max_allocated_bytes"),
    ("collection_elements", "max_total_collection_elements"),
    ("string_bytes", "max_total_string_bytes"),
]
"""Amount counters: a refused amount is never recorded, so they never exceed their limit."""

_ATTEMPTS = [
    ("loop_iterations", "max_loop_iterations", "R-QUOTA-LOOP"),
    ("host_calls", "max_host_calls", "R-QUOTA-HOST-CALLS"),
    ("log_events", "max_log_events", "R-QUOTA-LOG-EVENTS"),
]
"""Attempt counters count the refused attempt (spec/costs.md section 9): N + 1 at most, and only
when the run failed with that limit's own code."""


@settings(max_examples=60)
@given(modules())
def test_generated_programs_run_cleanly_and_deterministically(program: GeneratedProgram) -> None:
    first = run_reference(program)
    if first.stage != "run" or first.result is None:
        return  # the generator's rare invalid draw is the validator's business, not the runtime's
    result = first.result
    assert first.code != "R-HOST-INTERNAL"
    limits = MeterLimits.from_object(Policy.from_json(program.policy_json).limits)
    usage = result.usage
    for used, limit in _PAIRS:
        assert getattr(usage, used) <= getattr(limits, limit), used
    for used, limit, code in _ATTEMPTS:
        count, allowed = getattr(usage, used), getattr(limits, limit)
        refused = result.error is not None and result.error.code == code
        assert count <= allowed or (count == allowed + 1 and refused), used
    if not result.ok:
        assert result.commands == ()
    again = run_reference(program)
    assert again.result is not None
    if first.code in ("R-TIMEOUT", "R-BINDING-TIMEOUT"):
        return  # wall time is the one non-deterministic limit
    assert again.expect == first.expect and again.code == first.code
    assert [getattr(again.result.usage, f.name) for f in fields(usage)] == [
        getattr(usage, f.name) for f in fields(usage)
    ]
