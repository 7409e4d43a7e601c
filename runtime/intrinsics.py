"""Built-in calls with their exact charges: one implementation for every backend.

Each function takes the run's meter and the already-evaluated argument values, charges what
``spec/costs.md`` sections 4 and 5 say in the order they say it, and returns the result (or raises
a ``SandboxFault``). The semantics of the operations themselves come from ``dotboxd.core.arith``
and ``dotboxd.core.values``; the amounts from ``dotboxd.core.costs``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from dotboxd.core import arith, costs, textops
from dotboxd.core.builtins import BUILTINS, RULE_CASE_MAP, RULE_CONSTANT, RULE_SCAN, Builtin
from dotboxd.core.values import (
    ListValue,
    MapValue,
    RecordValue,
    SandboxFault,
    Value,
    shape_of,
    text_shape,
    utf16_len,
    utf16_substring,
)
from dotboxd.runtime.meter import Meter

Intrinsic = Callable[[Meter, tuple[Value, ...]], Value]

_B = costs.BUILTIN_COSTS


def _base(meter: Meter, name: str) -> None:
    fuel = _B[name].base
    if fuel:
        meter.fuel(fuel)


# --- shared rules (``dotboxd.core.builtins.SHARED_RULES``): built from the record alone ---------


def _constant(builtin: Builtin) -> Intrinsic:
    """``RULE_CONSTANT``: the base fuel, then the operation (one closure per arity: a ``*args`` call
    would build and unpack a tuple per call)."""
    op = builtin.semantics
    assert op is not None and builtin.cost is not None, builtin.name
    base = builtin.cost.base

    def impl1(meter: Meter, args: tuple[Value, ...]) -> Value:
        if base:
            meter.fuel(base)
        (a,) = args
        result: Value = op(a)
        return result

    def impl2(meter: Meter, args: tuple[Value, ...]) -> Value:
        if base:
            meter.fuel(base)
        a, b = args
        result: Value = op(a, b)
        return result

    def impl3(meter: Meter, args: tuple[Value, ...]) -> Value:
        if base:
            meter.fuel(base)
        a, b, c = args
        result: Value = op(a, b, c)
        return result

    impls = {1: impl1, 2: impl2, 3: impl3}
    assert builtin.arity in impls, builtin.name
    return impls[builtin.arity]


def _scan(builtin: Builtin) -> Intrinsic:
    """``RULE_SCAN`` (``string.equals``, ``contains``, ``startsWith`` ...): base fuel plus one fuel
    per UTF-16 unit of both inputs (the operation reads each at most a bounded number of times)."""
    op = builtin.semantics
    assert op is not None and builtin.arity == 2, builtin.name
    name = builtin.name

    def impl(meter: Meter, args: tuple[Value, ...]) -> Value:
        a, b = _compare_inputs(meter, name, args)
        result: Value = op(a, b)
        return result

    return impl


def _case_map(builtin: Builtin) -> Intrinsic:
    """``RULE_CASE_MAP`` (``string.toLowerInvariant``/``toUpperInvariant``): base fuel, one fuel per
    input unit (the per-character mapping), then the built string (shape, per-byte fuel). The result
    has the input's length in units (``textops``), so every charge is known before the mapping runs."""
    op = builtin.semantics
    cost = builtin.cost
    assert op is not None and cost is not None, builtin.name
    name = builtin.name

    def impl(meter: Meter, args: tuple[Value, ...]) -> Value:
        (s,) = args
        assert isinstance(s, str)
        units = utf16_len(s)
        meter.fuel(cost.fuel(units))
        _charge_built_text(meter, name, units)
        result: Value = op(s)
        return result

    return impl


def _to_string(meter: Meter, args: tuple[Value, ...]) -> Value:
    _base(meter, "int32.toStringInvariant")
    (a,) = args
    assert isinstance(a, int)
    text = arith.int32_to_string_invariant(a)
    meter.shape(text_shape(len(text)))
    return text


# --- strings ------------------------------------------------------------------------------------


def _compare_inputs(meter: Meter, name: str, args: tuple[Value, ...]) -> tuple[str, str]:
    _base(meter, name)
    a, b = args
    assert isinstance(a, str) and isinstance(b, str)
    units = utf16_len(a) + utf16_len(b)
    fuel = _B[name].per_input_unit * units
    if fuel:
        meter.fuel(fuel)
    return a, b


