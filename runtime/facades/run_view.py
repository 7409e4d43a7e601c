"""The two run facts the clock and random facades need, as one small typed view.

Whether the run is deterministic (with its logical time and seed) and how many times the binding
has been called in this run so far come from ``BindingContext.deterministic`` and
``BindingContext.calls_so_far``, which any binding may read; this module names them for the
facades.
"""

from __future__ import annotations

from dataclasses import dataclass

from dotboxd.runtime.context import BindingContext


@dataclass(frozen=True, slots=True)
class Determinism:
    """The policy's determinism settings (``Policy.deterministic`` and its two values)."""

    deterministic: bool
    logical_now_unix_ms: int | None
    random_seed: int | None


def determinism(ctx: BindingContext) -> Determinism:
    """The determinism settings of the policy the run's plan was validated against."""
    return Determinism(*ctx.deterministic)


def call_ordinal(ctx: BindingContext) -> int:
    """Which call of this binding in this run the current one is (1 for the first). The runtime
    counts the call (``maxCallsPerRun``) before it invokes the binding, on every backend, so the
    count is the run's own state: nothing is shared with another run."""
    return ctx.calls_so_far
