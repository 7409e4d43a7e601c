"""The fuel a fast lane hands an entry's compiled function: a small count where that is exact.

Why: the generated code counts fuel down (``f -= 5``) from what the run may still spend - the
policy's whole budget, 100,000 by default. CPython keeps one object per integer from -5 to 256 and
allocates every other result of ``f - c``, so each charge of a predicate costs an allocation and a
free (~250 instructions, cachegrind). A run that can never spend more than ``bound`` fuel and never
hands its count to anything but the fuel-exhaustion stub can count down from ``bound`` instead: the
exhaustion checks (``f < 0``) then cannot fire - as they could not from the full budget, since the
budget is at least ``bound`` - and the fuel used is ``bound - f`` either way.

When that holds (all of it, else the lane keeps the full budget):

* the function is loop-free and fast (``facts.function_facts``), so ``max_cost`` bounds the fuel of
  every path through it, inlined callees included;
* its code names no global or attribute but ``_s_fx`` (``co_names``): no call to another generated
  function, no stub that would read the count (a fault site syncs the meter from it), no run-state
  attribute;
* ``max_cost`` is at most 256 (a cached integer) and at most the budget.

Then nothing but ``_s_fx`` can build the run's context, and ``_s_fx`` runs only when the count
goes below zero, which a true worst case rules out. So a lane run that started small and built its
context shows a worst case that was short: the lane fails it closed (``SHORT_START``,
``R-HOST-INTERNAL``) rather than report the fuel exhaustion the short count would claim. The lane
tests compare every corpus case with the ordinary path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dotboxd.runtime.errors import ErrorInfo, SandboxError
from dotboxd.validator.plan import ExecutionPlan

from .facts import function_facts

SMALL_INT_MAX = 256
"""The largest integer CPython keeps one shared object of (``_PY_NSMALLPOSINTS - 1``)."""

SHORT_START: Final[ErrorInfo] = SandboxError("R-HOST-INTERNAL", "fuel start below the worst case").info()
"""The error of a lane run that started from a count short of its real worst case (never expected)."""

_EXHAUST_ONLY = frozenset({"_s_fx"})
"""The only name a function counting from a small start may use: the fuel-exhaustion stub."""


def start_fuel(plan: ExecutionPlan, fid: str, function: Callable[..., Any], max_fuel: int) -> int:
    """The fuel to start ``function`` (the compiled ``fid`` of ``plan``) with in a run whose budget
    is ``max_fuel``: its worst case when that is exact (module docstring), else ``max_fuel``."""
    if max_fuel <= SMALL_INT_MAX:
        return max_fuel  # already a cached integer: nothing to gain
    code = getattr(function, "__code__", None)
    if code is None or not _EXHAUST_ONLY.issuperset(code.co_names):
        return max_fuel
    facts = function_facts(plan, fid)
    if facts.has_loops or facts.size == 0 or facts.max_cost > SMALL_INT_MAX:
        return max_fuel  # size 0: not fast, so max_cost bounds nothing
    return facts.max_cost