def _parse_int(meter: Meter, args: tuple[Value, ...]) -> Value:
    """``parse.int``: base fuel and one fuel per input unit (the scan), then the parse (may fail)."""
    (s,) = args
    assert isinstance(s, str)
    meter.fuel(_B["parse.int"].fuel(utf16_len(s)))
    return textops.parse_int(s)


def _split(meter: Meter, args: tuple[Value, ...]) -> Value:
    """``string.split``: base and input fuel (the scan), then the pieces' list (fuel and allocation
    per piece, MaxListLength before anything is built), the list's shape, and per-byte fuel for the
    pieces' text, which is the input's text less the separators."""
    text, separator = _compare_inputs(meter, "string.split", args)
    pieces = textops.split_count(text, separator)
    op = costs.text_pieces(pieces)
    meter.fuel(op.fuel)
    meter.alloc(op.alloc)
    meter.list_length(pieces)
    value = ListValue(textops.split(text, separator))
    meter.shape(value.shape)
    units = utf16_len(text) - (pieces - 1) * utf16_len(separator)
    fuel = _B["string.split"].per_result_byte * costs.string_bytes(units)
    if fuel:
        meter.fuel(fuel)
    return value


def _replace(meter: Meter, args: tuple[Value, ...]) -> Value:
    """``string.replace``: base fuel and one per unit of ``text`` and ``old`` (the scan), then the
    result's shape and per-byte fuel from its length, known from the count of occurrences before the
    text is built (a result over MaxStringLength is never made)."""
    _base(meter, "string.replace")
    text, old, new = args
    assert isinstance(text, str) and isinstance(old, str) and isinstance(new, str)
    text_units, old_units = utf16_len(text), utf16_len(old)
    meter.fuel(_B["string.replace"].per_input_unit * (text_units + old_units))
    count = textops.replace_count(text, old)
    _charge_built_text(meter, "string.replace", text_units + count * (utf16_len(new) - old_units))
    return textops.replace(text, old, new)


def _format(meter: Meter, args: tuple[Value, ...]) -> Value:
    """``format.simple``: base fuel and one per template unit (the parse, which may fail with
    R-FORMAT), then the result's shape and per-byte fuel from its length, worked out before the text
    is built."""
    template, values = args
    assert isinstance(template, str) and isinstance(values, ListValue)
    cost = _B["format.simple"]
    meter.fuel(cost.fuel(utf16_len(template)))
    parsed = textops.format_parts(template, values.size)
    used: dict[int, str] = {}
    for part in parsed.parts:
        if isinstance(part, int) and part not in used:
            item = values[part]
            assert isinstance(item, str)
            used[part] = item
    _charge_built_text(meter, "format.simple", parsed.length({i: utf16_len(t) for i, t in used.items()}))
    return parsed.build(used)


def _charge_built_text(meter: Meter, name: str, length16: int) -> None:
    """A built string: its shape (length, bytes, allocation) first, then the per-byte fuel."""
    meter.shape(text_shape(length16))
    fuel = _B[name].per_result_byte * costs.string_bytes(length16)
    if fuel:
        meter.fuel(fuel)


def _substring(meter: Meter, args: tuple[Value, ...]) -> Value:
    _base(meter, "string.substringBudgeted")
    s, start, length = args
    assert isinstance(s, str) and isinstance(start, int) and isinstance(length, int)
    result = utf16_substring(s, start, length)
    _charge_built_text(meter, "string.substringBudgeted", length)
    return result


def _concat_charges(meter: Meter, args: tuple[Value, ...]) -> Value:
    """Every charge of ``string.concatBudgeted`` but the host call, without building the text."""
    _base(meter, "string.concatBudgeted")
    a, b = args
    assert isinstance(a, str) and isinstance(b, str)
    _charge_built_text(meter, "string.concatBudgeted", utf16_len(a) + utf16_len(b))
    return None


def _concat(meter: Meter, args: tuple[Value, ...]) -> Value:
    _concat_charges(meter, args)
    a, b = args
    assert isinstance(a, str) and isinstance(b, str)
    return a + b


# --- collections --------------------------------------------------------------------------------
# Fuel first, then allocation, then the new value's shape (spec/costs.md section 4). The amounts are
# the plain-int forms of the ``costs`` table, so no cost record is built per call.

_read_fuel = costs.read_fuel
_copy_fuel = costs.copy_fuel


def _list_empty(meter: Meter, args: tuple[Value, ...]) -> Value:
    meter.fuel(costs.LIST_EMPTY_FUEL)
    meter.alloc(costs.LIST_EMPTY_ALLOC)
    value = ListValue(())
    meter.shape(value.shape)
    return value


