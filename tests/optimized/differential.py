"""Running one program on both backends and comparing everything a host can observe.

``observe`` reduces an ``ExecutionResult`` to the fields that must be identical across backends:
the value (typed encoding), the error category, code, safe message and location (pointer and
``line:column``), every ``ResourceUsage``
counter, the per-binding call counts, the queued host commands, and the audit events (kind,
success, sequence, binding, capability, effect, resource, error code, message, bytes, fields).
Only what cannot be the same is left out: the run id, timestamps, and the ``executionMode`` field
of the ``RunSummary`` event, which names the backend.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core import ast
from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.fixtures import FixtureInvoker
from dotboxd.runtime.meter import CancelToken
from dotboxd.runtime.optimized import ArtifactCache, GenOptions, OptimizedBackend
from dotboxd.validator.plan import ExecutionPlan

from .kernels import policy

SHARED_CACHE = ArtifactCache(capacity=64)

Observation = dict[str, Any]


def observe(result: ExecutionResult) -> Observation:
    events = []
    for event in result.audit_events:
        fields = tuple(sorted((k, repr(v)) for k, v in event.fields.items() if k != "executionMode"))
        events.append(
            (
                event.kind,
                event.success,
                event.sequence,
                event.binding_id,
                event.capability_id,
                event.effect,
                event.resource_id,
                event.error_code,
                event.message,
                event.bytes,
                fields,
            )
        )
    error = result.error
    return {
        "ok": result.ok,
        "value": result.value_json() if result.ok else None,
        "error": (error.category, error.code, error.safe_message) if error is not None else None,
        "location": (error.pointer, str(error.span)) if error is not None else None,
        "usage": result.usage.to_json(),
        "bindingCalls": dict(sorted(result.binding_calls.items())),
        "commands": [(c.kind, repr(c.payload)) for c in result.commands],
        "commandsApplied": result.commands_applied,
        "audit": events,
    }


TIMING_FIELDS = ("usage", "audit")
"""A run stopped by its wall-clock deadline stops after a machine-dependent amount of work (on
either backend, and differently on two runs of the same backend), so its counters are not compared;
everything else still is."""


def differences(reference: Mapping[str, Any], optimized: Mapping[str, Any]) -> list[str]:
    timed_out = reference["error"] is not None and reference["error"][0] == "Timeout"
    return [
        f"{key}: reference={reference[key]!r}\n    optimized={optimized[key]!r}"
        for key in reference
        if reference[key] != optimized[key] and not (timed_out and key in TIMING_FIELDS)
    ]


def reset_fixtures(plan: ExecutionPlan) -> None:
    """Fixture bindings count their calls (``sequence`` behaviours depend on it): start over."""
    for descriptor in plan.bindings.values():
        if isinstance(descriptor.invoke, FixtureInvoker):
            descriptor.invoke.calls = 0


def backend(options: GenOptions | None = None) -> OptimizedBackend:
    return OptimizedBackend(cache=SHARED_CACHE, options=options)


def run_plan_both(
    plan: ExecutionPlan,
    entry: str,
    vectors: Sequence[Sequence[Any]],
    encoding: str = "json",
    options: GenOptions | None = None,
) -> list[tuple[Observation, Observation]]:
    """Every input vector on both backends, one plan (fixtures reset before each run)."""
    host = SandboxHost(bindings=plan.catalog, backends={"optimized": backend(options)})
    pairs = []
    for args in vectors:
        observed = []
        for name in ("reference", "optimized"):
            reset_fixtures(plan)
            result = host.execute(plan, entry, list(args), backend=name, encoding=encoding)  # type: ignore[arg-type]
            observed.append(observe(result))
        pairs.append((observed[0], observed[1]))
    return pairs


def cancelled_usage(plan: ExecutionPlan, args: Sequence[Any], after: float = 0.05) -> dict[str, Any]:
    """The usage of a long optimized run of ``main`` cancelled ``after`` seconds in: it must end
    R-CANCELLED (the caller then checks that what the run did so far is exactly what it was charged)."""
    host = SandboxHost(backends={"optimized": backend()})
    token = CancelToken()
    timer = threading.Timer(after, token.cancel)
    timer.start()
    try:
        result = host.execute(plan, "main", list(args), backend="optimized", cancel=token)
    finally:
        timer.cancel()
    assert result.error is not None and result.error.code == "R-CANCELLED"
    usage: dict[str, Any] = result.usage.to_json()
    return usage


def run_case_both(
    module: ast.Module, raw: Mapping[str, Any], entry: str, args: Sequence[Any]
) -> tuple[Observation, Observation]:
    """A conformance case on both backends, each with its own fresh root and fixtures."""
    observed = []
    for name in ("reference", "optimized"):
        with case_root(raw) as root:
            validated = validate_case(module, raw, root)
            host = SandboxHost(bindings=validated.catalog, backends={"optimized": backend()})
            result = host.execute(validated.plan, entry, list(args), backend=name, encoding="json")
            observation = observe(result)
            if root is not None:
                plan = validated.plan
                observation = _without_root(
                    observation,
                    {root: "$ROOT", plan.policy_hash: "$POLICY_HASH", plan.plan_hash: "$PLAN_HASH"},
                )
            observed.append(observation)
    return observed[0], observed[1]


def _without_root(observation: Observation, replacements: Mapping[str, str]) -> Observation:
    """Each run has its own temporary root; its path may appear in audit text, and a grant that
    names it makes the policy and plan hashes (in the ``RunSummary``) differ with it too."""
    replaced: Observation = eval_replace(observation, replacements)
    return replaced


def eval_replace(value: Any, replacements: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in replacements.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: eval_replace(v, replacements) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(eval_replace(v, replacements) for v in value)
    return value


def sweep_limit(
    base: ExecutionPlan,
    args: Sequence[Any],
    limit: str,
    values: Iterable[int],
    make_policy: Callable[..., Any] | None = None,
    **room: int,
) -> None:
    """Run ``main(*args)`` of ``base`` with policy limit ``limit`` at each of ``values`` on both
    backends (the policy: ``make_policy(limit=value)``, else the default policy with the other
    limits at ``room``); every observable must agree, and the sweep must cross the refusal point
    (some runs refused, some not)."""
    host = SandboxHost(backends={"optimized": backend()})
    refused = total = 0
    for value in values:
        limits = {limit: value}
        chosen = make_policy(**limits) if make_policy is not None else policy(**{**room, **limits})
        plan = dataclasses.replace(base, policy=chosen)
        reference = observe(host.execute(plan, "main", list(args)))
        optimized = observe(host.execute(plan, "main", list(args), backend="optimized"))
        assert reference == optimized, (limit, value, differences(reference, optimized))
        refused += reference["error"] is not None
        total += 1
    assert 0 < refused < total, "the sweep must cross the refusal point"


def assert_agree(pairs: Sequence[tuple[Observation, Observation]], what: str = "") -> None:
    for index, (reference, optimized) in enumerate(pairs):
        diff = differences(reference, optimized)
        assert not diff, f"{what} input {index}:\n  " + "\n  ".join(diff)


def assert_agree_at_every_fuel_budget(
    base: ExecutionPlan, entry: str, args: list[Any], below: int = 40
) -> None:
    """Every fuel budget from ``below`` short of what the run needs to one past it: both backends stop
    at the same charge (quota or fault, whichever the reference meets first) with the same usage."""
    host = SandboxHost(backends={"optimized": backend()})
    needed = host.execute(base, entry, args).usage.fuel_used
    for fuel in range(max(0, needed - below), needed + 2):
        plan = dataclasses.replace(base, policy=policy(max_fuel=fuel))
        reference = observe(host.execute(plan, entry, args))
        optimized = observe(host.execute(plan, entry, args, backend="optimized"))
        assert reference == optimized, fuel
