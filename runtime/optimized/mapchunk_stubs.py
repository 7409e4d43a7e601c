"""The run-time half of pre-checked owned-map chunks (issue 16, ``mapchunk``): the reservation
test and the exits' fail-closed stub."""

from __future__ import annotations

from typing import Any, NoReturn

from dotboxd.core import costs
from dotboxd.runtime.errors import SandboxError


def chunk_fits(
    f: int,
    n: int,
    size: int,
    units: int,
    room: int,
    most: int,
    per_size: int,
    fixed: int,
    walks: int,
    sets: int,
) -> bool:
    """``_p_mcfit``: whether ``n`` iterations of a body bounded by ``(per_size, fixed, walks, sets)``
    fit, whatever path each takes - the fuel left ``f``, the entry limit ``most`` for the largest
    count an update can leave, and the units room ``room`` for the units they can add to
    ``units``. Then no charge and no limit check inside the chunk can refuse (``core.costs``'s
    bounds), and the chunk may run without a test. ``n`` is at least 1 (an empty reservation is
    the exact path's business)."""
    if n < 1:
        return False
    return (
        size + sets * n <= most
        and units + costs.owned_map_chunk_units(n, size, sets) <= room
        and costs.owned_map_chunk_fuel(n, size, per_size, fixed, walks, sets) <= f
    )


def overshot(state: Any) -> NoReturn:
    """``_s_mcover``: a pre-checked chunk spent more than its reservation allowed - which the bound
    rules out, so the generated code was wrong. Fail closed (the run's usage is not settled: the
    host state stays as before the run)."""
    raise SandboxError("R-HOST-INTERNAL", "a pre-checked map chunk overshot its reservation")


__all__ = ["chunk_fits", "overshot"]
