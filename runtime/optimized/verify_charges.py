"""Verifier rule 26 (verifseg): the fuel constants of generated code are the ones its sites charge.

Why: the other rules prove confinement and bounded work, but a fuel amount is just an integer in
the tree, and the code generator is not trusted. An adversarial review (issue 16) lowered a
segment's ``f -= 5`` to ``f -= 1``, an owned add's or a concatenation's fixed fuel, and a fast list
chunk's per-iteration fuel or a fault stub's fuel, and every such module passed. So each amount is
now recomputed from what it pays for - the fuel segments of the artifact's site table, which the
exact stubs replay charge by charge, and the ``core.costs`` formulas - and any other constant is
refused:

* **segments**: ``f -= c`` (a constant) is followed by ``if f < 0: _s_fx(R, f, lr, s)`` and ``c``
  is the total of segment ``s``; ``_s_fx`` stands nowhere else;
* **owned adds** (section 4.2.3): ``T = L + K + (L + 2) // 64`` tested before ``_p_push`` has
  ``K = segment + 3`` (``costs.list_add_flat_fuel``), the segment the add's ``_s_lox`` pays;
* **owned concatenations** (section 4.2.5): ``q = FIXED + 2 * c`` has ``FIXED`` equal to the two
  segments its ``_s_sox*`` pays plus the producer's and the concatenation's fixed fuel
  (``text_parts``), and ``2`` the per-unit fuel; a pre-checked fast text chunk (rule 21) passes the
  same ``FIXED`` and appends exactly the checked form's piece;
* **fast bulk chunks**: ``f -= n * base (+ tally)`` at completion has ``base`` at most the plan's
  worst fuel of an iteration (rule 8), and every fast fault site and every exit of the chunk uses
  that ``base`` and that tally (``fast_chunk``);
* **view reads and owned-map forms** (sections 4.2.2, 4.2.4): the fuel slot is the segment plus
  ``read_fuel`` (``copy_fuel`` and the shape walk for an update) of the list's or map's size slot;
* **fast list chunks** (rule 22): the chunk's fuel ``t = n * P (+ _p_lcadds(L, n))`` has ``P`` equal
  to what one iteration of the checked chunk after it charges (its segments, its owned add's
  segment, its view reads' fuel slots), and each fault stub inside gets
  ``f - (v - k) * P - A (- _p_lcadds(L, _p_len(b) - L))`` with ``A`` what the checked iteration
  charged before the same fault site; a fault site the checked chunk does not have is refused.

What this does not prove: that a segment's charges in the site table are the plan's (a fault
site's location and operation are, ``verify_overflow``), the ``ahead`` constants of fast-chunk
fault sites and exits, a fast chunk's base beyond ``base <= worst``, and the tally sums and fault
fuel of the pre-checked map chunks (rule 20).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from dotboxd.core import costs

from . import pyast as P
from .errors import VerifierFailure
from .tables import CHARGES, CHUNK_OP, Tables
from .text_parts import CONCAT_FIXED_FUEL, LITERAL_FUEL, TO_STRING_FUEL, UNIT_FUEL
from .treeops import nodes

_ADD_COPY: Final = 3
"""``costs.list_add_flat_fuel(s) = s + 3 + (s + 2) // 64``: the add's fuel past its segment."""
assert all(costs.list_add_flat_fuel(s) == s + _ADD_COPY + (s + 2) // 64 for s in (0, 1, 62, 63, 64, 4096))
_READ_BASE: Final = costs.COLLECTION_BASE_FUEL
"""``costs.read_fuel(s) = s + 2``: an inline read's (a view's, an owned map's) fuel past its segment."""
_SET_BASE: Final = costs.COLLECTION_BASE_FUEL + 1
"""``costs.copy_fuel(s, 1) = s + 3``: an owned ``map.set``'s copy fuel."""
_ENTRIES_PER_WALK: Final = costs.SHAPE_WALK_NODES_PER_FUEL // 2
"""A flat map of ``c`` entries has ``1 + 2c`` shape nodes: its walk is ``c // 32`` fuel."""
assert all(
    costs.read_fuel(s) == s + _READ_BASE
    and costs.copy_fuel(s, 1) == s + _SET_BASE
    and costs.shape_walk_fuel(1 + 2 * s) == s // _ENTRIES_PER_WALK
    for s in (1, 2, 31, 32, 33, 63, 64, 4096)
)
_MAP_SET: Final = 2
"""``owned_map_stubs.EXACT_OPS.index("map.set")``: the update; the other operations are reads."""
GUARDED: Final = "guarded"
ELSEWHERE: Final = "elsewhere"
"""Where a statement stands: right in an ``if`` body (not deeper), or anywhere else."""
Places = dict[int, tuple[list[Any], int, Any]]
"""``id`` of an ``if`` -> its block, its index there, and the ``if`` whose body that block is (or None)."""
PRODUCER_FUEL: Final = {"_s_sox": TO_STRING_FUEL, "_s_soxl": LITERAL_FUEL, "_s_soxv": 0}
"""The exact fallback of an owned concatenation (its piece's kind) -> the producer's fixed fuel."""
LIST_ADDS: Final = "_p_lcadds"


def located(message: str, node: ast.AST | None) -> VerifierFailure:
    """A refusal that names the line of ``node`` (the generated source's, or the parsed cache's)."""
    where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
    return VerifierFailure(f"{message}{where}")


def _fail(message: str, node: ast.AST | None = None) -> VerifierFailure:
    return located(f"rule 26 (charges): {message}", node)


_KINDS: Final[dict[type, type]] = dict(P.POSITIONED)


def node_kind(node: Any) -> type:
    """The ``ast`` class a node is (its positioned twin's base), or the type of a non-node."""
    cls = type(node)
    return _KINDS.get(cls, cls)


_kind = node_kind


def _name(node: Any, ident: str | None = None) -> str | None:
    if _kind(node) is ast.Name and type(node.id) is str and (ident is None or node.id == ident):
        return str(node.id)
    return None


def int_constant(node: Any) -> int | None:
    """An int constant, also as the disk cache's source spells a negative one (``-N``)."""
    if _kind(node) is ast.Constant and type(node.value) is int:
        return int(node.value)
    if _kind(node) is ast.UnaryOp and type(node.op) is ast.USub:
        operand = node.operand
        if _kind(operand) is ast.Constant and type(operand.value) is int:
            return -int(operand.value)
    return None


def _binop(node: Any, op: type[ast.operator]) -> tuple[Any, Any] | None:
    return (node.left, node.right) if _kind(node) is ast.BinOp and type(node.op) is op else None


def _call(node: Any, callee: str | None = None) -> Any:
    if (
        _kind(node) is ast.Call
        and _name(node.func) is not None
        and (callee is None or node.func.id == callee)
    ):
        return node
    return None


def _assign(stmt: Any) -> tuple[str, Any] | None:
    if _kind(stmt) is ast.Assign and len(stmt.targets) == 1 and _name(stmt.targets[0]) is not None:
        return str(stmt.targets[0].id), stmt.value
    return None


_int = int_constant


def same_tree(a: Any, b: Any) -> bool:
    """Structural equality, blind to source positions (plain and positioned classes alike) and to
    how a negative int is spelled (``Constant(-N)`` generated, ``-N`` parsed from the cache)."""
    if _kind(a) is not _kind(b):
        left, right = _int(a), _int(b)
        return left is not None and left == right
    if _kind(a) is ast.Name:
        return bool(a.id == b.id)
    if _kind(a) is ast.Constant:
        return type(a.value) is type(b.value) and bool(a.value == b.value)
    if not isinstance(a, ast.AST):
        return bool(a == b)
    for name in a._fields:
        if name == "ctx":
            continue
        left, right = getattr(a, name, None), getattr(b, name, None)
        if isinstance(left, list) or isinstance(right, list):
            if not (isinstance(left, list) and isinstance(right, list) and len(left) == len(right)):
                return False
            if not all(same_tree(x, y) for x, y in zip(left, right, strict=True)):
                return False
        elif isinstance(left, ast.AST) or isinstance(right, ast.AST):
            if not same_tree(left, right):
                return False
        elif left != right:
            return False
    return True


@dataclass(slots=True)
class Amount:
    """A fuel amount as a sum: a constant and fuel slots (each with its multiplicity)."""

    const: int = 0
    slots: Counter[str] = field(default_factory=Counter)

    def plus(self, other: Amount) -> Amount:
        return Amount(self.const + other.const, self.slots + other.slots)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Amount) and self.const == other.const and +self.slots == +other.slots

    __hash__ = None  # type: ignore[assignment]


