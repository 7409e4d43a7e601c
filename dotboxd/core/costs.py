"""THE cost table: every fuel and allocation charge of the language, as data and small pure functions.

Why one module: the reference interpreter, the optimized backend and the static prover must agree
on what each operation costs, or a PROVED bound could be wrong and the backends would disagree on
``fuelUsed``. Nothing here touches a meter; callers (backends) charge what these functions return,
and the prover builds symbolic bounds from the same numbers. ``spec/costs.md`` is the normative
prose of this table; a test keeps the two in step.

Units: *fuel* is an abstract step count; *allocation* is in estimated bytes (DotBoxD's
estimates, never ``sys.getsizeof``); *string bytes* are 2 per UTF-16 code unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from dotboxd.core.builtins import BUILTIN_COSTS as BUILTIN_COSTS  # re-exported: read from the records
from dotboxd.core.builtins import COLLECTION_INTRINSICS as COLLECTION_INTRINSICS
from dotboxd.core.builtins import BuiltinCost as BuiltinCost

COST_TABLE_VERSION = "dotboxd-costs-1"
"""The version of this table. Any change to a charge, a limit default or a ceiling changes
``fuelUsed`` or a verdict, so it bumps this version (CHANGELOG.md, versioning policy); the version is
part of the plan hash, so a plan (and a compiled artifact keyed by it) made under one table is never
taken for a plan of another."""

# --- structural charges -----------------------------------------------------------------------

STATEMENT_FUEL = 1
"""Every executed statement, charged before it runs."""

EXPRESSION_FUEL = 1
"""Every evaluated expression node (literal, var, unary, binary, call), charged before its operands."""

LOOP_ITERATION_FUEL = 5
"""Every loop iteration (``while`` after a true condition, ``forRange`` before each body run),
together with one unit of the loop-iteration budget."""

LOOP_ITERATION_COUNT = 1

CALL_DEPTH_STEP = 1
"""A module-function call enters one frame deeper; the entrypoint's frame is depth 1."""

MAX_CALL_DEPTH_CEILING = 512
"""The largest ``maxCallDepth`` a policy may set (E-POLICY-LIMIT above it). Why a ceiling: both
backends spend Python stack on kernel calls (the optimized one a frame per call), and a run is
given a fixed amount of it whatever the host's own stack depth (``runtime/stack.py``); a ceiling
keeps the deepest allowed chain inside that amount, so both backends reach the same verdict."""

# --- value shapes (charged for every newly created value) -------------------------------------

STRING_BYTES_PER_UNIT = 2
"""Text costs 2 bytes per UTF-16 code unit, both as string bytes and as allocation."""

SHAPE_WALK_NODES_PER_FUEL = 64
"""A new value of N nodes costs N // 64 fuel for checking its shape."""


def string_bytes(length16: int) -> int:
    """String bytes (and allocation) of a text of ``length16`` UTF-16 units."""
    return STRING_BYTES_PER_UNIT * length16


def shape_walk_fuel(nodes: int) -> int:
    """Fuel for the shape check of a new value with ``nodes`` value nodes."""
    return nodes // SHAPE_WALK_NODES_PER_FUEL


# --- collection intrinsics (spec/costs.md section 4) -----------------------------------------------


@dataclass(frozen=True, slots=True)
class OpCost:
    """Fuel and estimated allocation of one operation (before the new value's shape charge)."""

    fuel: int
    alloc: int = 0


COLLECTION_BASE_FUEL = 2
LIST_EMPTY_ALLOC = 8
MAP_EMPTY_ALLOC = 16
LIST_ELEMENT_ALLOC = 16
RECORD_FIELD_ALLOC = 16
MAP_ENTRY_ALLOC = 32


LIST_EMPTY_FUEL = COLLECTION_BASE_FUEL
MAP_EMPTY_FUEL = COLLECTION_BASE_FUEL

# The amounts below are plain ints (fixed costs are the constants above): the intrinsics charge them
# directly on every call without building a record. The ``OpCost`` functions further down are the
# same numbers as one record each, for the prover and for readers.


