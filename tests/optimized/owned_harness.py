"""What the owned-form tests (lists, maps, texts) share: a kernel's generated source, the check
that a kernel the proof refuses keeps the exact stubs, and a run cancelled part way through an
owned loop (their tampered-AST harness is ``tampering.Tampering``)."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.meter import CancelToken
from dotboxd.runtime.optimized import compile_plan

from .differential import Observation, assert_agree, backend, run_plan_both
from .kernels import policy, prepare


def source_of(text: str) -> str:
    """The generated Python source of kernel ``text``."""
    return compile_plan(prepare(text), keep_module=True).source()


def assert_kept_exact(
    text: str, name: str, *, take: str, stub: str, parameter: Any, encoding: str = "json"
) -> list[tuple[Observation, Observation]]:
    """Kernel ``text`` (case ``name`` of a proof's refusals) never takes its local (``take``) and
    keeps the exact ``stub``, and both backends agree on ``main(40)`` and ``main(3000)`` (on
    ``main(parameter, 40)`` for the case ``"a parameter"``). Returns the run pairs."""
    source = source_of(text)
    assert take not in source and stub in source, source
    args = [[parameter, 40]] if name == "a parameter" else [[40], [3000]]
    pairs = run_plan_both(prepare(text), "main", args, encoding=encoding)
    assert_agree(pairs, name)
    return pairs


CHUNK_ROOM = {
    "max_fuel": 10**12,
    "max_allocated_bytes": 10**12,
    "max_total_collection_elements": 10**12,
    "max_loop_iterations": 10**7,
}
"""Limits no owned loop of the past-a-chunk sweeps reaches, so only the swept limit refuses."""

ROOMY = {
    "max_fuel": 2**62,
    "max_loop_iterations": 10**9,
    "max_total_collection_elements": 2**62,
    "max_allocated_bytes": 2**62,
    "max_wall_time_ms": 600_000,
}
"""Limits no owned loop of the cancellation tests reaches before it is cancelled."""


def cancelled_run(text: str, n: int, **limits: int) -> ExecutionResult:
    """``main(n)`` of ``text`` on the optimized backend under ``ROOMY`` (and ``limits``), cancelled
    50 ms after it starts."""
    plan = dataclasses.replace(prepare(text), policy=policy(**{**ROOMY, **limits}))
    host = SandboxHost(backends={"optimized": backend()})
    token = CancelToken()
    timer = threading.Timer(0.05, token.cancel)
    timer.start()
    try:
        return host.execute(plan, "main", [n], backend="optimized", cancel=token)
    finally:
        timer.cancel()
