"""Comparing expectations with reported results: exact where pinned, silent where not."""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.conformance.compare import compare
from dotboxd.conformance.model import Actual, Expect
from dotboxd.conformance.values import same_value


def fields(expect: Expect, actual: Actual) -> list[str]:
    return [mismatch.field for mismatch in compare(expect, actual)]


REJECTION: dict[str, Any] = {
    "stage": "import",
    "outcome": "rejected",
    "error": "ValidationError",
    "diagnostic": "E-JSON-LIMIT",
    "pointer": "/functions/0",
    "line": 3,
    "column": 14,
}
"""One observed rejection, every field set: the result below and the expectation that pins it all."""

REJECTED = Actual(**REJECTION)


def test_matching_rejection_passes_on_every_pinned_field() -> None:
    expect = Expect(**REJECTION)
    assert compare(expect, REJECTED) == []


@pytest.mark.parametrize(
    ("pins", "field"),
    [
        ({"diagnostic": "E-JSON-SCHEMA"}, "diagnostic"),
        ({"error": "PolicyDenied"}, "error"),
        ({"pointer": "/functions/1"}, "pointer"),
        ({"pointer": ""}, "pointer"),
        ({"line": 4}, "line"),
        ({"column": 1}, "column"),
    ],
)
def test_each_pinned_field_is_compared(pins: dict[str, Any], field: str) -> None:
    expect = Expect(stage="import", outcome="rejected", **{"diagnostic": "E-JSON-LIMIT", **pins})
    assert fields(expect, REJECTED) == [field]


def test_unpinned_fields_are_not_compared() -> None:
    assert compare(Expect(stage="import", outcome="rejected", diagnostic="E-JSON-LIMIT"), REJECTED) == []


def test_a_pinned_field_that_was_not_reported_fails() -> None:
    silent = Actual(stage="import", outcome="rejected", diagnostic="E-JSON-LIMIT")
    mismatches = compare(
        Expect(stage="import", outcome="rejected", diagnostic="E-JSON-LIMIT", line=1), silent
    )
    assert [m.render() for m in mismatches] == ["line: expected 1, got (not reported)"]


def test_wrong_stage_or_outcome_fails_and_says_why() -> None:
    actual = Actual(stage="import", outcome="ok")
    mismatches = compare(Expect(stage="import", outcome="rejected", diagnostic="E-JSON-LIMIT"), actual)
    assert [m.render() for m in mismatches] == ['stage/outcome: expected "import/rejected", got "import/ok"']


def test_unsupported_results_fail_and_carry_their_message() -> None:
    actual = Actual(stage="validate", outcome="unsupported", message="the validate stage is not available")
    rendered = [m.render() for m in compare(Expect(stage="validate", outcome="ok"), actual)]
    assert rendered[0] == 'stage/outcome: expected "validate/ok", got "validate/unsupported"'
    assert rendered[1] == 'message: "the validate stage is not available"'


@pytest.mark.parametrize(
    ("expected_stage", "actual_stage", "actual_outcome", "passes"),
    [
        ("import", "validate", "ok", True),
        ("import", "validate", "rejected", True),
        ("import", "run", "error", True),
        ("validate", "run", "ok", True),
        ("validate", "import", "ok", False),
        ("run", "validate", "ok", False),
        ("import", None, "unsupported", False),
        ("import", "import", "rejected", False),
    ],
)
def test_ok_at_an_earlier_stage_is_satisfied_by_reaching_a_later_one(
    expected_stage: str, actual_stage: str | None, actual_outcome: str, passes: bool
) -> None:
    actual = Actual(stage=actual_stage, outcome=actual_outcome)
    assert (compare(Expect(stage=expected_stage, outcome="ok"), actual) == []) is passes


def test_rejection_at_an_earlier_stage_is_not_satisfied_by_a_later_one() -> None:
    expect = Expect(stage="import", outcome="rejected", diagnostic="E-JSON-LIMIT")
    assert fields(expect, Actual(stage="validate", outcome="rejected", diagnostic="E-JSON-LIMIT")) == [
        "stage/outcome"
    ]


def run_ok(**kw: Any) -> Actual:
    return Actual(stage="run", outcome="ok", **kw)


def test_run_value_fuel_usage_and_binding_calls() -> None:
    expect = Expect(
        stage="run",
        outcome="ok",
        has_value=True,
        value=[1, 2],
        fuel_used=12,
        usage={"hostCalls": 2, "loopIterations": 0},
        binding_calls={"game.kill": 2, "game.spare": 0},
    )
    good = run_ok(
        value=[1, 2],
        usage={"fuelUsed": 12, "hostCalls": 2, "loopIterations": 0, "allocatedBytes": 99},
        binding_calls={"game.kill": 2},
    )
    assert compare(expect, good) == []
    bad = run_ok(value=[1, 3], usage={"fuelUsed": 13, "hostCalls": 2}, binding_calls={"game.kill": 1})
    assert fields(expect, bad) == ["value", "fuelUsed", "usage.loopIterations", "bindingCalls.game.kill"]
    silent = run_ok(value=[1, 2])
    assert fields(expect, silent) == [
        "fuelUsed",
        "usage.hostCalls",
        "usage.loopIterations",
        "bindingCalls.game.kill",
        "bindingCalls.game.spare",
    ]


def test_unit_value_null_is_compared() -> None:
    expect = Expect(stage="run", outcome="ok", has_value=True, value=None)
    assert compare(expect, run_ok(value=None)) == []
    assert fields(expect, run_ok(value=0)) == ["value"]


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        (1, 1, True),
        (1, 1.0, True),
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (True, True, True),
        (0.0, -0.0, False),
        (-0.0, -0.0, True),
        (0, -0.0, False),
        (2**53 + 1, float(2**53), False),
        (None, 0, False),
        (None, None, True),
        ("1", 1, False),
        ([1, [2, "a"]], [1, [2, "a"]], True),
        ([1, 2], [1, 2, 3], False),
        ({"type": "PlayerId", "value": "p"}, {"type": "PlayerId", "value": "p"}, True),
        ({"type": "PlayerId", "value": "p"}, {"type": "ItemId", "value": "p"}, False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([[1, "x"]], [[1, "x"]], True),
        (1.5, float("nan"), False),
        (float("inf"), float("inf"), False),
        ([1], {"0": 1}, False),
    ],
)
def test_value_equality_is_exact(expected: Any, actual: Any, same: bool) -> None:
    assert same_value(expected, actual) is same