def read_fuel(size: int) -> int:
    """Reads (``list.count``, ``list.get``, ``map.containsKey``, ``map.get``, ``record.get``): 2 + size."""
    return COLLECTION_BASE_FUEL + size if size > 0 else COLLECTION_BASE_FUEL


def copy_fuel(source_size: int, added: int = 0) -> int:
    """Copies (``list.of``, ``list.add``, ``map.set``, ``map.remove``, ``record.new``): 2 + size + added."""
    fuel = COLLECTION_BASE_FUEL
    if source_size > 0:
        fuel += source_size
    if added > 0:
        fuel += added
    return fuel


def list_slice(count: int) -> OpCost:
    """``list.slice`` of ``count`` elements (extension): fuel 2 + count, allocation 16 count. Only the
    base 2 is charged before the range check; a refused slice costs nothing more."""
    return OpCost(copy_fuel(count), list_of_alloc(count))


def sort_fuel(n: int) -> int:
    """Comparisons of sorting ``n`` items: ``n x ceil(log2 n)`` (0 for fewer than two)."""
    return n * (n - 1).bit_length() if n > 1 else 0


def map_keys(size: int, key_units: int) -> OpCost:
    """``map.keys`` of a map of ``size`` entries (extension): fuel 2 + size for the copy, plus
    ``sort_fuel(size)`` for putting the keys in canonical order, plus one per UTF-16 unit of key text
    (a text key is compared by its code units); allocation 16 size, as for a list of that length."""
    return OpCost(copy_fuel(size) + sort_fuel(size) + key_units, list_of_alloc(size))


def text_pieces(pieces: int) -> OpCost:
    """The list ``string.split`` builds around its ``pieces`` texts (extension): one fuel and 16
    bytes per piece (the texts themselves are charged by their shape and per result byte)."""
    return OpCost(pieces, list_of_alloc(pieces))


def list_of_alloc(n: int) -> int:
    """``list.of`` with ``n`` items: 16 n bytes."""
    return LIST_ELEMENT_ALLOC * n


def record_new_alloc(n: int) -> int:
    """``record.new`` with ``n`` fields: 16 n bytes."""
    return RECORD_FIELD_ALLOC * n


def list_add_alloc(size: int) -> int:
    """``list.add`` on a list of ``size``: 16 (size + 1) bytes."""
    return LIST_ELEMENT_ALLOC * (size + 1)


def list_add_flat_fuel(size: int) -> int:
    """Fuel of ``list.add`` of a scalar onto a flat list of ``size`` (no segment): the copy
    ``copy_fuel(size, 1)``, then the walk of the new list's shape (``size + 2`` nodes)."""
    return copy_fuel(size, 1) + shape_walk_fuel(size + 2)


def list_adds_flat_fuel(size: int, count: int) -> int:
    """``list_add_flat_fuel`` summed over ``count`` successive scalar adds onto a flat list of
    ``size``, in closed form. Why: the optimized backend reserves a whole chunk of adds at once and
    recomputes the exact fuel at a fault inside it from the list's length (``list_chunks``); one
    definition here keeps that sum the per-add charge. Each add onto ``s`` costs ``s + 3`` (the
    copy) plus ``(s + 2) // 64`` (the shape walk); ``tests/runtime/test_costs_owned.py`` checks the
    sum term by term."""
    copies = count * (size + 3) + count * (count - 1) // 2
    return copies + _walk_floor_sum(size + 2 + count) - _walk_floor_sum(size + 2)


def _walk_floor_sum(nodes: int) -> int:
    # 0 // 64 + 1 // 64 + ... + (nodes - 1) // 64: full runs of 64 equal quotients, then the rest
    runs, rest = divmod(nodes, SHAPE_WALK_NODES_PER_FUEL)
    return SHAPE_WALK_NODES_PER_FUEL * runs * (runs - 1) // 2 + rest * runs