def amount(node: Any) -> Amount | None:
    """``c``, ``q`` or a ``+`` of them as an ``Amount`` (None for anything else)."""
    value = _int(node)
    if value is not None:
        return Amount(value)
    ident = _name(node)
    if ident is not None:
        return Amount(0, Counter({ident: 1}))
    pair = _binop(node, ast.Add)
    if pair is None:
        return None
    left, right = amount(pair[0]), amount(pair[1])
    return left.plus(right) if left is not None and right is not None else None


class ChargeRules:
    """Rule 26 over one generated function, after the other rules accepted its shape."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.fx_ok: set[int] = set()
        """The ``_s_fx`` calls found right after their segment's payment."""
        self.stores: dict[str, list[Any]] = {}
        """Every slot of the function -> the values of its plain ``slot = value`` stores (``None``
        for a store of another kind: a tuple or ``for`` target)."""
        self.placed: dict[int, str] = {}
        """``id`` of each call that is a plain assignment's value -> where that statement stands
        (``GUARDED`` right in an ``if`` body, ``ELSEWHERE``)."""
        self.if_places: Places = {}
        """Every ``if`` of the function -> where it stands (rule 27 reads the statement before it)."""
        self.fault_calls: list[tuple[Any, Any]] = []
        """Every fault stub call of the function (``_s_f<k>``, ``_s_c<k>``) and the chunk it stands
        in (the verifier's call check reports each, with ``refund_chunk``)."""
        self.ifs: list[Any] = []
        """Every ``if`` of the function, for rule 27 (``verify_overflow.check_tests``)."""
        self.fx_calls: list[ast.Call] = []
        """Every ``_s_fx`` call of the function (the verifier's call check reports each)."""
        self.text_chunks: list[tuple[Any, Any]] = []
        """Approved fast text chunks (rule 21) of the function and the statement after each."""
        self.chunk_counts: set[str | None] = set()
        """The reserved-count names of the function's bulk chunks (a fast stub names one of them)."""
        self.fast_chunks: list[tuple[Any, int, bool]] = []
        """Every bulk chunk's ``for``, the plan's worst fuel of one of its iterations, and whether it
        is a block's pool chunk (rule 24), which always pays its iterations when it completes."""
        self.list_chunks: list[tuple[list[ast.stmt], int, Any]] = []
        """Approved fast list chunks (rule 22): the reservation's block, the checked chunk's index,
        the fast loop."""

    def total(self, site: Any, node: ast.AST) -> int:
        """The total of fuel segment ``site`` (a constant index of a ``charges`` site)."""
        index = _int(site)
        sites = self.tables.sites
        if index is None or not 0 <= index < len(sites) or sites[index][0] != CHARGES:
            raise _fail("a fuel amount names no fuel segment", node)
        return sum(int(c) for c in sites[index][1])

    # --- every block ------------------------------------------------------------------------------

    def function(self, fn: ast.FunctionDef) -> None:
        """One walk over the statements (expressions are not entered): the segments, every slot's
        plain stores, every ``if`` (rule 27) and where each assigned call stands (``placed``); the
        forms that read a slot stored elsewhere are checked once the walk is done."""
        stack: list[tuple[list[ast.stmt], str, Any]] = [(fn.body, ELSEWHERE, None)]
        ifs, stores, placed, places = self.ifs, self.stores, self.placed, self.if_places
        forms: list[tuple[Any, list[ast.stmt], int]] = []
        stmt: Any
        while stack:
            block, where, owner = stack.pop()
            for index, stmt in enumerate(block):
                kind = _kind(stmt)
                if kind is ast.Assign:
                    target = stmt.targets[0]
                    if len(stmt.targets) == 1 and _kind(target) is ast.Name:
                        stores.setdefault(target.id, []).append(stmt.value)
                        if _kind(stmt.value) is ast.Call:
                            placed[id(stmt.value)] = where
                    else:
                        for element in getattr(target, "elts", ()):
                            stores.setdefault(getattr(element, "id", ""), []).append(None)
                elif kind is ast.AugAssign:
                    if index + 1 < len(block) and _exhausted(block[index + 1]):
                        self.segment(stmt, block[index + 1])
                    elif type(stmt.op) is ast.Sub and _int(stmt.value) is not None:
                        raise _fail("a segment's `f -= c` is followed by its exhaustion check", stmt)
                elif kind is ast.If:
                    ifs.append(stmt)
                    places[id(stmt)] = (block, index, owner)
                    if stmt.orelse:
                        forms.append((stmt, block, index))
                        stack.append((stmt.orelse, ELSEWHERE, None))
                    stack.append((stmt.body, GUARDED, stmt))
                elif kind is ast.For or kind is ast.While:
                    if kind is ast.For:
                        stores.setdefault(getattr(stmt.target, "id", ""), []).append(None)
                    stack.append((stmt.body, ELSEWHERE, None))
                    if stmt.orelse:
                        stack.append((stmt.orelse, ELSEWHERE, None))
        for call in self.fx_calls:
            if id(call) not in self.fx_ok:
                raise _fail("_s_fx stands only in `if f < 0:` right after its segment's `f -= c`", call)
        for stmt, block, index in forms:
            self.if_(stmt, block, index)

    def literal(self, slot: str | None) -> Any:
        """The text-table index of ``slot`` when every store of it is ``_s_tlit(R, index)`` with
        that one index (a literal's text fetched before its loop), else None."""
        values = self.stores.get(slot, []) if slot is not None else []
        fetches = [_call(v, "_s_tlit") for v in values]
        first = fetches[0] if fetches else None
        if first is None or len(first.args) != 2:
            return None
        if all(c is not None and len(c.args) == 2 and same_tree(c.args[1], first.args[1]) for c in fetches):
            return first.args[1]
        return None

    def check(self, fn: ast.FunctionDef) -> None:
        """Every rule-24 check of ``fn``, once the other rules accepted its shape, including the
        fast chunks the verifier's walk reported (``text_chunks``, ``list_chunks``, ``fast_chunks``);
        ``reset`` forgets them."""
        self.fx_ok, self.stores, self.ifs, self.placed, self.if_places = set(), {}, [], {}, {}
        self.function(fn)
        for form, checked in self.text_chunks:
            self.text_chunk(form, checked)
        for body, checked_at, loop in self.list_chunks:
            self.list_chunk(body, checked_at, loop)
        self.chunk_counts = set()
        for loop, worst, pooled in self.fast_chunks:
            self.fast_chunk(loop, worst, pooled)
        for call, chunk in self.fault_calls:
            if _is_chunk_stub(call.func.id) and (chunk is None or chunk[0] not in self.chunk_counts):
                raise _fail("a fast fault stub outside a chunk the plan reserves", call)

    def reset(self) -> None:
        """Forget the function just checked (rule 27 has read its ``ifs``, ``placed`` and fault
        calls by now): the next function's calls and chunks are reported afresh."""
        self.text_chunks.clear()
        self.list_chunks.clear()
        self.fast_chunks.clear()
        self.fx_calls.clear()
        self.fault_calls.clear()
        self.ifs, self.placed, self.stores, self.if_places = [], {}, {}, {}

    # --- fast bulk chunks: one base per chunk, within the plan's worst ------------------------------

    def fast_chunk(self, loop: Any, worst: int, pooled: bool = False) -> None:
        """A fast chunk pays ``f -= n * base (+ tally)`` when it completes: ``base`` is at most the
        plan's worst fuel of an iteration (rule 8); every fast fault site of its body carries that
        ``base`` and its stub gets ``f`` less the completion's tally (``f`` itself without one); every
        exit's store of ``f`` is ``f - tally - j * base - A`` with the same tally and ``base``
        (``A``, what the iteration spent so far, is not tied). A chunk without that completion (a
        checked chunk) may hold no fast fault stub; a block's pool chunk (``pooled``, rule 24) has no
        checked form, so it must have that completion: its iterations are paid nowhere else."""
        counted: Any = loop.iter.args[-1]
        count = _name(counted) if len(loop.iter.args) == 1 else _name(_binop(counted, ast.Add)[1])  # type: ignore[index]
        self.chunk_counts.add(count)
        stubs = [
            call
            for call, chunk in self.fault_calls
            if _is_chunk_stub(call.func.id) and chunk is not None and chunk[0] == count
        ]
        first: Any = loop.orelse[0] if loop.orelse else None
        paid: Any = first.body[0] if _kind(first) is ast.If and first.body else None
        spent = paid.value if _kind(paid) is ast.AugAssign and _name(paid.target, "f") else None
        tally = _binop(spent, ast.Add)
        product = _binop(tally[0] if tally is not None else spent, ast.Mult)
        base = _int(product[1]) if product is not None and _name(product[0], count) else None
        if base is None or type(paid.op) is not ast.Sub:
            if pooled:
                raise _fail("a pool chunk pays `f -= n * base` when it completes", loop)
            if stubs:
                raise _fail("a chunk with fast fault stubs pays `f -= n * base` when it completes", loop)
            return
        if not 0 <= base <= worst:
            raise _fail(f"a fast chunk's base {base} is past the plan's worst fuel of an iteration", loop)
        extra = tally[1] if tally is not None else None
        for call in stubs:
            at = fault_site_at(call.func.id) or 3
            site = _int(call.args[at]) if len(call.args) > at else None
            entry = (
                self.tables.sites[site] if site is not None and 0 <= site < len(self.tables.sites) else None
            )
            if entry is None or entry[0] != CHUNK_OP or entry[1][1] != base:
                raise _fail("a fast fault site's base is not its chunk's", call)
            if not _tallied(call.args[1], extra):
                raise _fail("a fast fault stub's fuel is not f less its chunk's tally", call)
        iteration = (
            P.name(loop.target.id)
            if len(loop.iter.args) == 1
            else P.sub(P.name(loop.target.id), loop.iter.args[0])
        )
        for stmt in _statements(loop.body):
            found = _assign(stmt)
            if found is not None and found[0] == "f" and not _exit_fuel(found[1], extra, iteration, base):
                raise _fail("a fast chunk's exit stores f other than less its tally and j * base", stmt)

    def segment(self, stmt: Any, test: Any) -> None:
        """``f -= c`` then ``if f < 0: _s_fx(R, f, lr, s)``: ``c`` is segment ``s``'s total."""
        call = _call(test.body[0].value, "_s_fx")
        paid = _int(stmt.value)
        if not (
            _name(stmt.target, "f") and type(stmt.op) is ast.Sub and paid is not None and len(call.args) == 4
        ):
            raise _fail("a segment is paid as `f -= <its total>`", stmt)
        if paid != self.total(call.args[3], call):
            raise _fail(f"a segment pays {paid}, not its charges' total", stmt)
        self.fx_ok.add(id(call))

    def if_(self, stmt: Any, block: list[ast.stmt], index: int) -> None:
        orelse = stmt.orelse
        fallback = _call(orelse[0].value) if len(orelse) == 1 and _kind(orelse[0]) is ast.Expr else None
        callee = fallback.func.id if fallback is not None else None
        if callee == "_s_lox":
            self.owned_add(stmt, block, index, fallback)
        elif callee in PRODUCER_FUEL:
            self.concat(stmt, block, index, fallback)
        elif callee == "_s_mox":
            self.owned_map_op(stmt, block, index, fallback)
        elif _is_view_read(stmt):
            self.view_read(stmt, orelse[0].value)

    def only_store(self, slot: str | None) -> Any:
        """The one value ``slot`` is ever assigned in the function (None: not exactly one)."""
        values = self.stores.get(slot, []) if slot is not None else []
        return values[0] if len(values) == 1 else None

    def view_read(self, stmt: Any, fallback: Any) -> None:
        """``if f >= q and i >= 0 and i < s: f = f - q; t = g[i] else: t, f = _s_i_list_get(R, f, lr,
        site, xs, i)``: ``q`` is stored once, as ``r + T`` (``r`` when ``T`` is 0) with ``T`` the
        segment, ``r = _p_rfuel(s)`` and ``s = _p_lsize(xs)``, the stub's own list."""
        fuel = _fuel_slot(stmt.test)
        segment = self.total(fallback.args[3], fallback) if len(fallback.args) == 6 else None
        value = self.only_store(fuel)
        pair = _binop(value, ast.Add)
        rate = _name(pair[0]) if pair is not None else (fuel if segment == 0 else None)
        if pair is not None and _int(pair[1]) != segment:
            rate = None
        read = _call(self.only_store(rate), "_p_rfuel")
        size = _name(read.args[0]) if read is not None and len(read.args) == 1 else None
        measured = _call(self.only_store(size), "_p_lsize")
        tested = [
            c.comparators[0]
            for c in stmt.test.values[1:]
            if _kind(c) is ast.Compare and type(c.ops[0]) is ast.Lt
        ]
        if (
            measured is None
            or len(measured.args) != 1
            or not same_tree(measured.args[0], fallback.args[4])
            or len(tested) != 1
            or _name(tested[0]) != size
        ):
            raise _fail("a view read's fuel is its segment plus read_fuel of the list it reads", stmt)

    def measures(self, size: str | None, table: Any) -> bool:
        """``size`` is the map's size slot: taken as ``_p_mlen(table)`` and otherwise stored only
        from names (the counts its updates leave, rule 20)."""
        values: list[Any] = self.stores.get(size, [None]) if size is not None else [None]
        takes: list[Any] = [v for v in values if _call(v, "_p_mlen") is not None and len(v.args) == 1]
        return (
            len(takes) == 1
            and same_tree(takes[0].args[0], table)
            and all(v is takes[0] or _name(v) is not None for v in values)
        )

    def owned_map_op(self, stmt: Any, block: list[ast.stmt], index: int, fallback: Any) -> None:
        """An owned-map form (section 4.2.4): a read's fuel is ``size + 2 + T``, an update's
        ``size + 3 + T + c // 32``, ``T`` the segment its ``_s_mox`` pays and ``size`` the map's
        ``_p_mlen`` slot."""
        args = fallback.args
        table, op = (args[4], _int(args[5])) if len(args) > 5 else (None, None)
        fuel = _fuel_slot(stmt.test)
        defined = _defined_before(block, index, fuel)
        total = self.total(args[3], fallback) if len(args) > 3 else None
        walk = None
        if op == _MAP_SET:
            outer = _binop(defined, ast.Add)
            walk = _binop(outer[1], ast.FloorDiv) if outer is not None else None
            defined = (
                outer[0]
                if outer is not None and walk is not None and _int(walk[1]) == _ENTRIES_PER_WALK
                else None
            )
        head = _binop(defined, ast.Add)
        size = _name(head[0]) if head is not None else None
        base = _SET_BASE if op == _MAP_SET else _READ_BASE
        if head is None or total is None or _int(head[1]) != base + total or not self.measures(size, table):
            raise _fail("an owned map's fuel is its size, read or copy fuel and its segment", stmt)

    def owned_add(self, stmt: Any, block: list[ast.stmt], index: int, fallback: Any) -> None:
        """``T = L + K + (L + 2) // 64; if f >= T and L < room: f = f - T; _p_push(b, x) else
        _s_lox(R, f, lr, s, b, x)``: ``K`` is segment ``s`` plus the add's copy."""
        fuel = _fuel_slot(stmt.test)
        defined = _defined_before(block, index, fuel)
        form = _add_fuel(defined)
        if form is None or len(fallback.args) != 6:
            raise _fail("an owned add's fuel is `L + K + (L + 2) // 64`", stmt)
        if form != self.total(fallback.args[3], fallback) + _ADD_COPY:
            raise _fail("an owned add's fuel is not its segment plus list_add_flat_fuel", stmt)

    def concat(self, stmt: Any, block: list[ast.stmt], index: int, fallback: Any) -> None:
        """``q = FIXED + 2 * c`` before an owned concatenation: ``FIXED`` is its two segments plus the
        producer's and the concatenation's fixed fuel."""
        fuel = _fuel_slot(stmt.test)
        defined = _defined_before(block, index, fuel)
        pair = _binop(defined, ast.Add)
        per_unit = _binop(pair[1], ast.Mult) if pair is not None else None
        fixed = _int(pair[0]) if pair is not None else None
        if fixed is None or per_unit is None or _int(per_unit[0]) != UNIT_FUEL or _name(per_unit[1]) is None:
            raise _fail(f"an owned concatenation's fuel is `FIXED + {UNIT_FUEL} * c`", stmt)
        if len(fallback.args) != 7:
            raise _fail("an owned concatenation's fallback takes both segments", fallback)
        want = (
            self.total(fallback.args[3], fallback)
            + self.total(fallback.args[4], fallback)
            + PRODUCER_FUEL[fallback.func.id]
            + CONCAT_FIXED_FUEL
        )
        if fixed != want:
            raise _fail(f"an owned concatenation charges {fixed} fixed fuel, its segments say {want}", stmt)

    # --- rule 21: the fast text chunk appends the checked form's piece at its fuel ----------------

    def text_chunk(self, form: Any, checked: Any) -> None:
        """``form`` the approved ``if _s_strfits(...)``, ``checked`` the statement after it (the
        checked chunk): the same ``FIXED``, the same piece, from the same operand or literal slot."""
        if _kind(checked) is not ast.For:
            raise _fail("a fast text chunk is followed by its checked chunk", form)
        forms = [s for s in checked.body if _kind(s) is ast.If and len(s.orelse) == 1]
        concat: Any = forms[0] if len(forms) == 1 else None
        fallback = (
            _call(concat.orelse[0].value)
            if concat is not None and _kind(concat.orelse[0]) is ast.Expr
            else None
        )
        if fallback is None or fallback.func.id not in ("_s_sox", "_s_soxl") or len(fallback.args) != 7:
            raise _fail("a fast text chunk's checked chunk is one owned concatenation", form)
        fuel = _fuel_slot(concat.test)
        defined = _defined_before(checked.body, checked.body.index(concat), fuel)
        pair = _binop(defined, ast.Add)
        fixed = _int(pair[0]) if pair is not None else None
        if fixed is None or _int(form.test.args[3]) != fixed:
            raise _fail("a fast text chunk charges the checked form's FIXED", form)
        piece = form.body[0].body[0].value.args[1]
        operand = fallback.args[6]
        if fallback.func.id == "_s_sox":
            number = _call(piece)
            if number is None or len(number.args) != 1 or not same_tree(number.args[0], operand):
                raise _fail("a fast text chunk appends the text of the checked form's number", form)
            return
        appended = [
            s.value.args[1]
            for s in concat.body
            if _kind(s) is ast.Expr and _call(s.value, "_p_part") is not None and len(s.value.args) == 2
        ]
        slot = _name(piece)
        index = self.literal(slot)
        if len(appended) != 1 or _name(appended[0]) != slot or index is None or not same_tree(index, operand):
            raise _fail("a fast text chunk appends the checked form's literal, fetched by _s_tlit", form)

    # --- rule 22: a fast list chunk's fuel is its checked chunk's -------------------------------------

    def list_chunk(self, body: list[ast.stmt], checked_at: int, fast_loop: Any) -> None:
        """``body`` the reservation's block: the fast chunk's ``if`` at ``checked_at - 1``, its fuel
        slot before it, the checked chunk at ``checked_at``."""
        quick: Any = body[checked_at - 1]
        total_slot = _name(quick.test.values[1].comparators[0])
        defined = _defined_before(body, checked_at - 1, total_slot)
        checked: Any = body[checked_at]
        per, prefixes, adds = self.iteration(checked.body)
        measured = [found for stmt in body[1 : checked_at - 1] if (found := _assign(stmt)) is not None]
        length = next((slot for slot, value in measured if _call(value, "_p_len") is not None), None)
        terms = _binop(defined, ast.Add) if adds else None
        product = _binop(terms[0] if terms is not None else defined, ast.Mult)
        count = _name(quick.test.values[0])
        if product is None or _name(product[0]) != count or amount(product[1]) != per:
            raise _fail("a fast list chunk's fuel is n times what a checked iteration charges", quick)
        if adds:
            lcadds = _call(terms[1], LIST_ADDS) if terms is not None else None
            if lcadds is None or len(lcadds.args) != 2 or _name(lcadds.args[0]) != length:
                raise _fail("a fast list chunk's adds are charged by _p_lcadds(L, n)", quick)
            if _name(lcadds.args[1]) != count:
                raise _fail("a fast list chunk's adds are charged by _p_lcadds(L, n)", quick)
        ivar, start = fast_loop.target.id, fast_loop.iter.args[0]
        for node in nodes(fast_loop):
            call = _call(node)
            if call is None or not _is_fault_stub(call.func.id):
                continue
            site = _int(call.args[3]) if len(call.args) > 3 else None
            before = prefixes.get(site) if site is not None else None
            if before is None:
                raise _fail("a fast list chunk's fault site is not one of its checked chunk's", call)
            if not _exact_fuel(call.args[1], ivar, start, product[1], before, length if adds else None):
                raise _fail("a fast list chunk's fault stub gets other fuel than the exact one", call)

    def iteration(self, checked: list[Any]) -> tuple[Amount, dict[int, Amount], bool]:
        """What one checked iteration charges, the charge before each fault site, whether it adds."""
        charged = Amount()
        prefixes: dict[int, Amount] = {}
        adds = False
        for stmt in checked:
            for node in nodes(stmt):
                call = _call(node)
                if call is not None and _is_fault_stub(call.func.id) and len(call.args) > 3:
                    site = _int(call.args[3])
                    if site is not None:
                        prefixes.setdefault(site, Amount(charged.const, Counter(charged.slots)))
            kind = _kind(stmt)
            if kind is ast.AugAssign and _int(stmt.value) is not None:
                charged = charged.plus(Amount(int(stmt.value.value)))
            elif kind is ast.If and _kind(stmt.body[0]) is ast.Assign and _name(stmt.body[0].targets[0], "f"):
                spent = _binop(stmt.body[0].value, ast.Sub)
                slot = _name(spent[1]) if spent is not None else None
                fallback = (
                    _call(stmt.orelse[0].value)
                    if len(stmt.orelse) == 1 and _kind(stmt.orelse[0]) is ast.Expr
                    else None
                )
                if fallback is not None and fallback.func.id == "_s_lox" and slot is not None:
                    adds = True
                    charged = charged.plus(Amount(self.total(fallback.args[3], fallback)))
                elif slot is not None:
                    charged = charged.plus(Amount(0, Counter({slot: 1})))
        return charged, prefixes, adds


