"""The run-time half of owned maps: take a map into a dict, settle its updates, hand it back.

A bulk loop whose map work is ``m = map.set(m, k, v)``, ``map.get``, ``map.containsKey`` and
``map.count`` on a map the code generator proved owned (``owned_maps.owned_map``) keeps the map as a
plain ``dict`` of raw keys to values (``take_owned_map``, ``_s_mown`` in generated code). The
generated code (``codegen.owned_map_op``) checks every charge of each operation inline and only then
reads or updates the dict; it counts the units of the updates in a one-item list (the *cell*), and
the updates' allocation and collection elements are settled from that count here
(``settle_owned_map``) whenever anything syncs the meter (every chunk reservation and every
failure), and when the value is materialized after the loop (``owned_map_value``, ``_s_mmat``).

Why a dict and not the HAMT's own mutation API (``immutables.Map.mutate()``): measured on the
``map_count`` loop shape, a dict update is ~47 ns against ~156 ns for a ``MapMutation`` keyed by
key tokens (the HAMT's keys must be ``(type, key)`` tuples, built per operation), and the dict's
``in``, ``[]`` and ``len`` compile to specialized bytecode. The price is one O(n) copy when the loop
starts and one when it ends, so a loop inside another loop is not owned (``owned_maps``).

The charges are spec/costs.md's, unchanged. For a flat map of ``s`` entries and ``c`` entries after
the update (``c = s + 1`` when the key is new, else ``s``; always >= 1):

* ``map.set``: fuel ``copy_fuel(s, 1) = 3 + s``, allocation ``map_set_alloc = 32 c``, then the new
  value's shape ``flat_map_shape(c)``: walk fuel ``(1 + 2 c) // 64``, ``c`` map entries, depth 1,
  ``c`` collection elements. So allocation is 32 x elements, and one count - the *units*, the sum
  of ``c`` over the updates - settles both (``MAP_UNIT_ALLOC``).
* ``map.get`` / ``map.containsKey`` / ``map.count``: fuel ``read_fuel(s) = 2 + s``.
* with text keys, ``map.set`` also charges the new map's key texts (``text_keyed_map_shape``): their
  bytes ``B`` as allocation and as total string bytes, their longest against the text length
  limit. The cell's second item counts the sum of ``B`` over the updates (``take_text_keyed_map``
  gives the rooms these need).

The room (``owned_map_room``): the updates fit allocation and collection elements while their units
stay within ``min(elements left, allocation left // 32)``, and each fits the entry and depth limits
while ``c <= maxMapEntries`` (and ``maxCollectionDepth >= 1``). The inline check is exact, so an
operation it declines always fails in the exact stub (``owned_map_exact``), which settles,
materializes and runs the built-in's exact stub: the failure, its charges and the usage are the
reference's. What the inline forms skip is the meter's bookkeeping of a successful operation - its
cancellation check and deadline cadence - as inline ``list.get`` does: the chunk's reservation
checks both, and each form counts in the chunk's bounded work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dotboxd.core import costs
from dotboxd.core.values import MapValue, Value, flat_map_over, flat_map_shape
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import Meter

from .settle_checks import check_cell, check_limits

MAP_UNIT_ALLOC: Final = costs.MAP_ENTRY_ALLOC
"""Bytes allocated per unit of an update (``map_set_alloc(s, new) == 32 * c``, ``c >= 1``)."""
assert all(
    costs.map_set_alloc(s, bool(new)) == MAP_UNIT_ALLOC * (s + new)
    and flat_map_shape(s + new).elements == s + new
    for s in (*range(200), 4095, 4096, 10**6)
    for new in (0, 1)
    if s + new >= 1
), "owned maps' unit accounting no longer matches core.costs"

EXACT_OPS: Final = ("map.containsKey", "map.get", "map.set", "map.count")
"""The operations generated code names by index in ``_s_mox(R, f, lref, site, m, op, ...)``."""
EXACT_OPERANDS: Final = (1, 1, 2, 0)
"""Operands after the map that each of ``EXACT_OPS`` takes."""


class OwnedMap:
    """A map a bulk loop holds as a dict: the value it was taken from, the dict, the cell of
    units (and, with text keys, key bytes) the generated code has counted, and what of them is
    already settled."""

    __slots__ = ("cell", "settled", "settled_bytes", "table", "value")

    def __init__(self, value: MapValue, table: dict[Value, Value], cell: list[int]) -> None:
        self.value = value
        self.table = table
        self.cell = cell
        self.settled = 0
        self.settled_bytes = 0


def _internal(message: str) -> SandboxError:
    return SandboxError("R-HOST-INTERNAL", message)


def settle_owned_map(state: Any) -> None:
    """Charge the allocation and collection elements of the updates counted since the last
    settlement (their fuel is already out of the generated code's ``f``)."""
    record: OwnedMap = state.owned_map
    cell = record.cell
    used = cell[0]
    check_cell(record, used, cell[1])  # the generated code wrote the cell: fail closed on a lie
    units = used - record.settled
    if units:
        key_bytes = cell[1] - record.settled_bytes  # with text keys: the new maps' key text bytes
        meter = state.meter
        check_limits(meter, record, MAP_UNIT_ALLOC * units + key_bytes, units, key_bytes)
        meter.settle_owned(MAP_UNIT_ALLOC * units + key_bytes, units, 0)
        meter.string_bytes += key_bytes
        record.settled = used
        record.settled_bytes = cell[1]


def owned_map_room(meter: Meter) -> tuple[int, int]:
    """(units the updates may count in all, the largest entry count one update may reach): every
    update within both fits every limit a ``map.set`` of scalars onto a flat map checks, given
    that nothing else charges those counters until the map is materialized."""
    limits = meter.limits
    units = min(
        limits.max_total_collection_elements - meter.collection_elements,
        (limits.max_allocated_bytes - meter.allocated_bytes) // MAP_UNIT_ALLOC,
    )
    most = limits.max_map_entries if limits.max_collection_depth >= 1 else -1
    return units, most


def take_owned_map(state: Any, value: MapValue) -> tuple[dict[Value, Value], list[int], int, int]:
    """Before a bulk loop that updates an owned map: (a new dict of its entries, the units cell,
    ``owned_map_room``). The dict is a copy, so nothing done to it can reach ``value``."""
    if state.owned_map is not None:
        settle_owned_map(state)
    table: dict[Value, Value] = dict(value.entries.values())
    cell = [0, 0]
    state.owned_map = OwnedMap(value, table, cell)
    units, most = owned_map_room(state.meter)
    return table, cell, units, most


def take_text_keyed_map(
    state: Any, value: MapValue
) -> tuple[dict[Value, Value], list[int], int, int, int, int, int, int, int]:
    """``take_owned_map`` for a map with text keys (``_s_mtown``), whose updates also charge the
    new map's key texts (its shape's string bytes: as allocation and total string bytes; its
    longest key against the text length limit). Also gives: the allocation room (bytes), the
    string-bytes room, the longest text allowed, and the map's key bytes and longest key now."""
    table, cell, _, most = take_owned_map(state, value)
    meter = state.meter
    limits = meter.limits
    shape = value.shape
    return (
        table,
        cell,
        limits.max_total_collection_elements - meter.collection_elements,
        most,
        limits.max_allocated_bytes - meter.allocated_bytes,
        limits.max_total_string_bytes - meter.string_bytes,
        limits.max_string_length,
        shape.string_bytes,
        shape.max_string,
    )


def owned_map_value(state: Any, table: dict[Value, Value]) -> MapValue:
    """After the loop: settle the updates and hand the map out as an immutable value - a copy of
    the dict as its entries (``values.flat_map_over``: linear, no trie built until a later update
    of that version), or the value taken, when no update ran."""
    record: OwnedMap | None = state.owned_map
    if record is None or record.table is not table:
        raise _internal("owned map was not taken")
    settle_owned_map(state)
    state.owned_map = None
    if record.cell[0] == 0:
        return record.value
    try:
        return flat_map_over(table)
    except TypeError:
        raise _internal("owned map holds a composite") from None


def owned_map_exact(
    exact_stub: Callable[[str], Callable[..., tuple[Value, int]]],
) -> Callable[..., None]:
    """The exact path of an owned-map operation whose inline check declined (``_s_mox``): settle,
    materialize, and run the built-in's exact stub (``exact_stub(name)``), which fails exactly
    where the reference fails."""
    stubs = tuple(exact_stub(name) for name in EXACT_OPS)

    def stub(
        state: Any, f: int, lref: int, site: int, table: dict[Value, Value], op: int, *args: Value
    ) -> None:
        value = owned_map_value(state, table)
        stubs[op](state, f, lref, site, value, *args)
        raise _internal("owned map check disagreed with the meter")

    return stub


__all__ = [
    "EXACT_OPERANDS",
    "EXACT_OPS",
    "OwnedMap",
    "owned_map_exact",
    "owned_map_room",
    "owned_map_value",
    "settle_owned_map",
    "take_owned_map",
    "take_text_keyed_map",
]