def _collect(
    meter: Meter,
    args: tuple[Value, ...],
    alloc_of: Callable[[int], int],
    make: Callable[[tuple[Value, ...]], ListValue | RecordValue],
) -> Value:
    """``list.of`` and ``record.new``: copy fuel for n items, the allocation, then the new shape."""
    n = len(args)
    meter.fuel(_copy_fuel(n))
    alloc = alloc_of(n)
    if alloc:
        meter.alloc(alloc)
    value = make(args)
    meter.shape(value.shape)
    return value


def _list_of(meter: Meter, args: tuple[Value, ...]) -> Value:
    return _collect(meter, args, costs.list_of_alloc, ListValue)


def _list_count(meter: Meter, args: tuple[Value, ...]) -> Value:
    (lst,) = args
    assert isinstance(lst, ListValue)
    size = lst.size
    meter.fuel(_read_fuel(size))
    return size


def _list_get(meter: Meter, args: tuple[Value, ...]) -> Value:
    lst, index = args
    assert isinstance(lst, ListValue) and isinstance(index, int)
    size = lst.size
    meter.fuel(_read_fuel(size))
    if not 0 <= index < size:
        raise SandboxFault("R-LIST-INDEX", "list index is out of range")
    return lst[index]


def _list_add(meter: Meter, args: tuple[Value, ...]) -> Value:
    lst, item = args
    assert isinstance(lst, ListValue)
    size = lst.size
    meter.fuel(_copy_fuel(size, 1))
    meter.alloc(costs.list_add_alloc(size))
    value = lst.append(item)
    meter.shape(value.shape)
    return value


def _list_slice(meter: Meter, args: tuple[Value, ...]) -> Value:
    """The base fuel, the range check, then the rest of ``costs.list_slice`` and the new shape."""
    lst, start, count = args
    assert isinstance(lst, ListValue) and isinstance(start, int) and isinstance(count, int)
    meter.fuel(costs.COLLECTION_BASE_FUEL)
    if start < 0 or count < 0 or start + count > lst.size:
        raise SandboxFault("R-LIST-INDEX", "list slice is out of range")
    op = costs.list_slice(count)
    rest = op.fuel - costs.COLLECTION_BASE_FUEL
    if rest:
        meter.fuel(rest)
    if op.alloc:
        meter.alloc(op.alloc)
    value = ListValue(tuple(lst[i] for i in range(start, start + count)))
    meter.shape(value.shape)
    return value


def _map_count(meter: Meter, args: tuple[Value, ...]) -> Value:
    (m,) = args
    assert isinstance(m, MapValue)
    size = len(m.entries)
    meter.fuel(_read_fuel(size))
    return size


def _map_keys(meter: Meter, args: tuple[Value, ...]) -> Value:
    """``map.keys``: ``costs.map_keys`` (copy, sort, key text), then the list in canonical key
    order and its shape."""
    (m,) = args
    assert isinstance(m, MapValue)
    key_units = sum(shape_of(key).max_string for key, _ in m.entries.values())
    op = costs.map_keys(len(m.entries), key_units)
    meter.fuel(op.fuel)
    if op.alloc:
        meter.alloc(op.alloc)
    value = ListValue(key for key, _ in m.sorted_entries())
    meter.shape(value.shape)
    return value


def _map_empty(meter: Meter, args: tuple[Value, ...]) -> Value:
    meter.fuel(costs.MAP_EMPTY_FUEL)
    meter.alloc(costs.MAP_EMPTY_ALLOC)
    value = MapValue()
    meter.shape(value.shape)
    return value


def _map_contains(meter: Meter, args: tuple[Value, ...]) -> Value:
    m, key = args
    assert isinstance(m, MapValue)
    meter.fuel(_read_fuel(len(m.entries)))
    return m.contains(key)


def _map_get(meter: Meter, args: tuple[Value, ...]) -> Value:
    m, key = args
    assert isinstance(m, MapValue)
    meter.fuel(_read_fuel(len(m.entries)))
    return m.get(key)


def _map_set(meter: Meter, args: tuple[Value, ...]) -> Value:
    m, key, item = args
    assert isinstance(m, MapValue)
    size = len(m.entries)
    meter.fuel(_copy_fuel(size, 1))
    meter.alloc(costs.map_set_alloc(size, not m.contains(key)))
    value = m.set(key, item)
    meter.shape(value.shape)
    return value


