"""Fail-closed checks of what an owned list's or map's settlement charges (issue 16, chunkfuzz).

The settlements (``stubs.settle_owned``, ``owned_map_stubs.settle_owned_map``) charge the meter
for adds and updates the generated code made without it, trusting that the code's inline tests
kept each one inside its room; the verifier confines the buffers, dicts and cells (rules 10, 14)
but does not prove those tests. So each settlement checks what it can see itself.

Owned lists: a tampered module that dropped an add's room test grew the buffer past
``maxListLength``, ``maxTotalCollectionElements`` and ``maxAllocatedBytes``; the settlement charged
it (from the buffer, exactly) and the run succeeded with its usage past its limits. Now a
settlement that carries the meter or the list past a limit fails the run closed.

Owned maps: the cell ``u<n>`` is the only record of what an owned map's updates allocated, and the
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


def _past_limits(meter: Any, alloc: int, elements: int, text_bytes: int) -> bool:
    """Whether charging ``alloc`` bytes, ``elements`` collection elements and ``text_bytes`` string
    bytes would carry the meter past a limit (checked before anything is charged, so a refused
    run's usage stays within its limits)."""
    limits = meter.limits
    return bool(
        meter.collection_elements + elements > limits.max_total_collection_elements
        or meter.allocated_bytes + alloc > limits.max_allocated_bytes
        or meter.string_bytes + text_bytes > limits.max_total_string_bytes
    )


def check_limits(meter: Any, record: Any, alloc: int, units: int, key_bytes: int) -> None:
    """Refuse a map settlement that would carry the meter or the dict past a limit the inline
    checks hold them to."""
    too_many = len(record.table) > max(meter.limits.max_map_entries, len(record.value))
    if too_many or _past_limits(meter, alloc, units, key_bytes):
        raise _refused("settles past a limit")


def check_list_settlement(meter: Any, size: int, alloc: int, elements: int) -> None:
    """Refuse a list settlement (of adds that grew the buffer to ``size`` items) that would carry
    the meter or the list past a limit the adds' room tests hold them to."""
    if size > meter.limits.max_list_length or _past_limits(meter, alloc, elements, 0):
        raise SandboxError("R-HOST-INTERNAL", "an owned list's adds settle past a limit")


def _refused(why: str) -> SandboxError:
    return SandboxError("R-HOST-INTERNAL", f"an owned map's units cell {why}")


__all__ = ["check_cell", "check_limits", "check_list_settlement", "least_units"]