def _statements(block: list[Any]) -> list[Any]:
    """Every statement of ``block`` and of the blocks nested in it (expressions not entered)."""
    out: list[Any] = []
    stack = [block]
    while stack:
        for stmt in stack.pop():
            out.append(stmt)
            for name in ("body", "orelse"):
                inner = getattr(stmt, name, None)
                if type(inner) is list and inner:
                    stack.append(inner)
    return out


def _subtracted(node: Any) -> tuple[Any, list[Any]]:
    """``x - a - b - ...`` as ``(x, [a, b, ...])`` (a left-nested chain, in source order)."""
    terms: list[Any] = []
    while (pair := _binop(node, ast.Sub)) is not None:
        terms.append(pair[1])
        node = pair[0]
    terms.reverse()
    return node, terms


def _exit_fuel(value: Any, extra: Any, iteration: Any, base: int) -> bool:
    """``f - tally - j * base - A`` (``+ A`` too; no tally term when the chunk keeps none)."""
    ahead = _binop(value, ast.Add)
    if ahead is not None and _int(ahead[1]) is not None:  # ``... + A``: the last term is added
        value = ahead[0]
    else:
        ahead = None
    root, terms = _subtracted(value)
    if _name(root, "f") is None or not terms:
        return False
    if extra is not None:
        (want, counted), (got, read) = _rate(extra), _rate(terms[0])
        if want != got or (_name(counted) is not None and not same_tree(counted, read)):
            return False
        terms = terms[1:]
    done = _binop(terms[0], ast.Mult) if terms else None
    if done is None or not same_tree(done[0], iteration) or _int(done[1]) != base:
        return False
    return len(terms) == 1 or (len(terms) == 2 and ahead is None and _int(terms[1]) is not None)


