"""What the owned-collection tests share: a run cancelled part way through an owned loop, and the
generated module of a kernel rewritten as tampered source for the verifier to refuse."""

from __future__ import annotations

import ast
import copy
import dataclasses
import threading

from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.meter import CancelToken
from dotboxd.runtime.optimized.artifact import ArtifactKey, bind
from dotboxd.runtime.optimized.codegen import GenOptions, generate

from .differential import backend
from .kernels import policy, prepare

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


class Tampering:
    """The generated module of one kernel, bound as generated or with one piece of its source
    replaced (the verifier must refuse the replacement)."""

    def __init__(self, text: str) -> None:
        self.plan = prepare(text)
        self.base = generate(self.plan)
        self.key = ArtifactKey.for_plan(self.plan, GenOptions())

    def source(self) -> str:
        return ast.unparse(self.base.module)

    def bind(self, rewrite: str | None = None, replacement: str = "") -> None:
        module = copy.deepcopy(self.base.module)
        if rewrite is not None:
            source = self.source()
            assert rewrite in source, rewrite
            module = ast.parse(source.replace(rewrite, replacement, 1))
        bind(self.plan, self.key, module, copy.deepcopy(self.base.tables), self.base.ir_nodes)
