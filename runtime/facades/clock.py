"""``time.nowUnixMillis``: the wall clock, or the policy's logical time in deterministic mode.

A deterministic policy fixes the answer to ``logicalNowUnixMillis`` for every call of every run
(the audit clock of such a run reads the same instant), so a replay sees exactly what the original
run saw. The validator refuses a deterministic policy without a logical time for a module that reads
the clock (``E-POLICY-DETERMINISM``); the facade still fails closed if one reaches it.
"""

from __future__ import annotations

import time

from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.facades.run_view import determinism

CAPABILITY = "time.now"


def now_unix_millis(ctx: BindingContext) -> int:
    """Milliseconds since the Unix epoch (UTC): logical under a deterministic policy, else wall time."""
    settings = determinism(ctx)
    if settings.deterministic:
        if settings.logical_now_unix_ms is None:
            raise BindingError("PermissionDenied", "the deterministic policy has no logical time")
        return settings.logical_now_unix_ms
    return time.time_ns() // 1_000_000
