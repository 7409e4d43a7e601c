"""The charges and results of every built-in, symbolically, from ``dotboxd.core.costs``.

One rule per built-in, in the order ``runtime/intrinsics.py`` charges: for a pure function (a
built-in that counts as a host call) one host call, then the base fuel from
``BUILTIN_COSTS`` or the collection charge from the ``costs`` functions' constants, then (for a
new value) its shape charge, then per-byte fuel. Sizes come from the arguments' abstract values;
upper bounds feed ``U``, lower bounds ``L``. ``tests/prover/test_cost_semantics.py`` checks that a
bound equals the reference interpreter's usage on kernels whose sizes are exact, for every rule, so
the static table cannot drift from the meter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from dotboxd.core import ast, costs
from dotboxd.core.builtins import BUILTINS, PROVER_OPAQUE
from dotboxd.core.types import I32, I64, ListType, RecordType

from . import intervals
from .domain import OTHER, UNKNOWN_BOOL, ABool, AInt, AList, AMap, ARecord, AText, AVal
from .interface import AnalyzerView as Analyzer
from .state import ALLOCATION, FUEL, HOST_CALLS, STRING_BYTES, State
from .sym import ZERO, Poly, Sym, const

_B = costs.BUILTIN_COSTS

_Rule = Callable[["Analyzer", Sym, list[AVal], ast.Call, State], AVal]


def apply_builtin(an: Analyzer, name: str, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """The call's charges and abstract result, by the rule its record names (``Builtin.prover``)."""
    builtin = BUILTINS[name]
    if builtin.counts_as_host_call:
        # a pure function is a pure binding: one host call (maxHostCalls) before its base fuel
        an.charge(st, HOST_CALLS, const(costs.HOST_CALL_COUNT))
    if builtin.cost is not None and builtin.cost.base:
        an.fuel(st, builtin.cost.base)
    return RULES[builtin.prover](an, an.sym, args, node, st)


# --- math and conversions --------------------------------------------------------------------


def _ints(args: list[AVal]) -> list[AInt] | None:
    out = [a for a in args if isinstance(a, AInt)]
    return out if len(out) == len(args) else None


