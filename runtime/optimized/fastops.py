"""Fast paths for the built-ins that collection- and text-heavy kernels call in their loops.

Why: every built-in call of generated code goes through ``stubs._intrinsic_stub``, which writes the
fuel back to the meter and runs the shared definition in ``runtime.intrinsics``; that definition
charges through several meter methods (fuel, allocation, then the new value's shape, whose text
part charges again). That is about a microsecond per call, many times the operation itself.

A fast path here computes the very same charges from the same ``core.costs`` functions and the same
value operations, and asks the meter whether *all* of them fit (``Meter.settle_fuel``,
``settle_value``, ``settle_flat_list`` and ``settle_text_call``: fuel, allocation, every shape limit,
cancellation, and, when one of the charges is the deadline check, the clock), which then applies
them in one step; the meter stays the only place that
knows its limits. If anything would be refused, or the result cannot be produced (a missing key, an index out
of range), it does nothing and calls the exact stub, which charges one by one through the meter and
fails at exactly the point the reference interpreter fails. So the observable result (value, error,
fuel, every usage counter) is the exact stub's in every case; the fast path only skips the
intermediate bookkeeping when the outcome is known to be success.

The pure functions (``math.*``, ``string.*``, ``int32.toStringInvariant``) count as host calls
(``Builtin.counts_as_host_call``): their fast paths settle the host call with the rest
(``Meter.settle_call`` for the constant-cost ones, ``Meter.settle_text_call`` for the text
builders), so
``hostCalls`` and ``bindingCalls`` are the exact stub's too.

The reads (``list.count``, ``list.get``, ``map.containsKey``, ``map.get``) and text literals of a
fast-lane run that has no meter yet (its state's ``lazy`` is armed: ``fastlane.LazyRunState``) settle
the same way without one (``pending``, the same checks on plain counters); a decline there
reads ``state.meter``, which builds it from those counters, and goes on as above.

Conventions shared with ``stubs``: ``f`` is the caller's fuel local (the meter's ``fuel_used`` may be
stale and is not written here: the next stub that needs the meter writes it back), ``site`` names
the fuel segment the call closes (``state.totals``), and the result is ``(value, f)``.

The differential tests in ``tests/optimized/test_fastops.py`` run each fast path against its exact
stub across limits and sizes, including every refusal; the conformance corpus and the generated
programs run both backends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from dotboxd.core import arith, costs
from dotboxd.core.builtins import BUILTINS, RULE_CONSTANT, Builtin
from dotboxd.core.costs import DEADLINE_EVERY_FUEL_CHARGES
from dotboxd.core.values import SCALAR_CLASSES, ListValue, MapValue, SandboxFault, Value, utf16_len

Stub = Callable[..., tuple[Value, int]]

_read_fuel = costs.read_fuel
_copy_fuel = costs.copy_fuel
_walk_fuel = costs.shape_walk_fuel
_string_bytes = costs.string_bytes
_list_add_alloc = costs.list_add_alloc
_map_set_alloc = costs.map_set_alloc

# The size-dependent amounts for sizes below ``_TABLED``, read from the cost functions once at import
# (an index is cheaper than a call; the functions stay the only definition of the numbers).
_EVERY: Final = DEADLINE_EVERY_FUEL_CHARGES  # a read settled without a meter stays below (``pending``)
_TABLED: Final = 4096
_SCALARS: Final = SCALAR_CLASSES
_READ_FUEL = tuple(_read_fuel(n) for n in range(_TABLED))
_ADD_FUEL = tuple(_copy_fuel(n, 1) for n in range(_TABLED))
_WALK_FUEL = tuple(_walk_fuel(n) for n in range(_TABLED + 2))
_LIST_ADD_ALLOC = tuple(_list_add_alloc(n) for n in range(_TABLED))
READ_FUEL_TABLE: Final = _READ_FUEL
"""``costs.read_fuel(n)`` for ``n`` below its length (the fused literal reads, ``literal_reads``)."""
WALK_FUEL_TABLE: Final = _WALK_FUEL
"""``costs.shape_walk_fuel(n)`` for ``n`` below its length (likewise)."""


# --- lists ---------------------------------------------------------------------------------------


def _list_count(exact: Stub) -> Stub:
    def stub(state: Any, f: int, lref: int, site: int, lst: ListValue) -> tuple[Value, int]:
        size = lst.size
        after = f - state.totals[site] - (_READ_FUEL[size] if size < _TABLED else _read_fuel(size))
        if state.lazy:  # no meter yet: ``pending``
            ticks = state.ticks + 1
            if after >= 0 and ticks < _EVERY and state.room >= 0:
                state.ticks = ticks
                return size, after
        if state.meter.settle_fuel(after, 1):
            return size, after
        return exact(state, f, lref, site, lst)

    return stub


def _list_get(exact: Stub) -> Stub:
    def stub(state: Any, f: int, lref: int, site: int, lst: ListValue, index: int) -> tuple[Value, int]:
        size = lst.size
        after = f - state.totals[site] - (_READ_FUEL[size] if size < _TABLED else _read_fuel(size))
        if 0 <= index < size:
            if state.lazy:  # no meter yet: ``pending``
                ticks = state.ticks + 1
                if after >= 0 and ticks < _EVERY and state.room >= 0:
                    state.ticks = ticks
                    return lst._buffer[index], after
            if state.meter.settle_fuel(after, 1):
                return lst._buffer[index], after  # ``lst[index]`` without a second range check
        return exact(state, f, lref, site, lst, index)

    return stub


def _list_add(exact: Stub) -> Stub:
    def stub(state: Any, f: int, lref: int, site: int, lst: ListValue, item: Value) -> tuple[Value, int]:
        size = lst.size
        if lst._shape is None and type(item) in _SCALARS:
            # a scalar onto a flat list (the commonest case): the new list is flat, its shape
            # ``flat_list_shape(size + 1)`` stays implicit, and so do the shape's charges
            nodes = size + 2
            if size < _TABLED:
                after = f - state.totals[site] - _ADD_FUEL[size] - _WALK_FUEL[nodes]
                alloc = _LIST_ADD_ALLOC[size]
                walk = _WALK_FUEL[nodes]
            else:
                walk = _walk_fuel(nodes)
                after = f - state.totals[site] - _copy_fuel(size, 1) - walk
                alloc = _list_add_alloc(size)
            if state.meter.settle_flat_list(after, 2 if walk else 1, alloc, size + 1):
                return lst.append_scalar(item), after
            return exact(state, f, lref, site, lst, item)
        shape = lst.appended_shape(item)  # pure: the value is built only once the meter agreed
        nodes = shape.nodes
        walk = _WALK_FUEL[nodes] if nodes < _TABLED else _walk_fuel(nodes)
        if size < _TABLED:
            after = f - state.totals[site] - _ADD_FUEL[size] - walk
            alloc = _LIST_ADD_ALLOC[size]
        else:
            after = f - state.totals[site] - _copy_fuel(size, 1) - walk
            alloc = _list_add_alloc(size)
        if state.meter.settle_value(after, 2 if walk else 1, alloc, shape):
            # appending claims the buffer's next slot; had it been claimed before the meter was
            # asked, a refusal would leave the exact path a buffer one item too long to copy
            return lst.append(item, shape), after
        return exact(state, f, lref, site, lst, item)

    return stub


def list_size(lst: ListValue) -> int:
    """``len(lst)`` for generated code, which reads no attribute (``_p_lsize``)."""
    return lst.size


def list_buffer(lst: ListValue) -> list[Value]:
    """The buffer a list's items live in (``_p_lbuf``): the generated code keeps it in a ``g<n>``
    view and subscripts it only within ``0 <= index < size`` of the same list (``verify_reads``;
    past the size it would be a later version's item, and the buffer is mutable, never a value)."""
    return lst._buffer


# --- maps ----------------------------------------------------------------------------------------


def _map_contains(exact: Stub) -> Stub:
    def stub(state: Any, f: int, lref: int, site: int, m: MapValue, key: Value) -> tuple[Value, int]:
        entries = m.entries
        size = len(entries)
        after = f - state.totals[site] - (_READ_FUEL[size] if size < _TABLED else _read_fuel(size))
        if state.lazy:  # no meter yet: ``pending``
            ticks = state.ticks + 1
            if after >= 0 and ticks < _EVERY and state.room >= 0:
                state.ticks = ticks
                return (type(key), key) in entries, after
        if state.meter.settle_fuel(after, 1):
            return (type(key), key) in entries, after  # MapValue.contains, inlined
        return exact(state, f, lref, site, m, key)

    return stub


def _map_get(exact: Stub) -> Stub:
    def stub(state: Any, f: int, lref: int, site: int, m: MapValue, key: Value) -> tuple[Value, int]:
        entries = m.entries
        entry = entries.get((type(key), key))  # MapValue.get, inlined; a miss takes the exact path
        size = len(entries)
        after = f - state.totals[site] - (_READ_FUEL[size] if size < _TABLED else _read_fuel(size))
        if entry is not None:
            if state.lazy:  # no meter yet: ``pending``
                ticks = state.ticks + 1
                if after >= 0 and ticks < _EVERY and state.room >= 0:
                    state.ticks = ticks
                    return entry[1], after
            if state.meter.settle_fuel(after, 1):
                return entry[1], after
        return exact(state, f, lref, site, m, key)

    return stub


def _map_set(exact: Stub) -> Stub:
    def stub(
        state: Any, f: int, lref: int, site: int, m: MapValue, key: Value, item: Value
    ) -> tuple[Value, int]:
        size = len(m.entries)
        value = m.set(key, item)  # pure: a new map, the receiver is unchanged
        is_new = len(value.entries) > size
        shape = value.shape
        nodes = shape.nodes
        walk = _WALK_FUEL[nodes] if nodes < _TABLED else _walk_fuel(nodes)
        fuel = _ADD_FUEL[size] if size < _TABLED else _copy_fuel(size, 1)
        after = f - state.totals[site] - fuel - walk
        if state.meter.settle_value(after, 2 if walk else 1, _map_set_alloc(size, is_new), shape):
            return value, after
        return exact(state, f, lref, site, m, key, item)

    return stub


# --- text ----------------------------------------------------------------------------------------
# A new text's shape has one node, so its walk fuel is ``shape_walk_fuel(1)`` (0 with the table's
# 64 nodes per fuel; kept as a term so that the table stays the only source of the number).

_CONCAT = costs.BUILTIN_COSTS["string.concatBudgeted"]
_TO_STRING = costs.BUILTIN_COSTS["int32.toStringInvariant"]
_TEXT_WALK = _walk_fuel(1)


def _concat(exact: Stub) -> Stub:
    fixed = _CONCAT.base + _TEXT_WALK
    fixed_charges = (1 if _CONCAT.base else 0) + (1 if _TEXT_WALK else 0)
    per_byte = _CONCAT.per_result_byte

    def stub(state: Any, f: int, lref: int, site: int, a: str, b: str) -> tuple[Value, int]:
        length = utf16_len(a) + utf16_len(b)
        byte_fuel = per_byte * _string_bytes(length)
        after = f - state.totals[site] - fixed - byte_fuel
        if state.meter.settle_text_call(
            "string.concatBudgeted", after, fixed_charges + (1 if byte_fuel else 0), length
        ):
            return a + b, after
        return exact(state, f, lref, site, a, b)

    return stub


def text_literal(exact: Stub, sync: Callable[[Any, int, int], Any]) -> Stub:
    """``_s_text``, a text literal evaluated: a new value charged as one (its shape: one node, its
    text). Once the segment's fuel is paid, ``sync`` (``stubs.sync``, as the exact stub calls it:
    the fuel written back and whatever an owned value's loop left to settle settled, so the meter's
    counters are complete) and then the shape's charges settled at once (``Meter.settle_value`` with
    no allocation besides the shape's text, as ``Meter.shape`` charges it) when everything fits.
    Otherwise the exact stub (``stubs.text``), whose own ``sync`` then finds nothing left to settle:
    a refusal, a cancelled run, the deadline charge, a segment the fuel does not cover. A host
    event's predicate evaluates its field names so. In a fast-lane run that has no meter yet (an
    armed ``lazy`` state) the same sync and settlement are counted without one
    (``pending``), and a decline takes the exact stub, which builds the meter."""

    def stub(state: Any, f: int, lref: int, site: int, index: int) -> tuple[Value, int]:
        paid = f - state.totals[site]
        if paid >= 0:
            if state.lazy:  # a fast-lane run without its meter yet: ``pending``
                size = state.literals[index]  # -1: not counted so; else its walk fuel is 0
                strings = state.strings + size
                if size >= 0 and strings <= state.room:
                    state.strings = strings
                    state.left = paid  # ``sync`` would have written it
                    return state.texts[index][0], paid
            value, shape = state.texts[index]
            nodes = shape.nodes
            walk = _WALK_FUEL[nodes] if nodes < _TABLED else _walk_fuel(nodes)
            after = paid - walk
            if sync(state, paid, 0).settle_value(after, 1 if walk else 0, 0, shape):
                return value, after
        return exact(state, f, lref, site, index)

    return stub


def concat_charges(exact: Callable[..., int]) -> Callable[..., int]:
    """``_concat`` without building the text, for ``s = string.concatBudgeted(s, x)``, which the
    generated code finishes with ``s = s + x`` (an in-place append when ``s`` is the text's only
    owner); returns the fuel left. ``exact`` charges one by one (``stubs.concat_charges_exact``)."""
    fixed = _CONCAT.base + _TEXT_WALK
    fixed_charges = (1 if _CONCAT.base else 0) + (1 if _TEXT_WALK else 0)
    per_byte = _CONCAT.per_result_byte

    def stub(state: Any, f: int, lref: int, site: int, a: str, b: str) -> int:
        length = utf16_len(a) + utf16_len(b)
        byte_fuel = per_byte * _string_bytes(length)
        after: int = f - state.totals[site] - fixed - byte_fuel
        if state.meter.settle_text_call(
            "string.concatBudgeted", after, fixed_charges + (1 if byte_fuel else 0), length
        ):
            return after
        return exact(state, f, lref, site, a, b)

    return stub


def _to_string(exact: Stub) -> Stub:
    fixed = _TO_STRING.base + _TEXT_WALK
    charges = (1 if _TO_STRING.base else 0) + (1 if _TEXT_WALK else 0)
    int_text = arith.int32_to_string_invariant

    def stub(state: Any, f: int, lref: int, site: int, n: int) -> tuple[Value, int]:
        text = int_text(n)  # ASCII digits and sign: one UTF-16 unit per character
        after = f - state.totals[site] - fixed
        if state.meter.settle_text_call("int32.toStringInvariant", after, charges, len(text)):
            return text, after
        return exact(state, f, lref, site, n)

    return stub


# --- constant-cost pure functions ----------------------------------------------------------------
# One host call, the base fuel, then the operation, whose only failures depend on its arguments: the
# value is computed first (pure), and a failure leaves everything to the exact stub.


def _constant_cost(builtin: Builtin) -> Callable[[Stub], Stub] | None:
    """The fast form of ``RULE_CONSTANT``, built from the record (its operation, arity and base
    fuel). Only for a pure function: ``Meter.settle_call`` settles its host call too. The
    conversions (``numeric.*``, no host call) are compiled inline by ``codegen`` instead."""
    if not builtin.counts_as_host_call:
        return None
    op, arity, name = builtin.semantics, builtin.arity, builtin.name
    assert op is not None and builtin.cost is not None and arity in (1, 2, 3), name
    base = builtin.cost.base
    charges = 1 if base else 0

    def wrap(exact: Stub) -> Stub:
        # one positional signature per arity: a ``*args`` stub builds and unpacks a tuple per call
        def stub1(state: Any, f: int, lref: int, site: int, a: Any) -> tuple[Value, int]:
            try:
                value = op(a)
            except SandboxFault:
                return exact(state, f, lref, site, a)
            after = f - state.totals[site] - base
            if state.meter.settle_call(name, after, charges):
                return value, after
            return exact(state, f, lref, site, a)

        def stub2(state: Any, f: int, lref: int, site: int, a: Any, b: Any) -> tuple[Value, int]:
            try:
                value = op(a, b)
            except SandboxFault:
                return exact(state, f, lref, site, a, b)
            after = f - state.totals[site] - base
            if state.meter.settle_call(name, after, charges):
                return value, after
            return exact(state, f, lref, site, a, b)

        def stub3(state: Any, f: int, lref: int, site: int, a: Any, b: Any, c: Any) -> tuple[Value, int]:
            try:
                value = op(a, b, c)
            except SandboxFault:
                return exact(state, f, lref, site, a, b, c)
            after = f - state.totals[site] - base
            if state.meter.settle_call(name, after, charges):
                return value, after
            return exact(state, f, lref, site, a, b, c)

        return stub1 if arity == 1 else stub2 if arity == 2 else stub3

    return wrap


def _own(form: Callable[[Stub], Stub]) -> Callable[[Builtin], Callable[[Stub], Stub] | None]:
    """A bespoke fast form, registered under its built-in's name (its record's ``rule``)."""
    return lambda builtin: form


FAST_FORMS: Mapping[str, Callable[[Builtin], Callable[[Stub], Stub] | None]] = MappingProxyType(
    {
        RULE_CONSTANT: _constant_cost,
        "list.count": _own(_list_count),
        "list.get": _own(_list_get),
        "list.add": _own(_list_add),
        "map.containsKey": _own(_map_contains),
        "map.get": _own(_map_get),
        "map.set": _own(_map_set),
        "string.concatBudgeted": _own(_concat),
        "int32.toStringInvariant": _own(_to_string),
    }
)
"""Implementation rule key (``Builtin.rule``) -> a factory of the fast form from the record (None:
no fast form for that record). A rule not listed here has none: its calls take the exact stub,
which is always correct (``RULE_SCAN`` and ``RULE_CASE_MAP`` are such rules)."""


def _fast_paths() -> dict[str, Callable[[Stub], Stub]]:
    paths: dict[str, Callable[[Stub], Stub]] = {}
    for name, builtin in BUILTINS.items():
        factory = FAST_FORMS.get(builtin.rule)
        form = factory(builtin) if factory is not None else None
        if form is not None:
            paths[name] = form
    return paths


FAST_PATHS: Mapping[str, Callable[[Stub], Stub]] = MappingProxyType(_fast_paths())
"""Built-in name -> a wrapper that takes the exact stub and returns the fast one."""


__all__ = [
    "FAST_FORMS",
    "FAST_PATHS",
    "READ_FUEL_TABLE",
    "WALK_FUEL_TABLE",
    "concat_charges",
    "list_buffer",
    "list_size",
    "text_literal",
]
