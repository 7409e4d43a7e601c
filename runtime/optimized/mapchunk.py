"""Pre-checked fast chunks for loops that own a map (issue 16; spec/optimized.md section 4.2.6).

Why: a checked chunk over an owned map (section 4.2.4) tests the fuel before every charge and the
entry and element rooms before every update, and ``f`` - a many-digit int under a large budget -
is rebuilt by each subtraction. But the map's size grows by at most one per update, so at the
chunk's reservation the worst a whole chunk can charge is known: ``n`` iterations of at most
``per_size * s + fixed + walks * (s // 32)`` fuel and ``sets`` updates, with every size ``s`` at
most ``size + sets * n`` (``core.costs.owned_map_chunk_fuel`` / ``owned_map_chunk_units``). When
that fits the fuel left and the rooms (``_p_mcfit``), the chunk runs a copy of the checked body
with no fuel or limit test at all: its charges go to a small-int tally ``T`` (one ``T = T + E``
per path stretch, the charges of a stretch summed), the units cell is written only where
something can read it, and each fault site receives the exact fuel ``f - (T + pending)``. When it
does not fit, the checked body runs, which fails exactly where the reference does.

``fast_chunk`` builds that copy from the checked body the generator already emitted (so the two
cannot differ in anything but the checks), or returns None for a body outside the forms it knows
(a list read, a stub that pays fuel, a return...), which then keeps only the checked chunk.

The exits (the chunk's end and every ``break``) pay the tally, write the cell and then test that
nothing overshot: ``if f < 0 or units > room or size > most: _s_mcover(R)`` (never true when the
reservation's bound holds; the verifier requires it, so a tampered chunk fails closed).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from . import pyast as P
from .mapchunk_shape import Charge, ShapeError, Worst, terms, worst
from .owned_map_code import Owned, subscript
from .treeops import clone, nodes

FITS = "_p_mcfit"
"""The reservation test: ``_p_mcfit(f, n, size, units, room, most, per_size, fixed, walks, sets)``."""
OVERSHOT = "_s_mcover"
"""The exits' defence in depth: fails the run closed (``R-HOST-INTERNAL``)."""
FAULTS = frozenset({"_s_f1", "_s_f2", "_s_f3", "_s_mox"})
"""Stubs a fast map chunk may call (with the exact fuel): they sync, and raise or return a value."""


class Unsupported(Exception):
    """The checked body holds a form the pre-checked copy does not handle."""


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in nodes(node) if isinstance(n, ast.Name)}


