"""Running one program on both backends and comparing everything a host can observe.

``observe`` reduces an ``ExecutionResult`` to the fields that must be identical across backends:
the value (typed encoding), the error category, code and safe message, every ``ResourceUsage``
counter, the per-binding call counts, the queued host commands, and the audit events (kind,
success, binding, capability, effect, resource, error code, message, bytes, fields). Only what
cannot be the same is left out: the run id, timestamps, and the ``executionMode`` field of the
``RunSummary`` event, which names the backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dotboxd.conformance.stage_validate import validate_case
from dotboxd.core import ast
from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, GenOptions, OptimizedBackend

SHARED_CACHE = ArtifactCache(capacity=64)


def observe(result: ExecutionResult) -> dict[str, Any]:
    events = []
    for event in result.audit_events:
        fields = {k: v for k, v in event.fields.items() if k != "executionMode"}
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
                tuple(sorted(fields.items(), key=lambda kv: kv[0])),
            )
        )
    error = result.error
    return {
        "ok": result.ok,
        "value": result.value_json() if result.ok else None,
        "error": (error.category, error.code, error.safe_message) if error is not None else None,
        "usage": result.usage.to_json(),
        "bindingCalls": dict(sorted(result.binding_calls.items())),
        "commands": [(c.kind, repr(c.payload)) for c in result.commands],
        "commandsApplied": result.commands_applied,
        "audit": events,
    }


def differences(reference: Mapping[str, Any], optimized: Mapping[str, Any]) -> list[str]:
    return [
        f"{key}: reference={reference[key]!r} optimized={optimized[key]!r}"
        for key in reference
        if reference[key] != optimized[key]
    ]


def run_both(
    module: ast.Module,
    raw: Mapping[str, Any],
    entry: str,
    arg_vectors: Sequence[Sequence[Any]],
    options: GenOptions | None = None,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Run every input vector on both backends (fresh fixtures per backend, so stateful fixture
    behaviours such as ``sequence`` start over)."""
    backend = OptimizedBackend(cache=SHARED_CACHE, options=options)
    pairs = []
    for args in arg_vectors:
        observed = []
        for name in ("reference", "optimized"):
            validated = validate_case(module, raw, None)
            host = SandboxHost(bindings=validated.catalog, backends={"optimized": backend})
            result = host.execute(validated.plan, entry, list(args), backend=name, encoding="json")
            observed.append(observe(result))
        pairs.append((observed[0], observed[1]))
    return pairs


def assert_agree(module: ast.Module, raw: Mapping[str, Any], entry: str, vectors: Sequence[Sequence[Any]]) -> None:
    for index, (reference, optimized) in enumerate(run_both(module, raw, entry, vectors)):
        diff = differences(reference, optimized)
        assert not diff, f"input {index} {list(vectors[index])!r}:\n  " + "\n  ".join(diff)
