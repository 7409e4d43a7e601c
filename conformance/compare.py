"""Comparing a case's ``expect`` with what an implementation reported.

Only what the case pins is compared, but everything it pins is compared exactly; an expectation
the implementation did not report at all (say a line number) is a mismatch, never a pass. One
leniency is deliberate: ``ok`` at an earlier stage is satisfied by an implementation that carried
on to a later stage, because getting there proves the earlier stage accepted the module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dotboxd.conformance.model import STAGES, Actual, Expect
from dotboxd.conformance.values import same_value

_MISSING = object()


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One expected-vs-actual difference, in the words of the case format."""

    field: str
    expected: Any
    actual: Any

    def render(self) -> str:
        if self.field == "message":
            return f"message: {_show(self.actual)}"
        return f"{self.field}: expected {_show(self.expected)}, got {_show(self.actual)}"

    def to_json(self) -> dict[str, Any]:
        actual = None if self.actual is _MISSING else self.actual
        return {"field": self.field, "expected": self.expected, "actual": actual}


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(not reported)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def compare(expect: Expect, actual: Actual) -> list[Mismatch]:
    """Every difference between ``expect`` and ``actual`` (empty: the case passed)."""
    if not _stage_outcome_ok(expect, actual):
        found = [
            Mismatch("stage/outcome", f"{expect.stage}/{expect.outcome}", f"{actual.stage}/{actual.outcome}")
        ]
        if actual.diagnostic is not None and expect.diagnostic != actual.diagnostic:
            found.append(Mismatch("diagnostic", expect.diagnostic, actual.diagnostic))
        if actual.message:
            found.append(Mismatch("message", None, actual.message))
        return found
    found = []
    pinned: list[tuple[str, Any, Any]] = [
        ("diagnostic", expect.diagnostic, actual.diagnostic),
        ("error", expect.error, actual.error),
        ("pointer", expect.pointer, actual.pointer),
        ("line", expect.line, actual.line),
        ("column", expect.column, actual.column),
    ]
    for name, wanted, got in pinned:
        if wanted is not None and wanted != got:
            found.append(Mismatch(name, wanted, _MISSING if got is None else got))
    if expect.has_value and not same_value(expect.value, actual.value):
        found.append(Mismatch("value", expect.value, actual.value))
    usage = actual.usage
    if expect.fuel_used is not None:
        got_fuel = _counter(usage, "fuelUsed", default=_MISSING)
        if got_fuel != expect.fuel_used:
            found.append(Mismatch("fuelUsed", expect.fuel_used, got_fuel))
    found.extend(_counters("usage", expect.usage, usage, default=_MISSING))
    found.extend(_counters("bindingCalls", expect.binding_calls, actual.binding_calls, default=0))
    return found


def _stage_outcome_ok(expect: Expect, actual: Actual) -> bool:
    if actual.stage == expect.stage and actual.outcome == expect.outcome:
        return True
    if expect.outcome != "ok" or actual.stage not in STAGES:
        return False
    return STAGES.index(actual.stage) > STAGES.index(expect.stage)


def _counter(counters: Mapping[str, Any] | None, name: str, default: Any) -> Any:
    if counters is None:
        return _MISSING
    return counters.get(name, default)


def _counters(
    field: str, wanted: Mapping[str, int] | None, got: Mapping[str, Any] | None, default: Any
) -> list[Mismatch]:
    if wanted is None:
        return []
    found = []
    for name, amount in wanted.items():
        value = _counter(got, name, default)
        if isinstance(value, bool) or value != amount:
            found.append(Mismatch(f"{field}.{name}", amount, value))
    return found