def _map_remove(meter: Meter, args: tuple[Value, ...]) -> Value:
    m, key = args
    assert isinstance(m, MapValue)
    size = len(m.entries)
    meter.fuel(_copy_fuel(size))
    meter.alloc(costs.map_remove_alloc(size, m.contains(key)))
    value = m.remove(key)
    meter.shape(value.shape)
    return value


def _record_new(meter: Meter, args: tuple[Value, ...]) -> Value:
    return _collect(meter, args, costs.record_new_alloc, RecordValue)


def _record_get(meter: Meter, args: tuple[Value, ...]) -> Value:
    record, index = args
    assert isinstance(record, RecordValue) and isinstance(index, int)
    fields = record.fields
    meter.fuel(_read_fuel(len(fields)))
    if not 0 <= index < len(fields):
        raise SandboxFault("R-RECORD-INDEX", "record field index is out of range")
    return fields[index]


def _as_host_call(name: str, impl: Intrinsic) -> Intrinsic:
    """A built-in that counts as a pure binding (``Builtin.counts_as_host_call``): one host call
    under its own name first - MaxHostCalls, usage.hostCalls, bindingCalls, as DotBoxD's binding
    sequence charges it before the base fuel - then the built-in's own charges."""
    host_call = Meter.host_call

    def counted(meter: Meter, args: tuple[Value, ...]) -> Value:
        host_call(meter, name, None)
        return impl(meter, args)

    counted.__name__ = getattr(impl, "__name__", name)
    return counted


def _own(impl: Intrinsic) -> Callable[[Builtin], Intrinsic]:
    """A bespoke implementation, registered under its built-in's name (its record's ``rule``)."""
    return lambda builtin: impl


RULES: Mapping[str, Callable[[Builtin], Intrinsic]] = MappingProxyType(
    {
        RULE_CONSTANT: _constant,
        RULE_SCAN: _scan,
        RULE_CASE_MAP: _case_map,
        "int32.toStringInvariant": _own(_to_string),
        "string.substringBudgeted": _own(_substring),
        "string.concatBudgeted": _own(_concat),
        "parse.int": _own(_parse_int),
        "string.split": _own(_split),
        "string.replace": _own(_replace),
        "format.simple": _own(_format),
        "list.empty": _own(_list_empty),
        "list.of": _own(_list_of),
        "list.count": _own(_list_count),
        "list.get": _own(_list_get),
        "list.add": _own(_list_add),
        "list.slice": _own(_list_slice),
        "map.count": _own(_map_count),
        "map.keys": _own(_map_keys),
        "map.empty": _own(_map_empty),
        "map.containsKey": _own(_map_contains),
        "map.get": _own(_map_get),
        "map.set": _own(_map_set),
        "map.remove": _own(_map_remove),
        "record.new": _own(_record_new),
        "record.get": _own(_record_get),
    }
)
"""Implementation rule key (``Builtin.rule``) -> a factory that builds the implementation from the
record: the shared rules first, then each bespoke built-in under its own name."""


def _implementation(builtin: Builtin) -> Intrinsic:
    impl = RULES[builtin.rule](builtin)
    return _as_host_call(builtin.name, impl) if builtin.counts_as_host_call else impl


INTRINSICS: Mapping[str, Intrinsic] = MappingProxyType(
    {name: _implementation(builtin) for name, builtin in BUILTINS.items()}
)
"""Every built-in of ``dotboxd.core.builtins.BUILTINS`` by name, built from its record's ``rule`` (a
record whose rule is not in ``RULES`` fails at import, and a test names it), with the host-call
charge in front of those that count as pure bindings."""

CONCAT_CHARGES: Intrinsic = _as_host_call("string.concatBudgeted", _concat_charges)
"""All of ``string.concatBudgeted``'s charges (its host call included), in order, and no text: for
``s = string.concatBudgeted(s, x)``, which both backends run as an append to the variable's own
text (``text_append``) so that building a string by repeated concatenation is not quadratic."""


def text_append(text: str, suffix: str) -> str:
    """``text + suffix``, for a caller that has just taken ``text`` out of the only variable that
    held it.

    Why a function of its own: CPython appends to a string in place (amortized O(1), no copy of
    ``text``) when ``text`` has no other reference, its hash was never taken and it is not interned;
    otherwise it builds a new string, as ``+`` always does. A kernel therefore can never see a text
    change: a text anything else still refers to (another variable, a list, a map key, the UTF-16
    index of a non-ASCII text) is copied. The in-place case needs ``text`` to be a local that is
    rebound by the same statement (``text += suffix``), so the callers pass the text in a local
    whose only other owner they have just dropped.
    """
    text += suffix
    return text