def _rate(node: Any) -> tuple[int, Any]:
    """``k * x`` -> (k, x); anything else -> (1, itself)."""
    pair = _binop(node, ast.Mult)
    factor = _int(pair[0]) if pair is not None else None
    return (factor, pair[1]) if pair is not None and factor is not None else (1, node)


def _tallied(fuel: Any, extra: Any) -> bool:
    """``f`` (no tally), or ``f - u * t`` for a completion paying ``+ u * t`` (a periodic tally's
    ``S * hits(x)``: the same ``S``; its count is read at another ``x``, which is not compared)."""
    if extra is None:
        return _name(fuel, "f") is not None
    pair = _binop(fuel, ast.Sub)
    if pair is None or _name(pair[0], "f") is None:
        return False
    (want, counted), (got, read) = _rate(extra), _rate(pair[1])
    if want != got:
        return False
    return _name(counted) is None or same_tree(counted, read)


def _is_chunk_stub(callee: str) -> bool:
    """A fast chunk's fault stub: ``_s_c<k>`` of a reserved chunk, ``_s_bk<k>`` of a pool chunk."""
    return fault_site_at(callee) is not None and not _is_fault_stub(callee)


def fault_site_at(callee: str) -> int | None:
    """Where a fault stub's site id stands among its arguments: ``_s_f<k>`` and ``_s_c<k>`` take
    ``(R, fuel, lr or j, site, ...)``, a block's ``_s_bk<k>`` ``(R, fuel, j, lr + bk, site, ...)``;
    None for any other callee."""
    if len(callee) == 5 and callee[:4] in ("_s_f", "_s_c") and callee[4] in "123":
        return 3
    if len(callee) == 6 and callee.startswith("_s_bk") and callee[5] in "123":
        return 4
    return None


