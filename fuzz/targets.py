"""The fuzz targets: one function per stage, each taking raw bytes and raising ``Finding`` on a defect.

The same functions serve the coverage-guided harness (``fuzz/run.py``, atheris) and the replay test
(``tests/fuzz/test_fuzz_corpus.py``) that runs every seed and every past finding in the ordinary test
suite. A stage may answer hostile input only with a DotBoxDError (a diagnostic); anything else that
escapes (a Python exception, a traceback) is a finding. The differential target also treats any
observable disagreement between the reference interpreter and the optimized backend as a finding.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import dumps_wire, import_module, to_wire
from dotboxd.validator.api import validate
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy


class Finding(AssertionError):
    """A defect the fuzzer found: the stage misbehaved on this input."""


T = TypeVar("T")


def _stage(name: str, call: Callable[[], T]) -> T | None:
    """``call()``; None when it rejects with a diagnostic; a Finding for any other exception."""
    try:
        return call()
    except DotBoxDError:
        return None
    except Exception as exc:  # the whole point: no other exception may escape a stage
        raise Finding(f"{name} raised {type(exc).__name__}: {exc}") from exc


# -- policies the validator, prover and differential targets pick from -----------------------------

SMALL_LIMITS = {
    "max_fuel": 20_000,
    "max_loop_iterations": 2_000,
    "max_wall_time_ms": 5_000,
    "max_call_depth": 16,
    "max_list_length": 200,
    "max_map_entries": 200,
    "max_total_collection_elements": 2_000,
    "max_string_length": 2_000,
    "max_total_string_bytes": 64_000,
    "max_allocated_bytes": 256_000,
}
"""Small enough that every run ends in milliseconds by fuel, long before the wall-clock deadline (a
deadline stop is machine-dependent, and its counters are not compared)."""


def policies() -> list[Policy]:
    small = Policy.builder().with_limits(**SMALL_LIMITS).build()
    return [
        Policy.default(),
        small,
        Policy.builder().with_limits(**{**SMALL_LIMITS, "max_fuel": 300, "max_loop_iterations": 20}).build(),
        Policy.from_json(
            {"policyId": "deterministic", "deterministic": {"logicalNowUnixMillis": 0, "randomSeed": 1}}
        ),
    ]


_POLICIES: list[Policy] = []


def _policy(data: bytes) -> Policy:
    """A policy chosen by the input's length, so one seed file exercises one policy reproducibly."""
    if not _POLICIES:
        _POLICIES.extend(policies())
    return _POLICIES[len(data) % len(_POLICIES)]


# -- the targets -------------------------------------------------------------------------------------


def importer(data: bytes) -> None:
    """The strict wire importer; an accepted module must survive its own round trip unchanged."""
    module = _stage("import_module", lambda: import_module(data))
    if module is not None:
        _round_trip(module, "import_module")


def text_parser(data: bytes) -> None:
    """The text form; what it accepts, the wire form must accept too, as the same program."""
    module = _stage("parse_text", lambda: parse_text(data))
    if module is not None:
        _round_trip(module, "parse_text")


def _round_trip(module: ast.Module, source: str) -> None:
    wire = _stage("to_wire", lambda: dumps_wire(module))
    if wire is None:
        raise Finding(f"a module accepted by {source} cannot be written as wire JSON")
    again = _stage("import_module(round trip)", lambda: import_module(wire))
    if again is None:
        raise Finding(f"a module accepted by {source} is refused by the wire importer after a round trip")
    if to_wire(again) != to_wire(module):
        raise Finding(f"a module accepted by {source} changes meaning in a wire round trip")


def _plan(data: bytes) -> ExecutionPlan | None:
    module = _stage("import_module", lambda: import_module(data))
    if module is None:
        return None
    policy = _policy(data)
    return _stage("validate", lambda: validate(module, policy, now_unix_ms=0))


def validator(data: bytes) -> None:
    """Import, then validate against one of the policies; the verdict must be the same twice."""
    plan = _plan(data)
    if plan is None:
        return
    again = _plan(data)
    if again is None or again.plan_hash != plan.plan_hash:
        raise Finding("validation is not deterministic: the same input got two verdicts")


PROVER_RLIMIT = 200_000
"""A tenth of the default Z3 resource limit: each call stays well under a second."""


def prover(data: bytes) -> None:
    """Prove the budgets of an accepted plan with a small resource limit: a report or a diagnostic."""
    from dotboxd.validator.prover.prover import prove_plan

    plan = _plan(data)
    if plan is not None:
        _stage("prove_plan", lambda: prove_plan(plan, rlimit=PROVER_RLIMIT))


_ARGUMENTS: dict[str, list[Any]] = {
    "I32": [0, 7, -3, 2_147_483_647],
    "I64": [0, 9, -5, 9_223_372_036_854_775_807],
    "F64": [0.0, 1.5, -2.25, 1e300],
    "Bool": [True, False, True, False],
    "String": ["", "ab", "\U0001f600x", "a/b"],
}


def _arguments(function: ast.Function, data: bytes) -> list[Any] | None:
    """Inputs for a function whose parameters are all scalars (a pick driven by the input); else None."""
    out: list[Any] = []
    for index, parameter in enumerate(function.parameters):
        choices = _ARGUMENTS.get(parameter.type.name)
        if choices is None or parameter.type.arguments:
            return None
        out.append(choices[(len(data) + index) % len(choices)])
    return out


def differential(data: bytes) -> None:
    """Every scalar-input entrypoint of an accepted plan on both backends: identical observations."""
    plan = _plan(data)
    if plan is None:
        return
    functions = {function.id: function for function in plan.module.functions}
    for entry in plan.entrypoints:
        args = _arguments(functions[entry], data)
        if args is not None:
            _compare(plan, entry, args)


def _compare(plan: ExecutionPlan, entry: str, args: list[Any]) -> None:
    from tests.optimized.differential import differences, run_plan_both

    pairs = _stage("execute", lambda: run_plan_both(plan, entry, [args], encoding="python"))
    if pairs is None:
        raise Finding("a run raised a diagnostic instead of returning a failed result")
    found = differences(*pairs[0])
    if found:
        raise Finding(f"backends disagree on {entry}{tuple(args)!r}:\n" + "\n".join(found))


TARGETS: dict[str, Callable[[bytes], None]] = {
    "importer": importer,
    "text": text_parser,
    "validator": validator,
    "prover": prover,
    "differential": differential,
}


def describe(data: bytes) -> str:
    """A short printable form of an input, for failure messages."""
    try:
        return json.dumps(data.decode("utf-8"))[:200]
    except UnicodeDecodeError:
        return repr(data[:200])
