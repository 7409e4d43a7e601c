"""The run stage: execute a validated case on one backend and report value, error and usage.

The case's ``args`` are passed in the conformance typed encoding (decoded by the entrypoint's
declared types); the result is turned into the protocol's ``Actual``. A failed run reports its
SandboxError category as ``error`` and its stable code (an ``R-*`` code, or the ``E-*`` code of a
run-time gate such as a revoked capability) as ``diagnostic``.

``via`` chooses the host entry point: the synchronous ``execute``, or ``execute_async`` awaited on
a fresh event loop (``asyncio.run``), where async fixture bindings are awaited on that loop. Both
must meet the same expectations: a case has no way to tell which one ran it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final, Literal

from dotboxd.conformance.model import Actual
from dotboxd.conformance.stage_validate import Validated
from dotboxd.host import SandboxHost

Via = Literal["execute", "execute_async"]
VIA_SYNC: Final[Via] = "execute"
VIA_ASYNC: Final[Via] = "execute_async"
VIAS: tuple[Via, ...] = (VIA_SYNC, VIA_ASYNC)


def run_case(validated: Validated, raw: Mapping[str, Any], backend: str, via: Via = VIA_SYNC) -> Actual:
    """Execute the validated plan at the case's entrypoint with its args on ``backend``."""
    host = SandboxHost(bindings=validated.catalog)
    call = (
        validated.plan,
        str(raw.get("entrypoint", "main")),
        list(raw.get("args", [])),
    )
    if via == VIA_ASYNC:
        result = asyncio.run(host.execute_async(*call, backend=backend, encoding="json"))
    else:
        result = host.execute(*call, backend=backend, encoding="json")
    return result_actual(result)


def result_actual(result: Any) -> Actual:
    """The protocol's ``Actual`` of a host ``ExecutionResult`` (shared with ``dotboxd.testing``,
    which runs a host's own cases on its own ``SandboxHost``)."""
    usage = {key: value for key, value in result.usage.to_json().items() if isinstance(value, int)}
    calls = {str(key): int(value) for key, value in result.binding_calls.items()}
    if result.ok:
        return Actual(stage="run", outcome="ok", value=result.value_json(), usage=usage, binding_calls=calls)
    error = result.error
    diagnostic = error.diagnostic.code if error.diagnostic is not None else error.code
    pointer = error.diagnostic.pointer if error.diagnostic is not None else error.pointer or None
    span = error.diagnostic.span if error.diagnostic is not None else error.span
    return Actual(
        stage="run",
        outcome="error",
        error=error.category,
        diagnostic=diagnostic,
        pointer=pointer,
        line=span.line if span is not None else None,
        column=span.column if span is not None else None,
        usage=usage,
        binding_calls=calls,
        message=error.safe_message,
    )