def _is_fault_stub(callee: str) -> bool:
    return len(callee) == 5 and callee.startswith("_s_f") and callee[4] in "123"


def _is_view_read(stmt: Any) -> bool:
    """``if ...: f = f - q; t = g[i] else: t, f = _s_i_list_get(...)`` (rule 18's inline read)."""
    orelse, body = stmt.orelse, stmt.body
    return (
        len(orelse) == 1
        and _kind(orelse[0]) is ast.Assign
        and _call(orelse[0].value, "_s_i_list_get") is not None
        and len(body) == 2
        and _kind(body[1]) is ast.Assign
        and _kind(body[1].value) is ast.Subscript
    )


def _exhausted(stmt: Any) -> bool:
    """``if f < 0: _s_fx(...)``."""
    if _kind(stmt) is not ast.If or stmt.orelse or len(stmt.body) != 1:
        return False
    test = stmt.test
    return (
        _kind(test) is ast.Compare
        and _name(test.left, "f") is not None
        and len(test.ops) == 1
        and type(test.ops[0]) is ast.Lt
        and _int(test.comparators[0]) == 0
        and _kind(stmt.body[0]) is ast.Expr
        and _call(stmt.body[0].value, "_s_fx") is not None
    )


def _fuel_slot(test: Any) -> str | None:
    """``q`` of a test that starts ``f >= q``."""
    first = test.values[0] if _kind(test) is ast.BoolOp and test.values else test
    if _kind(first) is ast.Compare and _name(first.left, "f") and type(first.ops[0]) is ast.GtE:
        return _name(first.comparators[0])
    return None