def list_adds_alloc(size: int, count: int) -> int:
    """``list_add_alloc`` summed over ``count`` successive adds onto a list of ``size``, in closed
    form (16 x ((size+1) + ... + (size+count))): what the optimized backend's owned lists settle
    in one step. ``tests/runtime/test_costs_owned.py`` checks it against the sum, term by term."""
    return LIST_ELEMENT_ALLOC * _adds_elements(size, count)


def list_adds_elements(size: int, count: int) -> int:
    """Collection elements charged by ``count`` successive adds of a scalar onto a flat list of
    ``size``: each new list's shape holds ``size + k`` elements (k = 1..count)."""
    return _adds_elements(size, count)


def list_adds_charges(size: int, count: int) -> int:
    """Fuel charges (meter calls, the deadline cadence's unit) of ``count`` successive scalar adds
    onto a flat list of ``size``: the copy, plus the shape walk whenever its fuel is not 0."""
    first_walk = SHAPE_WALK_NODES_PER_FUEL - 2  # smallest size whose new shape's walk costs fuel
    walks = size + count - (size if size > first_walk else first_walk)
    return count + (walks if walks > 0 else 0)


def _adds_elements(size: int, count: int) -> int:
    # (size + 1) + ... + (size + count)
    return count * size + count * (count + 1) // 2