def _abs(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    ints = _ints(args)
    if ints is None:
        return OTHER
    (a,) = ints
    lo_t = -(2**31)
    x = a.exact
    fault = s.eq(s.add_const(x, -lo_t)) if x is not None else s.ge(s.sub(const(lo_t), a.lo))
    an.safety_check(st, node, "math.abs", fault, "I32 overflow (math.abs of MIN)", x is not None)
    if x is not None:
        r = s.ite(s.ge(x), x, s.neg(x))
        return AInt(r, r, I32)
    lo, hi = intervals.absolute(s, (a.lo, a.hi))
    return an._clip(AInt(lo, hi, I32))


def _min_max(is_min: bool) -> _Rule:
    def rule(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
        ints = _ints(args)
        if ints is None:
            return OTHER
        a, b = ints
        if a.exact is not None and b.exact is not None:
            r = s.min(a.exact, b.exact) if is_min else s.max(a.exact, b.exact)
            return AInt(r, r, I32)
        f = intervals.minimum if is_min else intervals.maximum
        lo, hi = f(s, (a.lo, a.hi), (b.lo, b.hi))
        return AInt(lo, hi, I32)

    return rule


def _clamp(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    ints = _ints(args)
    if ints is None:
        return OTHER
    v, low, high = ints
    exact = v.exact is not None and low.exact is not None and high.exact is not None
    if low.exact is not None and high.exact is not None:
        fault = s.lt(high.exact, low.exact)
    else:
        fault = s.lt(high.lo, low.hi)
    an.safety_check(st, node, "math.clamp", fault, "math.clamp with low > high", exact)
    if v.exact is not None and low.exact is not None and high.exact is not None:
        r = s.min(s.max(v.exact, low.exact), high.exact)
        return AInt(r, r, I32)
    lo, hi = intervals.clamp(s, (v.lo, v.hi), (low.lo, low.hi), (high.lo, high.hi))
    return AInt(lo, hi, I32)


def _f64_may_fail(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    an.stop(st)  # math.sqrt of a negative number is InvalidInput (F64 values are not tracked)
    return OTHER


def _f64(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    return OTHER


def _to_string(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    a = args[0]
    lo, hi = 1, 11
    if isinstance(a, AInt):
        rlo, rhi = s.range(a.lo)[0], s.range(a.hi)[1]
        if rlo >= 0:
            hi = len(str(rhi)) if rhi >= 0 else hi
    text = AText(const(lo), const(hi))
    an._shape_charge(st, text)
    return text


def _to_i64(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    a = args[0]
    if isinstance(a, AInt):
        return AInt(a.lo, a.hi, I64)
    return an.dom.top(I64)


# --- strings -------------------------------------------------------------------------------------


def _length(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    a = args[0]
    if isinstance(a, AText):
        return AInt(a.lo, a.hi, I32)
    return AInt(ZERO, const(an.dom.q.string_length), I32)


def _is_empty(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    a = args[0]
    if isinstance(a, AText) and a.lo == a.hi:
        return ABool(s.eq(a.lo))
    return UNKNOWN_BOOL


def _text_len(an: Analyzer, v: AVal) -> tuple[Poly, Poly]:
    if isinstance(v, AText):
        return v.lo, v.hi
    return ZERO, const(an.dom.q.string_length)


def _compare_inputs(result: AVal) -> _Rule:
    def rule(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
        name = node.name
        per = _B[name].per_input_unit
        (alo, ahi), (blo, bhi) = _text_len(an, args[0]), _text_len(an, args[1])
        an.fuel(st, s.scale(s.add(ahi, bhi), per), s.scale(s.add(s.max(alo, ZERO), s.max(blo, ZERO)), per))
        return result

    return rule


def _built_text(an: Analyzer, s: Sym, st: State, name: str, lo: Poly, hi: Poly) -> AText:
    """A built string: its shape (allocation), then per-result-byte fuel."""
    cap = const(an.dom.q.string_length)
    hi = s.min(s.max(hi, ZERO), cap)  # a negative length fails before any of these charges
    lo = s.max(s.min(lo, cap), ZERO)
    text = AText(lo, hi)
    an._shape_charge(st, text)
    per = _B[name].per_result_byte
    up = s.scale(hi, per * costs.STRING_BYTES_PER_UNIT)
    low = s.scale(lo, per * costs.STRING_BYTES_PER_UNIT)
    an.fuel(st, up, low)
    return text


def _substring(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    an.stop(st)  # an out-of-range or pair-splitting substring is InvalidInput
    _, s_hi = _text_len(an, args[0])
    length = args[2]
    if isinstance(length, AInt):
        lo, hi = s.max(length.lo, ZERO), s.min(length.hi, s_hi)
    else:
        lo, hi = ZERO, s_hi
    return _built_text(an, s, st, "string.substringBudgeted", lo, hi)


def _concat(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    (alo, ahi), (blo, bhi) = _text_len(an, args[0]), _text_len(an, args[1])
    st.risk = True  # the result may exceed maxStringLength or the string-byte budget
    return _built_text(an, s, st, "string.concatBudgeted", s.add(alo, blo), s.add(ahi, bhi))


def _index_of(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """``string.indexOf``: the input charge, then a result in -1 .. len(text) - len(part)."""
    _compare_inputs(UNKNOWN_BOOL)(an, s, args, node, st)
    _, ahi = _text_len(an, args[0])
    return AInt(const(-1), s.max(ahi, ZERO), I32)


def _parse_int(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """``parse.int``: one fuel per input unit; text that is not a decimal I32 fails (not tracked)."""
    lo, hi = _text_len(an, args[0])
    per = _B["parse.int"].per_input_unit
    an.fuel(st, s.scale(hi, per), s.scale(s.max(lo, ZERO), per))
    an.stop(st)  # R-PARSE-INT: string contents are not tracked, so any call may fail
    return an.dom.top(I32)


def _case_map(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """Case mapping keeps the length in units (``core.textops``): input fuel, then the built text."""
    name = node.name
    lo, hi = _text_len(an, args[0])
    lo = s.max(lo, ZERO)
    per = _B[name].per_input_unit
    an.fuel(st, s.scale(hi, per), s.scale(lo, per))
    return _built_text(an, s, st, name, lo, hi)


def _split(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """``string.split``: the scan, then 1 fuel and 16 bytes per piece (1 .. len(text) + 1 pieces),
    the list's shape (its texts hold at most the input's units) and per-byte fuel for them."""
    (alo, ahi), (blo, bhi) = _text_len(an, args[0]), _text_len(an, args[1])
    per = _B["string.split"].per_input_unit
    an.fuel(st, s.scale(s.add(ahi, bhi), per), s.scale(s.add(s.max(alo, ZERO), s.max(blo, ZERO)), per))
    ahi = s.max(ahi, ZERO)
    # pieces are charged before MaxListLength refuses too many, so the charge is not capped by it
    pieces_hi = s.add_const(ahi, 1)
    an.fuel(st, pieces_hi, const(1))
    per_piece = costs.LIST_ELEMENT_ALLOC
    an.charge(st, ALLOCATION, s.scale(pieces_hi, per_piece), const(per_piece))
    st.risk = True  # too many pieces for MaxListLength or the element budget
    an.fuel(st, s.fdiv(s.add_const(pieces_hi, 1), costs.SHAPE_WALK_NODES_PER_FUEL), 0)
    text_bytes = s.scale(ahi, costs.STRING_BYTES_PER_UNIT)
    an.charge(st, STRING_BYTES, text_bytes, ZERO)
    an.fuel(st, s.scale(text_bytes, _B["string.split"].per_result_byte), ZERO)
    return AList(const(1), s.min(pieces_hi, const(an.dom.q.list_length)), AText(ZERO, ahi), text_bytes)


def _replace(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """``string.replace``: the scan of ``text`` and ``old``, then the built text. Its length is not
    tracked (it depends on how often ``old`` occurs) beyond MaxStringLength, so any call may fail."""
    (alo, ahi), (blo, bhi) = _text_len(an, args[0]), _text_len(an, args[1])
    per = _B["string.replace"].per_input_unit
    an.fuel(st, s.scale(s.add(ahi, bhi), per), s.scale(s.add(s.max(alo, ZERO), s.max(blo, ZERO)), per))
    st.risk = True  # the result may exceed maxStringLength or the string-byte budget
    # at most len(text) occurrences, each turned into at most len(new) units: len(text) x (1 + len(new))
    _, chi = _text_len(an, args[2])
    hi = s.mul(s.max(ahi, ZERO), s.add_const(s.max(chi, ZERO), 1))
    return _built_text(an, s, st, "string.replace", ZERO, hi)


def _format(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """``format.simple``: one fuel per template unit, then (the template may be malformed: not
    tracked, so any call may fail) a built text of at most MaxStringLength units."""
    lo, hi = _text_len(an, args[0])
    per = _B["format.simple"].per_input_unit
    an.fuel(st, s.scale(hi, per), s.scale(s.max(lo, ZERO), per))
    an.stop(st)  # R-FORMAT: string contents are not tracked
    st.risk = True
    # each placeholder is at least 3 units of template ("{0}") and stands for one argument, so the
    # result is at most len(template) x (1 + the longest argument)
    items = args[1]
    elem = items.elem if isinstance(items, AList) else OTHER
    if elem is None:
        arg_hi = ZERO  # a list that never holds an element: no placeholder can succeed
    else:
        _, arg_hi = _text_len(an, elem)
    bound = s.mul(s.max(hi, ZERO), s.add_const(s.max(arg_hi, ZERO), 1))
    return _built_text(an, s, st, "format.simple", ZERO, bound)


# --- collections -------------------------------------------------------------------------------


def _size(v: AVal) -> tuple[Poly, Poly] | None:
    if isinstance(v, AList | AMap):
        return v.lo, v.hi
    return None


def _read_charge(an: Analyzer, s: Sym, st: State, coll: AVal) -> tuple[Poly, Poly]:
    size = _size(coll)
    lo, hi = size if size is not None else (ZERO, const(an.dom.q.list_length))
    lo = s.max(lo, ZERO)
    base = costs.COLLECTION_BASE_FUEL
    an.fuel(st, s.add_const(hi, base), s.add_const(lo, base))
    return lo, hi


def _collection(an: Analyzer, name: str, args: list[AVal], node: ast.Call, st: State) -> AVal:
    s = an.sym
    dom = an.dom
    base = costs.COLLECTION_BASE_FUEL
    t = an.plan.type_of(node)
    if name in ("list.empty", "map.empty"):
        op = costs.list_empty() if name == "list.empty" else costs.map_empty()
        an.fuel(st, op.fuel)
        an.charge(st, ALLOCATION, const(op.alloc))
        value: AVal = AList(ZERO, ZERO, None) if name == "list.empty" else AMap(ZERO, ZERO, None, None)
        an._shape_charge(st, value)
        return value
    if name in ("list.of", "record.new"):
        n = len(args)
        op = costs.list_of(n) if name == "list.of" else costs.record_new(n)
        an.fuel(st, op.fuel)
        an.charge(st, ALLOCATION, const(op.alloc))
        st.risk = True
        if name == "record.new":
            value = ARecord(tuple(args))
        else:
            elem: AVal | None = None
            for a in args:
                elem = dom.join(elem, a)
            # the new list holds exactly its arguments' texts: bound them together, not n x the widest
            value = AList(const(n), const(n), elem, s.sum(dom.sbytes_hi(a) for a in args))
        an._shape_charge(st, value)
        return value
    if name == "list.slice":
        return _list_slice(an, s, args, node, st)
    if name == "map.keys":
        return _map_keys(an, s, args, st)
    if name in ("list.count", "map.count", "list.get", "map.containsKey", "map.get"):
        coll = args[0]
        lo, hi = _read_charge(an, s, st, coll)
        if name in ("list.count", "map.count"):
            size = _size(coll)
            if size is not None:
                return AInt(size[0], size[1], I32)
            return AInt(ZERO, const(dom.q.list_length), I32)
        if name == "map.containsKey":
            return UNKNOWN_BOOL
        if name == "map.get":
            an.stop(st)  # a missing key is NotFound
            found = coll.value if isinstance(coll, AMap) and coll.value is not None else dom.top(t)
            return _part_of(an, coll, found)
        index = args[1]
        _index_check(an, s, st, node, coll, index)
        if isinstance(coll, AList) and coll.elem is not None:
            return _part_of(an, coll, coll.elem)
        return dom.top(t)
    if name == "record.get":
        coll = args[0]
        fields = coll.fields if isinstance(coll, ARecord) else ()
        an.fuel(st, base + len(fields))
        idx = node.args[1]
        if isinstance(idx, ast.Literal) and isinstance(idx.value, int) and 0 <= idx.value < len(fields):
            return _part_of(an, coll, fields[idx.value])
        return dom.top(t)
    if name == "list.add":
        coll, item = args
        size = _size(coll) or (ZERO, const(dom.q.list_length))
        lo, hi = s.max(size[0], ZERO), size[1]
        an.fuel(st, s.add_const(hi, base + 1), s.add_const(lo, base + 1))
        per = costs.LIST_ELEMENT_ALLOC
        an.charge(st, ALLOCATION, s.scale(s.add_const(hi, 1), per), s.scale(s.add_const(lo, 1), per))
        st.risk = True
        walk_nodes = s.add(dom.nodes_hi(coll), dom.nodes_hi(item))
        an.fuel(st, s.fdiv(walk_nodes, costs.SHAPE_WALK_NODES_PER_FUEL), 0)
        sb = s.add(dom.sbytes_hi(coll), dom.sbytes_hi(item))
        an.charge(st, STRING_BYTES, sb, ZERO)
        elem = coll.elem if isinstance(coll, AList) else None
        cap = const(dom.q.list_length)
        return AList(s.add_const(lo, 1), s.min(s.add_const(hi, 1), cap), dom.join(elem, item), sb)
    if name in ("map.set", "map.remove"):
        coll = args[0]
        size = _size(coll) or (ZERO, const(dom.q.map_entries))
        lo, hi = s.max(size[0], ZERO), size[1]
        per = costs.MAP_ENTRY_ALLOC
        st.risk = True
        cap = const(dom.size_cap(t))
        if name == "map.set":
            _, key, item = args
            an.fuel(st, s.add_const(hi, base + 1), s.add_const(lo, base + 1))
            an.charge(st, ALLOCATION, s.scale(s.add_const(hi, 1), per), s.scale(s.max(lo, const(1)), per))
            walk_nodes = s.add(dom.nodes_hi(coll), s.add(dom.nodes_hi(key), dom.nodes_hi(item)))
            an.fuel(st, s.fdiv(walk_nodes, costs.SHAPE_WALK_NODES_PER_FUEL), 0)
            sb = s.add(dom.sbytes_hi(coll), s.add(dom.sbytes_hi(key), dom.sbytes_hi(item)))
            an.charge(st, STRING_BYTES, sb, ZERO)
            old_k = coll.key if isinstance(coll, AMap) else None
            old_v = coll.value if isinstance(coll, AMap) else None
            size_hi = s.min(s.add_const(hi, 1), cap)
            return AMap(lo, size_hi, dom.join(old_k, key), dom.join(old_v, item), sb)
        an.fuel(st, s.add_const(hi, base), s.add_const(lo, base))
        an.charge(st, ALLOCATION, s.scale(s.max(hi, const(1)), per), const(per))
        an.fuel(st, s.fdiv(dom.nodes_hi(coll), costs.SHAPE_WALK_NODES_PER_FUEL), 0)
        sb = dom.sbytes_hi(coll)
        an.charge(st, STRING_BYTES, sb, ZERO)
        old_k = coll.key if isinstance(coll, AMap) else None
        old_v = coll.value if isinstance(coll, AMap) else None
        return AMap(s.max(s.add_const(lo, -1), ZERO), hi, old_k, old_v, sb)
    # unknown built-in (a newer catalogue): nothing is known about its cost
    an.stop(st)
    an.charge(st, "fuel", None)
    return dom.top(t) if not isinstance(t, RecordType | ListType) else OTHER


def _list_slice(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """``list.slice``: base fuel, the range check, then ``costs.list_slice(count)`` and the shape."""
    coll, start, count = args
    an.fuel(st, costs.COLLECTION_BASE_FUEL)
    size = _size(coll)
    if not isinstance(start, AInt) or not isinstance(count, AInt) or size is None:
        an.stop(st)
        n_lo, n_hi = ZERO, const(an.dom.q.list_length)
    else:
        exact = start.exact is not None and count.exact is not None and size[0] == size[1]
        if exact:
            assert start.exact is not None and count.exact is not None
            fault = s.or_(
                s.or_(s.lt(start.exact, ZERO), s.lt(count.exact, ZERO)),
                s.lt(size[0], s.add(start.exact, count.exact)),
            )
        else:
            fault = s.or_(
                s.or_(s.lt(start.lo, ZERO), s.lt(count.lo, ZERO)),
                s.lt(size[0], s.add(start.hi, count.hi)),
            )
        an.safety_check(st, node, "list.slice", fault, "slice out of range", exact)
        n_lo, n_hi = s.max(count.lo, ZERO), s.max(s.min(count.hi, size[1]), ZERO)
    an.fuel(st, n_hi, n_lo)
    per = costs.LIST_ELEMENT_ALLOC
    an.charge(st, ALLOCATION, s.scale(n_hi, per), s.scale(n_lo, per))
    st.risk = True
    elem = coll.elem if isinstance(coll, AList) else None
    value = AList(n_lo, n_hi, elem, an.dom.sbytes_hi(coll))  # a part of the list: no more text
    an._shape_charge(st, value)
    return value


def _map_keys(an: Analyzer, s: Sym, args: list[AVal], st: State) -> AVal:
    """``map.keys``: ``costs.map_keys`` with the size's bounds (the sort's ``ceil(log2 n)`` taken at
    the largest size the map can have, the key text at the map's string bytes), then the shape."""
    coll = args[0]
    size = _size(coll) or (ZERO, const(an.dom.q.map_entries))
    lo, hi = s.max(size[0], ZERO), size[1]
    key = coll.key if isinstance(coll, AMap) else None
    log_hi = max(min(s.range(hi)[1], an.dom.q.map_entries) - 1, 0).bit_length()
    key_bytes = s.min(s.mul(s.max(hi, ZERO), an.dom.sbytes_hi(key)), const(an.dom.q.string_bytes))
    key_units_hi = s.fdiv(key_bytes, costs.STRING_BYTES_PER_UNIT)
    fuel_hi = s.add(s.add_const(s.scale(hi, 1 + log_hi), costs.COLLECTION_BASE_FUEL), key_units_hi)
    an.fuel(st, fuel_hi, s.add_const(lo, costs.COLLECTION_BASE_FUEL))
    per = costs.LIST_ELEMENT_ALLOC
    an.charge(st, ALLOCATION, s.scale(hi, per), s.scale(lo, per))
    st.risk = True
    value = AList(lo, hi, key, an.dom.sbytes_hi(coll))  # the keys are part of the map's text
    an._shape_charge(st, value)
    return value


def _part_of(an: Analyzer, whole: AVal, part: AVal) -> AVal:
    """A value read out of ``whole`` holds no more text than ``whole`` does."""
    total = an.dom.bytes_of(whole)
    if total is None:
        return part
    narrowed = an.dom.with_bytes(part, total)
    return narrowed if narrowed is not None else part


def _index_check(an: Analyzer, s: Sym, st: State, node: ast.Call, coll: AVal, index: AVal) -> None:
    size = _size(coll)
    if not isinstance(index, AInt) or size is None:
        an.stop(st)
        return
    if index.exact is not None and size[0] == size[1]:
        i, n = index.exact, size[0]
        fault = s.or_(s.lt(i, ZERO), s.le(n, i))
        exact = True
    else:
        fault = s.or_(s.lt(index.lo, ZERO), s.le(size[0], index.hi))
        exact = False
    an.safety_check(st, node, "list.get", fault, "index out of range", exact)


def _collection_rule(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    return _collection(an, node.name, args, node, st)


def _opaque(an: Analyzer, s: Sym, args: list[AVal], node: ast.Call, st: State) -> AVal:
    """``PROVER_OPAQUE``: a built-in the prover does not model. It may fail (the must prefix ends)
    and its charges beyond the host call and base fuel are unknown (no upper bound on fuel,
    allocation or string bytes), so no bound that covers the call is ever PROVED; the meter still
    enforces every limit at run time."""
    an.stop(st)
    for resource in (FUEL, ALLOCATION, STRING_BYTES):
        an.charge(st, resource, None, ZERO)
    st.risk = True
    return an.dom.top(an.plan.type_of(node))


RULES: Mapping[str, _Rule] = MappingProxyType(
    {
        "abs": _abs,
        "min": _min_max(True),
        "max": _min_max(False),
        "clamp": _clamp,
        "f64-may-fail": _f64_may_fail,
        "f64": _f64,
        "to-string": _to_string,
        "to-i64": _to_i64,
        "length": _length,
        "is-empty": _is_empty,
        "substring": _substring,
        "concat": _concat,
        "scan-bool": _compare_inputs(UNKNOWN_BOOL),
        "compare-ordinal": _compare_inputs(AInt(const(-1), const(1), I32)),
        "index-of": _index_of,
        "case-map": _case_map,
        "parse-int": _parse_int,
        "split": _split,
        "replace": _replace,
        "format": _format,
        "collection": _collection_rule,
        PROVER_OPAQUE: _opaque,
    }
)
"""Prover rule key (``Builtin.prover``) -> the rule; several built-ins share a key (the scans, the
F64 functions, the collection intrinsics)."""