def _defined_before(block: Sequence[ast.stmt], index: int, slot: str | None) -> Any:
    """The value of the last ``slot = ...`` before ``block[index]`` (None: not assigned there)."""
    if slot is None:
        return None
    for stmt in reversed(block[:index]):
        found = _assign(stmt)
        if found is not None and found[0] == slot:
            return found[1]
    return None


def _add_fuel(node: Any) -> int | None:
    """``K`` of ``L + K + (L + 2) // 64`` (the same ``L`` twice), else None."""
    outer = _binop(node, ast.Add)
    inner = _binop(outer[0], ast.Add) if outer is not None else None
    walk = _binop(outer[1], ast.FloorDiv) if outer is not None else None
    shape = _binop(walk[0], ast.Add) if walk is not None else None
    length = _name(inner[0]) if inner is not None else None
    if (
        inner is None
        or walk is None
        or shape is None
        or length is None
        or _int(walk[1]) != 64
        or _name(shape[0]) != length
        or _int(shape[1]) != 2
    ):
        return None
    return _int(inner[1])


def _exact_fuel(node: Any, ivar: str, start: Any, per: Any, before: Amount, length: str | None) -> bool:
    """``f - (v - k) * P - A - _p_lcadds(L, _p_len(b) - L)`` (``A`` and the adds' term as present)."""
    root, terms = _subtracted(node)
    if _name(root, "f") is None or not terms:
        return False
    done: Any = _binop(terms[0], ast.Mult)
    elapsed = _binop(done[0], ast.Sub) if done is not None else None
    if elapsed is None or _name(elapsed[0], ivar) is None or not same_tree(elapsed[1], start):
        return False
    if not same_tree(done[1], per):
        return False
    rest = terms[1:]
    if length is not None:
        adds: Any = _call(rest[-1], LIST_ADDS) if rest else None
        made = _binop(adds.args[1], ast.Sub) if adds is not None and len(adds.args) == 2 else None
        if (
            made is None
            or _name(adds.args[0]) != length
            or _call(made[0], "_p_len") is None
            or _name(made[1]) != length
        ):
            return False
        rest = rest[:-1]
    charged = Amount()
    for term in rest:
        part = amount(term)
        if part is None:
            return False
        charged = charged.plus(part)
    return charged == before


__all__ = [
    "ELSEWHERE",
    "GUARDED",
    "PRODUCER_FUEL",
    "Amount",
    "ChargeRules",
    "Places",
    "amount",
    "fault_site_at",
    "int_constant",
    "located",
    "node_kind",
    "same_tree",
]