def text_appends_result_units(length: int, piece: int, count: int) -> int:
    """UTF-16 units of the results of ``count`` successive concatenations of ``piece``-unit texts
    onto a text of ``length``: ``(length + piece) + ... + (length + count * piece)``, in closed form.
    Why: each ``string.concatBudgeted`` charges its result's bytes (fuel per byte, string bytes,
    allocation), so this sum with ``piece`` the longest a loop's piece can be bounds what a whole
    chunk of the optimized backend's owned-string loop may charge (``text_appends_fuel``); it is
    checked once, at the chunk's reservation. ``tests/runtime/test_costs_owned.py`` checks it
    against the sum, term by term."""
    return count * length + piece * (count * (count + 1) // 2)


def text_appends_fuel(length: int, piece: int, count: int, fixed: int) -> int:
    """Fuel of ``count`` successive ``s = string.concatBudgeted(s, x)`` iterations, each with
    ``fixed`` fuel besides the concatenation's per-byte fuel on its result, the pieces ``x`` being
    ``piece`` units each, onto a text of ``length`` (the per-byte fuel of every result, in closed
    form: ``text_appends_result_units``)."""
    per_unit = BUILTIN_COSTS["string.concatBudgeted"].per_result_byte * string_bytes(1)
    return count * fixed + per_unit * text_appends_result_units(length, piece, count)


def map_set_alloc(size: int, is_new: bool) -> int:
    """``map.set`` on a map of ``size``: 32 max(1, size + (1 if the key is new)) bytes."""
    entries = size + 1 if is_new else size
    return MAP_ENTRY_ALLOC * (entries if entries > 1 else 1)


def map_remove_alloc(size: int, present: bool) -> int:
    """``map.remove`` on a map of ``size``: 32 max(1, size after removal) bytes."""
    entries = size - 1 if present else size
    return MAP_ENTRY_ALLOC * (entries if entries > 1 else 1)


def list_empty() -> OpCost:
    return OpCost(LIST_EMPTY_FUEL, LIST_EMPTY_ALLOC)


def map_empty() -> OpCost:
    return OpCost(MAP_EMPTY_FUEL, MAP_EMPTY_ALLOC)


def list_of(n: int) -> OpCost:
    return OpCost(copy_fuel(n), list_of_alloc(n))


def record_new(n: int) -> OpCost:
    return OpCost(copy_fuel(n), record_new_alloc(n))


def list_count(size: int) -> OpCost:
    return OpCost(read_fuel(size))


def list_get(size: int) -> OpCost:
    return OpCost(read_fuel(size))


def record_get(fields: int) -> OpCost:
    return OpCost(read_fuel(fields))


def map_contains_key(size: int) -> OpCost:
    return OpCost(read_fuel(size))


def map_get(size: int) -> OpCost:
    return OpCost(read_fuel(size))


def list_add(size: int) -> OpCost:
    """Appending to a list of ``size`` copies it: fuel 2 + size + 1, allocation 16 (size + 1)."""
    return OpCost(copy_fuel(size, 1), list_add_alloc(size))


def map_set(size: int, is_new: bool) -> OpCost:
    """``map.set`` on a map of ``size``: fuel 2 + size + 1, allocation 32 max(1, size + is_new)."""
    return OpCost(copy_fuel(size, 1), map_set_alloc(size, is_new))


def map_remove(size: int, present: bool) -> OpCost:
    """``map.remove`` on a map of ``size``: fuel 2 + size, allocation 32 max(1, new size)."""
    return OpCost(copy_fuel(size), map_remove_alloc(size, present))


MAP_ENTRIES_PER_WALK_FUEL = SHAPE_WALK_NODES_PER_FUEL // 2
"""A flat map of ``c`` entries has ``1 + 2c`` shape nodes, so walking it costs ``c // 32`` fuel."""


def owned_map_chunk_fuel(iterations: int, size: int, per_size: int, fixed: int, walks: int, sets: int) -> int:
    """An upper bound on the fuel of ``iterations`` iterations of an owned-map loop body (issue 16:
    the optimized backend's pre-checked map chunks) whose every path charges at most
    ``per_size * s + fixed + walks * (c // 32)``, ``s`` being the map's size at each read or set and
    ``c`` the count a set leaves, and makes at most ``sets`` updates. Each update adds at most one
    entry, so neither ``s`` nor ``c`` exceeds ``size + sets * iterations`` during the chunk, and
    every charge is monotone in them: the bound holds whichever path each iteration takes."""
    top = size + sets * iterations
    return iterations * (per_size * top + fixed + walks * (top // MAP_ENTRIES_PER_WALK_FUEL))


def owned_map_chunk_units(iterations: int, size: int, sets: int) -> int:
    """An upper bound on the units (the sum of the counts ``c``, each update's collection elements,
    and ``MAP_ENTRY_ALLOC`` bytes of allocation per unit) of ``iterations`` iterations making at
    most ``sets`` updates each on a map of ``size`` entries: each ``c <= size + sets * iterations``."""
    return iterations * sets * (size + sets * iterations)


# --- built-ins (spec/costs.md sections 4 and 5) ------------------------------------------------------
# Each built-in's fuel rule is part of its one record (``dotboxd.core.builtins.Builtin.cost``); these
# are the views of it that the backends and the prover read. Pure functions (``math.*``, ``string.*``,
# ``int32.toStringInvariant``) also take one host call (``HOST_CALL_COUNT``) before this fuel:
# ``dotboxd.core.builtins.Builtin.counts_as_host_call``. The collection intrinsics have no record
# cost: their charges are the collection functions above.

# --- operators ----------------------------------------------------------------------------------


def composite_equality_fuel(left_nodes: int, right_nodes: int) -> int:
    """``eq``/``ne`` on two List, Map or Record values: one fuel per value node of each operand
    (structural comparison may visit all of them). Scalars and texts cost nothing extra."""
    return left_nodes + right_nodes


# --- host bindings (spec/costs.md section 7) ----------------------------------------------------------

HOST_CALL_COUNT = 1
"""Each binding call takes one unit of ``MaxHostCalls`` and of the binding's ``maxCallsPerRun``; each
call of a pure built-in (a pure binding in DotBoxD) one unit of ``MaxHostCalls``."""


def binding_return_fuel(per_byte_fuel: int, returned_string_bytes: int) -> int:
    """Fuel for a binding's return value: ``perByteFuel`` x string bytes it holds (base fuel is
    charged separately, before dispatch)."""
    return per_byte_fuel * returned_string_bytes


# --- time and cancellation cadence --------------------------------------------------------------

DEADLINE_EVERY_FUEL_CHARGES = 64
"""The wall-time deadline is checked on every 64th fuel charge ..."""

DEADLINE_EVERY_LOOP_CHARGES = 4096
"""... on every 4096th loop-iteration charge, and at every binding checkpoint. Cancellation is
checked on every charge."""