def _stores(stmt: ast.stmt) -> set[str]:
    return {n.id for n in nodes(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _is_name(node: Any, ident: str) -> bool:
    return isinstance(node, ast.Name) and node.id == ident


def _stub_calls(node: ast.AST) -> list[ast.Call]:
    return [
        n
        for n in nodes(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("_s_")
    ]


@dataclass
class _Body:
    """The copy being built: the owned map's slots and the tally's name."""

    owned: Owned
    tally: str
    defs: dict[str, ast.expr] = field(default_factory=dict)

    # --- fuel and exits -------------------------------------------------------------------------

    def exact_fuel(self, pending: Charge) -> ast.expr:
        paid: ast.expr = P.name(self.tally)
        if not pending.empty:
            paid = P.add(paid, pending.expr(self.owned.size))
        return P.sub(P.name("f"), paid)

    def flush(self, pending: Charge) -> list[ast.stmt]:
        if pending.empty:
            return []
        return [P.assign(self.tally, P.add(P.name(self.tally), pending.expr(self.owned.size)))]

    def cell_sync(self) -> ast.stmt:
        return P.Assign([subscript(self.owned.cell, P.const(0), store=True)], P.name(self.owned.units))

    def pay(self) -> list[ast.stmt]:
        """Leaving the chunk: pay the tally, write the cell, fail closed if anything overshot."""
        owned = self.owned
        overshot = P.or_(
            P.compare(P.name("f"), P.LT, P.const(0)),
            P.compare(P.name(owned.units), P.GT, P.name(owned.room)),
            P.compare(P.name(owned.size), P.GT, P.name(owned.most)),
        )
        return [
            P.assign("f", P.sub(P.name("f"), P.name(self.tally))),
            self.cell_sync(),
            P.if_(overshot, [P.expr_stmt(P.call(OVERSHOT, P.name("R")))]),
        ]

    # --- statements -----------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt], pending: Charge) -> tuple[list[ast.stmt], Charge, bool]:
        """(the copied statements, the charges not yet added to the tally, whether they fall through)."""
        work = list(stmts)
        out: list[ast.stmt] = []
        i = 0
        while i < len(work):
            stmt = work[i]
            nxt = work[i + 1] if i + 1 < len(work) else None
            if _is_segment(stmt, nxt):
                assert isinstance(stmt, ast.AugAssign) and isinstance(stmt.value, ast.Constant)
                assert type(stmt.value.value) is int
                pending = pending.plus(Charge(fixed=stmt.value.value))
                i += 2
                continue
            if isinstance(stmt, ast.If) and _charged_form(stmt):
                pending, inline, out = self.form(stmt, pending, out)
                work[i + 1 : i + 1] = inline
                i += 1
                continue
            if isinstance(stmt, ast.If):
                if _stub_calls(stmt.test) or "f" in _names(stmt.test):
                    raise Unsupported("a test that calls a stub or reads the fuel")
                then, p1, live1 = self.block(stmt.body, pending)
                orelse, p2, live2 = self.block(stmt.orelse, pending)
                if live1 and live2 and p1 != p2:
                    then += self.flush(p1)
                    orelse += self.flush(p2)
                    pending = Charge()
                else:
                    pending = p1 if live1 else p2
                out.append(P.if_(clone(stmt.test), then or [P.pass_()], orelse))
                if not (live1 or live2):
                    return out, Charge(), False
                i += 1
                continue
            if isinstance(stmt, ast.Expr) and _calls(stmt.value, "_s_lback") and isinstance(nxt, ast.Break):
                out += [*self.flush(pending), *self.pay(), clone(stmt), P.break_()]
                return out, Charge(), False
            if isinstance(stmt, ast.Continue):
                out += [*self.flush(pending), P.continue_()]
                return out, Charge(), False
            if isinstance(stmt, ast.Pass):
                out.append(P.pass_())
                i += 1
                continue
            if not isinstance(stmt, (ast.Assign, ast.Expr)):
                raise Unsupported(f"statement {type(stmt).__name__}")
            stores = _stores(stmt)  # listed once for both uses (issue 16)
            out += self.simple(stmt, pending, stores)
            if stores & pending.reads(self.owned.size):
                pending = Charge()  # ``simple`` flushed it before the store
            i += 1
        return out, pending, True

    def simple(self, stmt: ast.Assign | ast.Expr, pending: Charge, stores: set[str]) -> list[ast.stmt]:
        """An assignment or a call: a fault stub gets the exact fuel (and the cell is written first);
        a store to a slot the pending charges read adds them to the tally first."""
        if isinstance(stmt, ast.Assign) and not all(
            isinstance(t, (ast.Name, ast.Subscript)) for t in stmt.targets
        ):
            raise Unsupported("a tuple assignment (a stub that returns the fuel)")
        if "f" in stores:
            raise Unsupported("a store to the fuel")
        new = clone(stmt)
        calls = _stub_calls(new)
        out: list[ast.stmt] = []
        if stores & pending.reads(self.owned.size):
            out += self.flush(pending)
            pending = Charge()
        for call in calls:
            callee = call.func.id  # type: ignore[attr-defined]
            if callee not in FAULTS or len(call.args) < 2 or not _is_name(call.args[1], "f"):
                raise Unsupported(f"stub {callee}")
            call.args[1] = self.exact_fuel(pending)
        if sum(1 for n in nodes(new) if isinstance(n, ast.Name) and n.id == "f") != len(calls):
            raise Unsupported("the fuel read outside a fault stub's fuel argument")
        if calls:
            out.append(self.cell_sync())
        out.append(new)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self.defs[stmt.targets[0].id] = stmt.value
        return out

    def form(
        self, stmt: ast.If, pending: Charge, out: list[ast.stmt]
    ) -> tuple[Charge, list[ast.stmt], list[ast.stmt]]:
        """An owned-map form (``owned_map_code``): ``if f >= q [and more]: f = f - q; ...`` with
        ``_s_mox`` as its ``else``. Its fuel ``q`` joins the pending charges; the room tests go (the
        reservation checked them); a key test stays, with the exact path in its ``else``; the
        cell store goes (the cell is written where it can be read). Returns the pending charges
        after it, the statements to copy in its place and the output so far (``q``'s and the
        units' definitions dropped from it)."""
        owned = self.owned
        tests = stmt.test.values if isinstance(stmt.test, ast.BoolOp) else [stmt.test]
        fuel = tests[0].comparators[0]  # type: ignore[attr-defined]
        assert isinstance(fuel, ast.Name)
        definition = self.defs.get(fuel.id)
        if definition is None:
            raise Unsupported("a map form whose fuel is not defined in its block")
        try:
            charge = terms(definition, owned.size)
        except ShapeError as error:
            raise Unsupported(str(error)) from None
        out = _without_store(out, fuel.id)
        kept = [
            test
            for test in tests[1:]
            if not (
                isinstance(test, ast.Compare)
                and len(test.comparators) == 1
                and isinstance(test.comparators[0], ast.Name)
                and test.comparators[0].id in (owned.room, owned.most)
            )
        ]
        body: list[ast.stmt] = []
        for item in stmt.body[1:]:
            if isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Subscript):
                target = item.targets[0]
                if _is_name(target.value, owned.cell):
                    continue  # the cell is written where something can read it
            if (
                isinstance(item, ast.Assign)
                and _is_name(item.targets[0], owned.units)
                and isinstance(item.value, ast.Name)
                and item.value.id in self.defs
            ):
                out = _without_store(out, item.value.id)
                item = P.assign(owned.units, clone(self.defs[item.value.id]))
            body.append(item)
        if not kept:
            return pending.plus(charge), body, out
        exact = clone(stmt.orelse[0])
        assert isinstance(exact, ast.Expr) and isinstance(exact.value, ast.Call)
        exact.value.args[1] = self.exact_fuel(pending)
        then, after, live = self.block(body, pending.plus(charge))
        if not live:
            raise Unsupported("a map form that leaves the chunk")
        test = kept[0] if len(kept) == 1 else P.and_(*kept)
        out.append(P.if_(clone(test), then, [self.cell_sync(), exact]))
        return after, [], out


def _calls(node: Any, callee: str) -> bool:
    return isinstance(node, ast.Call) and _is_name(node.func, callee)


def _is_segment(stmt: ast.stmt, nxt: ast.stmt | None) -> bool:
    """``f -= c`` followed by its exhaustion check ``if f < 0: _s_fx(...)``."""
    return (
        isinstance(stmt, ast.AugAssign)
        and _is_name(stmt.target, "f")
        and isinstance(stmt.op, ast.Sub)
        and isinstance(stmt.value, ast.Constant)
        and type(stmt.value.value) is int
        and isinstance(nxt, ast.If)
        and len(nxt.body) == 1
        and isinstance(nxt.body[0], ast.Expr)
        and _calls(nxt.body[0].value, "_s_fx")
        and not nxt.orelse
    )


def _charged_form(stmt: ast.If) -> bool:
    """``if f >= q [and ...]: f = f - q; ... else: _s_mox(...)``."""
    test = stmt.test
    first = test.values[0] if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else test
    if not (
        isinstance(first, ast.Compare)
        and _is_name(first.left, "f")
        and isinstance(first.ops[0], ast.GtE)
        and isinstance(first.comparators[0], ast.Name)
    ):
        return False
    fuel = first.comparators[0].id
    head = stmt.body[0] if stmt.body else None
    return (
        isinstance(head, ast.Assign)
        and _is_name(head.targets[0], "f")
        and isinstance(head.value, ast.BinOp)
        and _is_name(head.value.right, fuel)
        and len(stmt.orelse) == 1
        and isinstance(stmt.orelse[0], ast.Expr)
        and _calls(stmt.orelse[0].value, "_s_mox")
    )


def _without_store(out: list[ast.stmt], slot: str) -> list[ast.stmt]:
    """``out`` without the last assignment to ``slot`` (a form's fuel or units temporary, which the
    copy no longer reads)."""
    for index in range(len(out) - 1, -1, -1):
        stmt = out[index]
        if isinstance(stmt, ast.Assign) and _is_name(stmt.targets[0], slot):
            return out[:index] + out[index + 1 :]
    raise Unsupported(f"no definition of {slot} in the block")


@dataclass(frozen=True, slots=True)
class FastChunk:
    """The pre-checked chunk: its guarded statement and the bound its reservation test checks."""

    stmt: ast.If
    bound: Worst


def fast_chunk(
    checked: list[ast.stmt], owned: Owned, tally: str, n: str, ivar: str, start: str
) -> FastChunk | None:
    """``if _p_mcfit(...): T = 0; for ivar in _range(start, start + n): <copy> else: <pay>;
    start = start + n; continue`` then ``break``, for the checked chunk body ``checked``; None when
    the body holds a form the copy does not handle (or text keys, whose updates charge more)."""
    if owned.text is not None:
        return None
    body = _Body(owned, tally)
    try:
        copied, pending, live = body.block(checked, Charge())
    except Unsupported:
        return None
    if live:
        copied += body.flush(pending)
    if not copied:
        return None
    bound = worst(copied, tally, owned.size, owned.table)
    done = [*body.pay(), P.assign(start, P.add(P.name(start), P.name(n))), P.continue_()]
    loop = P.range_loop(ivar, [P.name(start), P.add(P.name(start), P.name(n))], copied, done)
    test = P.call(
        FITS,
        P.name("f"),
        P.name(n),
        P.name(owned.size),
        P.name(owned.units),
        P.name(owned.room),
        P.name(owned.most),
        P.const(bound.per_size),
        P.const(bound.fixed),
        P.const(bound.walks),
        P.const(bound.sets),
    )
    return FastChunk(P.if_(test, [P.assign(tally, P.const(0)), loop, P.break_()]), bound)


__all__ = ["FAULTS", "FITS", "OVERSHOT", "FastChunk", "Unsupported", "fast_chunk"]
