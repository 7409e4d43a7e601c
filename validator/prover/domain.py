"""Abstract values: what the prover knows about each local at a program point.

An integer is an interval ``[lo, hi]`` whose ends are polys over the input atoms (it is *exact* when
both ends are the same poly, e.g. the parameter ``n`` or ``n * 2 + 1``); a collection or text is an
interval of sizes (UTF-16 units for texts) plus an abstraction of its elements, and for a collection
or record optionally a direct bound on the string bytes of all its texts together (``tb``: the
runtime charges those bytes again each time a collection is copied, and ``size x widest element``
overstates them whenever the texts differ in length); a Bool is a condition when it is known
exactly. These are the facts the cost semantics needs: sizes drive the
collection charges, integers drive ``forRange`` trip counts, conditions select branches.

The *quotas* (``Quotas``) are facts the meter guarantees on every run prefix that has not yet been
stopped by a quota: no list is longer than ``maxListLength``, no value has more than
``maxTotalCollectionElements`` elements, no more than ``min(maxLoopIterations, maxFuel // 5)`` loop
iterations have run, and so on. They keep every value abstraction finite. ``spec/proofs.md``
explains why using them is sound for every verdict the prover gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dotboxd.core import costs
from dotboxd.core.limits import Limits
from dotboxd.core.types import (
    BOOL,
    I32,
    I64,
    ListType,
    MapType,
    OpaqueIdType,
    RecordType,
    SandboxType,
    ScalarType,
)
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN

from . import intervals
from .sym import ZERO, Cond, Poly, Sym, const

TEXT_SCALARS = frozenset({"String", "SandboxPath", "SandboxUri"})
INT_RANGES: dict[SandboxType, tuple[int, int]] = {I32: (I32_MIN, I32_MAX), I64: (I64_MIN, I64_MAX)}


@dataclass(frozen=True, slots=True)
class Quotas:
    """Limits the meter enforces, read from the policy, as the prover uses them."""

    fuel: int
    loop_iterations: int
    iterations: int  # loop iterations possible before the fuel or loop quota stops a run
    host_calls: int
    allocated_bytes: int
    list_length: int
    map_entries: int
    string_length: int
    elements: int
    string_bytes: int
    call_depth: int

    @classmethod
    def from_limits(cls, limits: Limits) -> Quotas:
        """Read from the typed limits record (``core.limits``), so a renamed or removed limit is a
        type error here rather than a string that no longer matches."""
        fuel = limits.max_fuel
        loops = limits.max_loop_iterations
        return cls(
            fuel=fuel,
            loop_iterations=loops,
            iterations=min(loops, fuel // costs.LOOP_ITERATION_FUEL),
            host_calls=limits.max_host_calls,
            allocated_bytes=limits.max_allocated_bytes,
            list_length=limits.max_list_length,
            map_entries=limits.max_map_entries,
            string_length=limits.max_string_length,
            elements=limits.max_total_collection_elements,
            string_bytes=limits.max_total_string_bytes,
            call_depth=limits.max_call_depth,
        )

    @property
    def nodes(self) -> int:
        """Every value has at most 1 + 2 x elements nodes (map entries hold two)."""
        return 1 + 2 * self.elements


@dataclass(frozen=True, slots=True)
class AInt:
    lo: Poly
    hi: Poly
    type: SandboxType

    @property
    def exact(self) -> Poly | None:
        return self.lo if self.lo == self.hi else None


@dataclass(frozen=True, slots=True)
class ABool:
    cond: Cond | None  # None: unknown


@dataclass(frozen=True, slots=True)
class AText:
    """A String, SandboxPath, SandboxUri or opaque-id value: only its UTF-16 length matters."""

    lo: Poly
    hi: Poly


@dataclass(frozen=True, slots=True)
class AList:
    lo: Poly
    hi: Poly
    elem: AVal | None  # None: the list never holds an element
    tb: Poly | None = None  # an upper bound of the string bytes of all its texts together (None: none known)


@dataclass(frozen=True, slots=True)
class AMap:
    lo: Poly
    hi: Poly
    key: AVal | None
    value: AVal | None
    tb: Poly | None = None  # as ``AList.tb``


@dataclass(frozen=True, slots=True)
class ARecord:
    fields: tuple[AVal, ...]
    tb: Poly | None = None  # as ``AList.tb``


@dataclass(frozen=True, slots=True)
class AOther:
    """F64, Guid, Unit: values whose content never influences a charge."""


AVal = AInt | ABool | AText | AList | AMap | ARecord | AOther
OTHER = AOther()
UNKNOWN_BOOL = ABool(None)


class Domain:
    """Operations on abstract values, bound to one Sym table and one policy's quotas."""

    def __init__(self, sym: Sym, quotas: Quotas) -> None:
        self.sym = sym
        self.q = quotas

    # --- construction ----------------------------------------------------------------------

    def int_const(self, value: int, t: SandboxType = I32) -> AInt:
        c = const(value)
        return AInt(c, c, t)

    def exact_int(self, p: Poly, t: SandboxType) -> AInt:
        return AInt(p, p, t)

    def type_range(self, t: SandboxType) -> tuple[int, int]:
        return INT_RANGES.get(t, (I64_MIN, I64_MAX))

    def size_cap(self, t: SandboxType) -> int:
        if isinstance(t, ListType):
            return self.q.list_length
        if isinstance(t, MapType):
            cap = self.q.map_entries
            return min(cap, 2) if t.key == BOOL else cap
        return self.q.string_length

    def top(self, t: SandboxType) -> AVal:
        """Any value of type ``t`` that a quota-free run can hold."""
        s = self.sym
        if t in INT_RANGES:
            lo, hi = INT_RANGES[t]
            return AInt(const(lo), const(hi), t)
        if t == BOOL:
            return UNKNOWN_BOOL
        if isinstance(t, ListType):
            return AList(ZERO, const(self.size_cap(t)), self.top(t.element))
        if isinstance(t, MapType):
            return AMap(ZERO, const(self.size_cap(t)), self.top(t.key), self.top(t.value))
        if isinstance(t, RecordType):
            return ARecord(tuple(self.top(f) for f in t.fields))
        if isinstance(t, OpaqueIdType) or (isinstance(t, ScalarType) and t.name in TEXT_SCALARS):
            return AText(ZERO, s.const(self.q.string_length))
        return OTHER

    # --- shape facts (upper bounds, capped by the quotas) ------------------------------------

    def nodes_hi(self, v: AVal | None) -> Poly:
        s = self.sym
        if v is None:
            return ZERO
        if isinstance(v, AList):
            p = s.add_const(s.mul(s.max(v.hi, ZERO), self.nodes_hi(v.elem)), 1)
        elif isinstance(v, AMap):
            p = s.add_const(s.mul(s.max(v.hi, ZERO), s.add(self.nodes_hi(v.key), self.nodes_hi(v.value))), 1)
        elif isinstance(v, ARecord):
            p = s.add_const(s.sum(self.nodes_hi(f) for f in v.fields), 1)
        else:
            return const(1)
        return s.min(p, const(self.q.nodes))

    def sbytes_hi(self, v: AVal | None) -> Poly:
        """String bytes held by a value (2 per UTF-16 unit of every text inside)."""
        s = self.sym
        if v is None:
            return ZERO
        if isinstance(v, AText):
            p = s.scale(s.max(v.hi, ZERO), costs.STRING_BYTES_PER_UNIT)
        elif isinstance(v, AList):
            p = s.mul(s.max(v.hi, ZERO), self.sbytes_hi(v.elem))
        elif isinstance(v, AMap):
            p = s.mul(s.max(v.hi, ZERO), s.add(self.sbytes_hi(v.key), self.sbytes_hi(v.value)))
        elif isinstance(v, ARecord):
            p = s.sum(self.sbytes_hi(f) for f in v.fields)
        else:
            return ZERO
        if isinstance(v, AList | AMap | ARecord) and v.tb is not None:
            p = s.min(p, v.tb)
        return s.min(p, const(self.q.string_bytes))

    def with_bytes(self, v: AVal | None, total: Poly) -> AVal | None:
        """``v`` known to hold at most ``total`` string bytes in all its texts together: a text is
        then at most ``total / 2`` units long, and a collection or record inside ``v`` (itself
        included) holds at most ``total`` bytes. Only ever narrows: the bound is met with what ``v``
        already knows."""
        s = self.sym
        if v is None:
            return None
        if isinstance(v, AText):
            return AText(v.lo, s.min(v.hi, s.fdiv(total, costs.STRING_BYTES_PER_UNIT)))
        if isinstance(v, AList):
            return AList(v.lo, v.hi, self.with_bytes(v.elem, total), _meet_tb(s, v.tb, total))
        if isinstance(v, AMap):
            key, value = self.with_bytes(v.key, total), self.with_bytes(v.value, total)
            return AMap(v.lo, v.hi, key, value, _meet_tb(s, v.tb, total))
        if isinstance(v, ARecord):
            fields = tuple(self.with_bytes(f, total) or OTHER for f in v.fields)
            return ARecord(fields, _meet_tb(s, v.tb, total))
        return v

    def bytes_of(self, v: AVal) -> Poly | None:
        """The direct total-bytes bound of a collection or record (None when it has none)."""
        return v.tb if isinstance(v, AList | AMap | ARecord) else None

    def sbytes_lo(self, v: AVal) -> Poly:
        """A lower bound of the string bytes (only texts are tracked from below)."""
        if isinstance(v, AText):
            return self.sym.scale(self.sym.max(v.lo, ZERO), costs.STRING_BYTES_PER_UNIT)
        return ZERO

    # --- joins ----------------------------------------------------------------------------

    def join(self, a: AVal | None, b: AVal | None, cond: Cond | None = None) -> AVal | None:
        """A value covering both; with an exact ``cond`` (a holds when cond, b otherwise) the
        result keeps exactness through ``ite``."""
        if a is None:
            return b
        if b is None or a == b:
            return a
        s = self.sym
        if isinstance(a, AInt) and isinstance(b, AInt):
            lo, hi = self._join_iv((a.lo, a.hi), (b.lo, b.hi), cond)
            return AInt(lo, hi, a.type)
        if isinstance(a, ABool) and isinstance(b, ABool):
            if cond is not None and a.cond is not None and b.cond is not None:
                return ABool(s.or_(s.and_(cond, a.cond), s.and_(s.not_(cond), b.cond)))
            return UNKNOWN_BOOL
        if isinstance(a, AText) and isinstance(b, AText):
            lo, hi = self._join_iv((a.lo, a.hi), (b.lo, b.hi), cond)
            return AText(lo, hi)
        if isinstance(a, AList) and isinstance(b, AList):
            lo, hi = self._join_iv((a.lo, a.hi), (b.lo, b.hi), cond)
            return AList(lo, hi, self.join(a.elem, b.elem), self._join_tb(a, b, cond))
        if isinstance(a, AMap) and isinstance(b, AMap):
            lo, hi = self._join_iv((a.lo, a.hi), (b.lo, b.hi), cond)
            tb = self._join_tb(a, b, cond)
            return AMap(lo, hi, self.join(a.key, b.key), self.join(a.value, b.value), tb)
        if isinstance(a, ARecord) and isinstance(b, ARecord) and len(a.fields) == len(b.fields):
            fields = tuple(self.join(x, y, cond) for x, y in zip(a.fields, b.fields, strict=True))
            tb = self._join_tb(a, b, cond)
            return ARecord(tuple(f if f is not None else OTHER for f in fields), tb)
        return OTHER

    def _join_tb(
        self, a: AList | AMap | ARecord, b: AList | AMap | ARecord, cond: Cond | None
    ) -> Poly | None:
        """A total-bytes bound covering both sides. When one side has a direct bound, the other
        side's bound is whatever ``sbytes_hi`` gives it (its own structure if it has none), so a
        merge never loses what one branch knew and never keeps it for the other."""
        if a.tb is None and b.tb is None:
            return None
        x = a.tb if a.tb is not None and b.tb is not None else self.sbytes_hi(a)
        y = b.tb if a.tb is not None and b.tb is not None else self.sbytes_hi(b)
        if x == y:
            return x
        return self.sym.ite(cond, x, y) if cond is not None else self.sym.max(x, y)

    def _join_iv(self, a: tuple[Poly, Poly], b: tuple[Poly, Poly], cond: Cond | None) -> tuple[Poly, Poly]:
        s = self.sym
        if cond is not None:
            return s.ite(cond, a[0], b[0]), s.ite(cond, a[1], b[1])
        return intervals.join(s, a, b)

    # --- elimination of loop atoms ------------------------------------------------------------

    def eliminate(self, v: AVal | None, elim: Mapping[int, tuple[Poly, Poly]]) -> AVal | None:
        """``v`` with every atom in ``elim`` replaced by its range (lower ends down, upper up)."""
        if v is None or not elim:
            return v
        s = self.sym
        if isinstance(v, AInt):
            return AInt(s.bound(v.lo, elim, False), s.bound(v.hi, elim, True), v.type)
        if isinstance(v, ABool):
            if v.cond is None:
                return v
            return ABool(s.bound_cond_free(v.cond, elim))
        if isinstance(v, AText):
            return AText(s.bound(v.lo, elim, False), s.bound(v.hi, elim, True))
        tb = None if not isinstance(v, AList | AMap | ARecord) or v.tb is None else s.bound(v.tb, elim, True)
        if isinstance(v, AList):
            lo, hi = s.bound(v.lo, elim, False), s.bound(v.hi, elim, True)
            return AList(lo, hi, self.eliminate(v.elem, elim), tb)
        if isinstance(v, AMap):
            return AMap(
                s.bound(v.lo, elim, False),
                s.bound(v.hi, elim, True),
                self.eliminate(v.key, elim),
                self.eliminate(v.value, elim),
                tb,
            )
        if isinstance(v, ARecord):
            return ARecord(tuple(self.eliminate(f, elim) or OTHER for f in v.fields), tb)
        return v

    def mentions(self, v: AVal | None, atoms: frozenset[int]) -> bool:
        s = self.sym
        if v is None or isinstance(v, AOther):
            return False
        if isinstance(v, ABool):
            return v.cond is not None and bool(s.cond_atoms(v.cond) & atoms)
        if isinstance(v, AList | AMap | ARecord) and v.tb is not None and s.atoms(v.tb) & atoms:
            return True
        if isinstance(v, ARecord):
            return any(self.mentions(f, atoms) for f in v.fields)
        if bool((s.atoms(v.lo) | s.atoms(v.hi)) & atoms):
            return True
        if isinstance(v, AList):
            return self.mentions(v.elem, atoms)
        if isinstance(v, AMap):
            return self.mentions(v.key, atoms) or self.mentions(v.value, atoms)
        return False


def _meet_tb(s: Sym, known: Poly | None, total: Poly) -> Poly:
    return total if known is None or known == total else s.min(known, total)
