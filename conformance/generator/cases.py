"""Generated programs as conformance cases, with expectations decided by the reference interpreter.

``generate_cases(count, seed)`` draws programs from a text-seeded ``RandomSource`` (so the same
``count`` and ``seed`` give byte-identical cases on any machine), runs each one exactly as the
runner will - the module goes through the wire form and the strict importer, the fixture bindings
through the binding manifest loader and ``runtime.fixtures``, the policy through ``Policy.from_json``
- on the reference backend via ``dotboxd.host.SandboxHost``, and records what happened as the case's
``expect``: stage, outcome, value or error category, ``fuelUsed``, loop iterations, host calls and
binding calls.

A program is skipped (and another drawn) when its expectation would not be a fact about the
language: the module was rejected (a generator imperfection, measured separately), or the run
ended in a category that depends on the machine (Timeout, Cancelled) or signals an internal fault
of the runtime (HostFailure) - those are findings to report, not behaviour to pin.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.wire import import_module, to_wire
from dotboxd.host import SandboxHost
from dotboxd.host.result import ExecutionResult
from dotboxd.runtime.fixtures import fixture_invokers
from dotboxd.validator.api import validate
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

from .program import GeneratedProgram, build_program
from .source import RandomSource

#: Run outcomes that are not deterministic facts about the program (never written into a case).
UNPINNABLE = frozenset({"Timeout", "Cancelled", "HostFailure"})
#: How many draws ``generate_cases`` may spend per requested case before giving up.
MAX_DRAWS_PER_CASE = 20


@dataclass(frozen=True, slots=True)
class ReferenceOutcome:
    """What the reference pipeline did with a program: ``stage`` (import/validate/run), the
    case-format ``expect`` object, the run's error code (``R-*``/``E-*``, or None) and the result."""

    stage: str
    expect: dict[str, Any]
    code: str | None
    result: ExecutionResult | None = None


def program_source(seed: int, attempt: int) -> RandomSource:
    """The source of draw ``attempt`` for ``seed`` (text seeds hash the same in every process)."""
    return RandomSource(f"dotboxd-generator:{seed}:{attempt}")


def plan_program(program: GeneratedProgram) -> ExecutionPlan:
    """Validate ``program``'s module under its own policy and bindings (a refusal raises)."""
    return validate(
        program.module,
        Policy.from_json(program.policy_json),
        load_binding_manifest(program.bindings_json),
    )


def run_reference(program: GeneratedProgram) -> ReferenceOutcome:
    """Import, validate and run ``program`` on the reference backend, as the conformance runner does."""
    try:
        descriptors = load_binding_manifest(program.bindings_json)
        catalog = BindingRegistry(descriptors).build()
        returns = {d.id: d.return_type for d in descriptors}
        entries: list[Mapping[str, Any]] = list(program.bindings_json)
        catalog = catalog.with_invokers(fixture_invokers(entries, returns))
        module = import_module(json.dumps(to_wire(program.module)))
        policy = Policy.from_json(program.policy_json)
        plan = SandboxHost(catalog).prepare(module, policy)
    except DotBoxDError as refused:
        stage = "import" if refused.code.startswith(("E-JSON-", "E-IR-")) else "validate"
        rejected = {"stage": stage, "outcome": "rejected", "diagnostic": refused.code}
        return ReferenceOutcome(stage, rejected, refused.code)
    host = SandboxHost(catalog)
    result = host.execute(plan, program.entry, program.args_json, encoding="json")
    expect: dict[str, Any] = {"stage": "run", "outcome": "ok" if result.ok else "error"}
    if result.ok:
        expect["value"] = result.value_json()
    elif result.error is not None:
        expect["error"] = result.error.category
    expect["fuelUsed"] = result.usage.fuel_used
    expect["usage"] = {"loopIterations": result.usage.loop_iterations, "hostCalls": result.usage.host_calls}
    if program.bindings_json:
        expect["bindingCalls"] = {
            b["id"]: result.binding_calls.get(b["id"], 0) for b in program.bindings_json
        }
    code = result.error.code if result.error is not None else None
    return ReferenceOutcome("run", expect, code, result)


def pinnable(outcome: ReferenceOutcome) -> bool:
    """True when the outcome is a deterministic fact about an accepted program."""
    return outcome.stage == "run" and outcome.expect.get("error") not in UNPINNABLE


def case_name(seed: int, index: int) -> str:
    prefix = f"s{seed}" if seed >= 0 else f"sn{-seed}"
    return f"gen-{prefix}-{index:04d}"


def to_case(
    program: GeneratedProgram, outcome: ReferenceOutcome, name: str, seed: int, attempt: int
) -> dict[str, Any]:
    """The case object (shared case format) for ``program`` with ``outcome`` as its expectation."""
    summary = "ran to a value" if outcome.expect["outcome"] == "ok" else f"failed with {outcome.code}"
    case: dict[str, Any] = {
        "name": name,
        "description": (
            f"Regression case, not spec-derived: generated by the type-directed generator (seed {seed}, "
            f"draw {attempt}); its expectation is what the reference interpreter did (it {summary})."
        ),
        "tags": ["generated", "regression", *program.tags],
        "module": to_wire(program.module),
        "policy": program.policy_json,
    }
    if program.bindings_json:
        case["bindings"] = program.bindings_json
    case["entrypoint"] = program.entry
    case["args"] = program.args_json
    case["expect"] = outcome.expect
    return case


def generate_cases(
    count: int, seed: int, progress: Callable[[int, int], None] | None = None
) -> list[dict[str, Any]]:
    """``count`` new run cases for ``seed`` (deterministic: the same arguments give equal cases);
    ``progress(done, count)`` is called after each case is kept."""
    if count < 0:
        raise ValueError("count must be >= 0")
    cases: list[dict[str, Any]] = []
    attempt = 0
    while len(cases) < count:
        if attempt >= MAX_DRAWS_PER_CASE * count + 10:
            raise RuntimeError(f"only {len(cases)} of {count} generated programs were usable")
        program = build_program(program_source(seed, attempt))
        outcome = run_reference(program)
        if pinnable(outcome):
            cases.append(to_case(program, outcome, case_name(seed, len(cases)), seed, attempt))
            if progress is not None:
                progress(len(cases), count)
        attempt += 1
    return cases


def write_cases(
    out_dir: str | Path, count: int, seed: int, progress: Callable[[int, int], None] | None = None
) -> Path:
    """Write ``generate_cases(count, seed)`` as one case file (``{"cases": [...]}``, one compact case
    per line so diffs stay readable) in ``out_dir`` and return its path (``generated-seed-<seed>.json``)."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"generated-seed-{seed}.json"
    lines = [json.dumps(case, ensure_ascii=False) for case in generate_cases(count, seed, progress)]
    path.write_text('{"cases": [\n' + ",\n".join(lines) + "\n]}\n", encoding="utf-8")
    return path
