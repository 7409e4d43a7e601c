"""Fail-closed checks of an owned map's units cell at each settlement (issue 16, chunkfuzz).

Why: the cell ``u<n>`` is the only record of what an owned map's updates allocated, and the
generated code writes it (``u[0] = units``); the verifier confines the cell (rule 14) but does not
prove what is written into it. A tampered module that wrote a smaller count - or a count that goes
back after a settlement, which the settlement used to turn into a *negative* charge - lowered the
meter's allocation and collection elements, so a later take computed a room past the policy's
limits: a run could hold more map entries than ``maxTotalCollectionElements`` and
``maxAllocatedBytes`` allow and still succeed (``tests/optimized/test_chunk_tampering.py``).

What the dict itself proves, whatever the code wrote: sets never remove a key, and an update that
leaves ``c`` entries counts ``c`` units, so growing the taken map from ``s0`` to ``s`` entries
counted at least ``s0 + 1 + ... + s`` units. The cell never goes back, and a settlement never
carries the meter past a limit (the inline checks keep every honest update inside its room). A
cell that breaks any of these fails the run closed (``R-HOST-INTERNAL``; the host state stays as
before the run).
"""

from __future__ import annotations

from typing import Any

from dotboxd.runtime.errors import SandboxError


def least_units(taken: int, now: int) -> int:
    """The fewest units the updates that grew a map from ``taken`` to ``now`` entries counted."""
    return (now * (now + 1) - taken * (taken + 1)) // 2 if now > taken else 0


def check_cell(record: Any, used: Any, key_bytes: Any) -> None:
    """Refuse a cell the dict and the last settlement contradict (before anything is charged)."""
    if type(used) is not int or type(key_bytes) is not int:
        raise _refused("holds a count that is not an int")
    if used < record.settled or key_bytes < record.settled_bytes:
        raise _refused("went back")
    if used < least_units(len(record.value), len(record.table)):
        raise _refused("counts fewer units than the map grew by")


def check_limits(meter: Any, record: Any) -> None:
    """Refuse a settlement that carried the meter past a limit the inline checks hold it to."""
    limits = meter.limits
    if (
        meter.collection_elements > limits.max_total_collection_elements
        or meter.allocated_bytes > limits.max_allocated_bytes
        or meter.string_bytes > limits.max_total_string_bytes
        or len(record.table) > max(limits.max_map_entries, len(record.value))
    ):
        raise _refused("settled past a limit")


def _refused(why: str) -> SandboxError:
    return SandboxError("R-HOST-INTERNAL", f"an owned map's units cell {why}")


__all__ = ["check_cell", "check_limits", "least_units"]
