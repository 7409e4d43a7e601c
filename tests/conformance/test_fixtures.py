"""Fixture bindings: fresh for every run and every backend (generator finding 3), and our ``refuse``
extension (a binding that refuses on purpose with the category it chooses)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from dotboxd.conformance.availability import available_backends
from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.fixtures import ChargingInvoker, RefusingInvoker, case_invokers
from dotboxd.conformance.generator import GeneratedProgram, run_reference
from dotboxd.conformance.model import REFUSE_CATEGORIES
from dotboxd.conformance.pipeline import evaluate
from dotboxd.conformance.runner import run_cases
from dotboxd.conformance.shape import check_case
from dotboxd.core.types import I32
from dotboxd.grammar.text import parse_text
from dotboxd.runtime.errors import BindingError

SEQUENCE = {
    "id": "fx.seq.next",
    "parameters": [],
    "returnType": "I32",
    "effects": ["Cpu"],
    "audit": "None",
    "safety": "PureIntrinsic",
    "cost": {"baseFuel": 1},
    "behavior": {"kind": "sequence", "values": [1, 2]},
}
TEXT = 'module "m" version "1.0.0";\nentrypoint fn main() -> I32 { return fx.seq.next(); }\n'
CASE: dict[str, Any] = {
    "name": "sequence-starts-over",
    "kernelText": TEXT,
    "bindings": [SEQUENCE],
    "policy": {"limits": {"maxWallTimeMs": 60_000}},
    "expect": {"stage": "run", "outcome": "ok", "value": 1, "bindingCalls": {"fx.seq.next": 1}},
}


def test_each_evaluation_starts_with_fresh_fixtures() -> None:
    first = evaluate(CASE, "reference")
    second = evaluate(CASE, "reference")
    assert (first.value, second.value) == (1, 1)
    assert first.binding_calls == second.binding_calls == {"fx.seq.next": 1}


def test_one_case_on_every_backend_sees_the_same_fixtures() -> None:
    case = check_case(CASE, "fixtures.json", "bindings")
    names = list(available_backends())
    backends = {name: InProcessBackend(name) for name in names}
    report = run_cases([case, case], backends, names, frozenset(names))
    assert [result.actual.value for result in report.results] == [1] * (2 * len(names))
    assert report.ok


def test_serve_builds_fresh_fixtures_for_every_request() -> None:
    request = json.dumps({"case": {k: v for k, v in CASE.items() if k != "expect"}, "backend": "reference"})
    done = subprocess.run(
        [sys.executable, "-m", "dotboxd.cli.main", "conformance", "serve"],
        input=f"{request}\n{request}\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    values = [json.loads(line)["value"] for line in done.stdout.splitlines()]
    assert values == [1, 1], done.stderr


def test_the_generator_runs_each_program_with_fresh_fixtures() -> None:
    program = GeneratedProgram(
        module=parse_text(TEXT),
        policy_json={"limits": {"maxWallTimeMs": 60_000}},
        bindings_json=[SEQUENCE],
        entry="main",
        args_json=[],
    )
    first, second = run_reference(program), run_reference(program)
    assert first.expect["value"] == second.expect["value"] == 1
    assert first.expect == second.expect


@pytest.mark.parametrize("category", REFUSE_CATEGORIES)
def test_a_refusing_fixture_raises_the_binding_error_of_its_category(category: str) -> None:
    invoker = RefusingInvoker(category, "no such thing")
    with pytest.raises(BindingError) as info:
        invoker(1, 2)
    assert info.value.category == category
    assert invoker.calls == 1


def test_refuse_entries_get_refusing_invokers_and_others_the_shared_ones() -> None:
    entries: list[dict[str, Any]] = [
        {"id": "a.refuse", "behavior": {"kind": "refuse", "category": "NotFound"}},
        {"id": "b.return", "behavior": {"kind": "return", "value": 3}},
    ]
    invokers = case_invokers(entries, {"a.refuse": I32, "b.return": I32})
    assert isinstance(invokers["a.refuse"], RefusingInvoker)
    assert invokers["b.return"]() == 3


@pytest.mark.parametrize(
    ("behavior", "fragment"),
    [
        ({"kind": "refuse"}, "needs category"),
        ({"kind": "refuse", "category": "HostFailure"}, "needs a 'category' among"),
        ({"kind": "refuse", "category": "NotFound", "message": 5}, "takes a string 'message'"),
        ({"kind": "refuse", "category": "NotFound", "code": "R-X"}, "unknown behavior 'refuse' key"),
    ],
)
def test_malformed_refuse_behaviours_are_refused(behavior: dict[str, Any], fragment: str) -> None:
    raw = {**CASE, "bindings": [{**SEQUENCE, "behavior": behavior}]}
    with pytest.raises(CaseFormatError) as info:
        check_case(raw, "f.json", "bindings")
    assert fragment in str(info.value)


def test_a_refusal_reaches_the_result_with_its_category_and_code() -> None:
    raw = {**CASE, "bindings": [{**SEQUENCE, "behavior": {"kind": "refuse", "category": "PermissionDenied"}}]}
    actual = evaluate(raw, "reference")
    assert (actual.outcome, actual.error, actual.diagnostic) == (
        "error",
        "PermissionDenied",
        "R-BINDING-DENIED",
    )
    assert actual.binding_calls == {"fx.seq.next": 1}


def test_the_sequence_fixture_really_advances_within_one_run() -> None:
    """The control for the tests above: two calls in one run see both values."""
    text = TEXT.replace("return fx.seq.next();", "return fx.seq.next() * 10 + fx.seq.next();")
    actual = evaluate({**CASE, "kernelText": text}, "reference")
    assert actual.value == 12


class _Recorder:
    """A stand-in binding context that records what a charging fixture charges."""

    def __init__(self) -> None:
        self.charged: list[tuple[str, object]] = []

    def charge_file_read(self, amount: int) -> None:
        self.charged.append(("fileBytesRead", amount))

    def charge_file_write(self, amount: int) -> None:
        self.charged.append(("fileBytesWritten", amount))

    def charge_network_read(self, amount: int) -> None:
        self.charged.append(("networkBytesRead", amount))

    def charge_network_write(self, amount: int) -> None:
        self.charged.append(("networkBytesWritten", amount))

    def charge_log_event(self, message: str) -> None:
        self.charged.append(("log", message))


def test_a_charging_fixture_charges_in_order_then_returns_its_value() -> None:
    behavior = {
        "kind": "charge",
        "networkBytesWritten": 2,
        "fileBytesRead": 5,
        "logMessage": "hi",
        "value": 4,
    }
    invoker = ChargingInvoker(behavior, I32)
    context = _Recorder()
    assert invoker(context) == 4
    assert context.charged == [("fileBytesRead", 5), ("networkBytesWritten", 2), ("log", "hi")]


def test_a_charge_is_metered_and_reported_as_usage() -> None:
    charging = {**SEQUENCE, "capability": "fx.io", "effects": ["Cpu", "HostStateRead"], "audit": "PerCall"}
    charging.update(safety="ReadOnlyExternal", behavior={"kind": "charge", "fileBytesRead": 7, "value": 1})
    raw = {**CASE, "bindings": [charging], "policy": {"grants": [{"id": "fx.io"}]}}
    actual = evaluate(raw, "reference")
    assert (actual.outcome, actual.value) == ("ok", 1)
    assert actual.usage is not None and actual.usage["fileBytesRead"] == 7
    limited = {**raw, "policy": {"grants": [{"id": "fx.io"}], "limits": {"maxFileBytesRead": 6}}}
    refused = evaluate(limited, "reference")
    assert (refused.error, refused.diagnostic) == ("QuotaExceeded", "R-QUOTA-FILE-READ")
    assert refused.usage is not None and refused.usage["fileBytesRead"] == 0


@pytest.mark.parametrize(
    ("behavior", "fragment"),
    [
        ({"kind": "charge", "fileBytesRead": -1}, "non-negative integer 'fileBytesRead'"),
        ({"kind": "charge", "networkBytesRead": "10"}, "non-negative integer 'networkBytesRead'"),
        ({"kind": "charge", "logMessage": 3}, "string 'logMessage'"),
        ({"kind": "charge", "diskBytes": 3}, "unknown behavior 'charge' key"),
    ],
)
def test_malformed_charge_behaviours_are_refused(behavior: dict[str, Any], fragment: str) -> None:
    raw = {**CASE, "bindings": [{**SEQUENCE, "behavior": behavior}]}
    with pytest.raises(CaseFormatError) as info:
        check_case(raw, "f.json", "limits")
    assert fragment in str(info.value)
