"""Fast list chunks: a checked forRange chunk whose only size-dependent charges are owned-list adds
and list-read views, run with its fuel paid once per chunk (issue 16).

Why: a checked chunk pays every segment (``f -= c`` and its exhaustion test), every owned add
(``_p_len``, the add's fuel, its fuel and room test) and every view read (its fuel and range test) item
by item, on a fuel value that is a many-digit int under a large budget. Yet for a straight-line body
everything an iteration charges is known at the reservation: the constant segments ``C``, the view
reads' fuel ``q`` (constant for a given list), and the adds' fuel, whose sum over the chunk has a
closed form from the list's length (``costs.list_adds_flat_fuel``). So, right after the
reservation, the generated code computes the chunk's whole fuel ``t`` once and, when the chunk
cannot fail on fuel, on the list's room or on a read's range, runs a copy of the body with every
charge and every test taken out::

    L = _p_len(b)
    t = n * P + _p_lcadds(L, n)                 # P = C + q...
    if n and f >= t and t >= n * 5 and L + n <= room and k >= 0 and k + n <= s:
        for v in _range(k, k + n):
            ...                                 # the body, without charges; g[v] and _p_push(b, x)
        f = f - t
        k = k + n
        continue
    for v in _range(k, k + n):                  # otherwise: the checked chunk, as before
        ...

A fault inside the fast copy (an overflow) passes its stub the exact fuel at that point:
``f - (v - k) * P - A - _p_lcadds(L, _p_len(b) - L)``, ``A`` being what the iteration charged before
the fault (its segments and the reads and adds already made: the buffer's length counts them).
When the chunk does not fit, the checked chunk runs and fails exactly where the reference does.

This module only rewrites the checked chunk the code generator made; ``verify_list_chunks`` checks
the result without trusting it (spec/optimized.md section 6, rule 22).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core import costs

from . import pyast as P
from .stubs import PURE_HELPERS
from .treeops import clone, nodes

ADDS_HELPER = "_p_lcadds"
"""The pure helper ``costs.list_adds_flat_fuel`` goes by in generated code."""

SLOT_KIND = "c"
"""The slot kind of a fast chunk's own names (its fuel ``c<n>`` and the list's length ``c<n>``): a
kind of their own, so adding a fast chunk never renumbers the ``t<n>`` temporaries around it."""

_FAULT = re.compile(r"_s_f[0-9]\Z")
_CHARGE = re.compile(r"f -= ([0-9]+)\Z")
_EXHAUSTED = re.compile(r"if f < 0:\n    _s_fx\(R, f, .*\)\Z")
_LENGTH = re.compile(r"(t[0-9]+) = _p_len\((b[0-9]+)\)\Z")
_ADD_FUEL = re.compile(r"(t[0-9]+) = (t[0-9]+) \+ ([0-9]+) \+ \(\2 \+ 2\) // 64\Z")
_ADD_TEST = re.compile(r"f >= (t[0-9]+) and (t[0-9]+) < (t[0-9]+)\Z")
_READ_TEST = re.compile(r"f >= ([a-z][0-9]+) and ([a-z][0-9]+) >= 0 and \(?\2 < ([a-z][0-9]+)\)?\Z")

# one add onto ``s`` is ``s + 3 + (s + 2) // 64`` fuel past its segment: the form ``_ADD_FUEL`` reads
_ADD_COPY = 3
assert all(costs.list_add_flat_fuel(s) == s + _ADD_COPY + (s + 2) // 64 for s in (0, 1, 62, 63, 200))


@dataclass(slots=True)
class _Charges:
    """What one iteration of the body charges, in source order, as the rewrite finds it."""

    const: int = 0
    """Constant fuel: the segments, and the segment each add and read closes."""
    rates: list[str] = field(default_factory=list)
    """The view reads' fuel slots (``q``: read fuel plus its segment), one per read."""
    adds: int = 0
    sizes: list[str] = field(default_factory=list)
    """The size slot of each view read (the chunk's range must lie inside it)."""
    room: str | None = None


def _amount(const: int, rates: list[str]) -> ast.expr | None:
    """``const + q1 + q2 ...`` (None for nothing)."""
    terms: list[ast.expr] = [P.name(rate) for rate in rates]
    if const:
        terms.insert(0, P.const(const))
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = P.add(total, term)
    return total


@dataclass(slots=True)
class _Rewrite:
    n: str
    ivar: str
    start: str
    buffer: str | None
    length: str
    charges: _Charges = field(default_factory=_Charges)
    out: list[ast.stmt] = field(default_factory=list)
    per: ast.expr | None = None
    texts: dict[int, str] = field(default_factory=dict)
    """``id(node)`` -> its source text: the scan and the emitting walk read the same statements of
    the one checked body (alive, unchanged, for the whole rewrite), and unparsing was most of the
    rewrite's time (issue 16)."""

    def text(self, node: ast.AST) -> str:
        known = self.texts.get(id(node))
        if known is None:
            known = self.texts[id(node)] = ast.unparse(node)
        return known

    def scan(self, body: list[ast.stmt]) -> bool:
        """First pass: what an iteration charges (False: not a body this form takes)."""
        return self.walk(body, emit=False)

    def walk(self, body: list[ast.stmt], emit: bool) -> bool:
        charges = _Charges() if emit else self.charges
        index = 0
        while index < len(body):
            stmt = body[index]
            # only an augmented assignment unparses to ``f -= c``, only an ``if`` to its test
            charge = _CHARGE.match(self.text(stmt)) if type(stmt).__name__ == "AugAssign" else None
            following = body[index + 1] if index + 1 < len(body) else None
            if (
                charge is not None
                and following is not None
                and type(following).__name__ == "If"
                and _EXHAUSTED.match(self.text(following))
            ):
                charges.const += int(charge.group(1))
                index += 2
                continue
            add = self.owned_add(body, index)
            if add is not None:
                segment, push = add
                if not self.plain(push, charges, emit, push=True):
                    return False
                charges.const += segment
                charges.adds += 1
                index += 3
                continue
            read = self.view_read(stmt)
            if read is not None:
                rate, size, value = read
                charges.rates.append(rate)
                charges.sizes.append(size)
                if emit:
                    self.out.append(clone(value))
                index += 1
                continue
            if not self.plain(stmt, charges, emit):
                return False
            index += 1
        return True

    def owned_add(self, body: list[ast.stmt], index: int) -> tuple[int, ast.stmt] | None:
        """``A = _p_len(b); T = A + K + (A + 2) // 64; if f >= T and A < room: f = f - T;
        _p_push(b, x) else: _s_lox(...)``: (the add's segment ``K - 3``, the push)."""
        if index + 2 >= len(body) or self.buffer is None:
            return None
        # both forms are plain assignments: no other statement unparses to ``t = ...``
        if type(body[index]).__name__ != "Assign" or type(body[index + 1]).__name__ != "Assign":
            return None
        length = _LENGTH.match(self.text(body[index]))
        fuel = _ADD_FUEL.match(self.text(body[index + 1]))
        test: Any = body[index + 2]
        if length is None or fuel is None or length.group(2) != self.buffer or type(test).__name__ != "If":
            return None
        checked = _ADD_TEST.match(self.text(test.test))
        if checked is None or len(test.body) != 2 or fuel.group(2) != length.group(1):
            return None
        if checked.group(1) != fuel.group(1) or checked.group(2) != length.group(1):
            return None
        if self.text(test.body[0]) != f"f = f - {fuel.group(1)}":
            return None
        push = test.body[1]
        if not self.text(push).startswith(f"_p_push({self.buffer}, "):
            return None
        self.charges.room = checked.group(3)
        return int(fuel.group(3)) - _ADD_COPY, push

    def view_read(self, stmt: ast.stmt) -> tuple[str, str, ast.stmt] | None:
        """``if f >= q and i >= 0 and i < s: f = f - q; t = g[i] else: ...`` with ``i`` the chunk's
        own counter: (q, s, the read)."""
        if type(stmt).__name__ != "If":
            return None
        test = _READ_TEST.match(self.text(stmt.test))  # type: ignore[attr-defined]
        body: list[ast.stmt] = stmt.body  # type: ignore[attr-defined]
        if test is None or test.group(2) != self.ivar or len(body) != 2:
            return None
        if self.text(body[0]) != f"f = f - {test.group(1)}":
            return None
        if not re.fullmatch(r"t[0-9]+ = g[0-9]+\[" + self.ivar + r"\]", self.text(body[1])):
            return None
        return test.group(1), test.group(3), body[1]

    def plain(self, stmt: ast.stmt, charges: _Charges, emit: bool, push: bool = False) -> bool:
        """A statement that charges nothing itself: no loop, jump or return, no store of ``f`` or of
        the chunk's names, no call but pure helpers and fault stubs (which raise); ``f`` read only
        as a fault stub's fuel, which becomes the exact fuel at that point."""
        fixed = {"f", self.n, self.ivar, self.start, self.length}
        fuel_loads = 0
        faults: list[Any] = []
        for node in nodes(stmt):  # one pass, in ``ast.walk``'s order (the first refusal is the same)
            kind = type(node).__name__
            if kind in ("For", "While", "Break", "Continue", "Return", "AugAssign", "Subscript"):
                return False
            if kind == "Name":
                if type(node.ctx) is ast.Store and node.id in fixed:
                    return False
                fuel_loads += node.id == "f"
            elif kind == "Call":
                callee = node.func.id
                if callee not in PURE_HELPERS and not _FAULT.match(callee):
                    return False
                if callee == "_p_len" or (callee == "_p_push" and not (push and stmt.value is node)):  # type: ignore[attr-defined]
                    return False
                if _FAULT.match(callee):
                    faults.append(node)
        if fuel_loads != len(faults) or any(
            len(call.args) < 2 or self.text(call.args[1]) != "f" for call in faults
        ):
            return False
        if emit:
            kept = clone(stmt)
            for node in nodes(kept):
                if type(node).__name__ == "Call" and _FAULT.match(node.func.id):
                    node.args[1] = self.exact_fuel(charges)
            self.out.append(kept)
        return True

    def exact_fuel(self, before: _Charges) -> ast.expr:
        """The exact fuel at a fault site: ``f - (v - k) * P - A - _p_lcadds(L, _p_len(b) - L)``."""
        fuel: ast.expr = P.name("f")
        if self.per is not None:
            done = P.sub(P.name(self.ivar), P.name(self.start))
            fuel = P.sub(fuel, P.mul(done, clone(self.per)))
        ahead = _amount(before.const, before.rates)
        if ahead is not None:
            fuel = P.sub(fuel, ahead)
        if self.charges.adds and self.buffer is not None:
            made = P.sub(P.call("_p_len", P.name(self.buffer)), P.name(self.length))
            fuel = P.sub(fuel, P.call(ADDS_HELPER, P.name(self.length), made))
        return fuel


def fast_chunk(
    body: list[ast.stmt],
    *,
    n: str,
    ivar: str,
    start: str,
    buffer: str | None,
    new_slot: Callable[[str], str],
) -> list[ast.stmt] | None:
    """The statements that go between a ``_s_cap`` reservation and its checked chunk ``body``, or
    None when the body is not one this form takes (then the loop stays as it was)."""
    rewrite = _Rewrite(n=n, ivar=ivar, start=start, buffer=buffer, length="")
    if not rewrite.scan(body):
        return None
    charges = rewrite.charges
    if charges.adds > 1 or (charges.adds == 0 and not charges.rates):
        return None  # nothing size-dependent: the existing fast loops already cover the rest
    if charges.adds and (buffer is None or charges.room is None):
        return None
    length = new_slot(SLOT_KIND) if charges.adds else ""
    rewrite.length = length
    rewrite.per = _amount(charges.const, charges.rates)
    if rewrite.per is None or not rewrite.walk(body, emit=True):
        return None
    total = new_slot(SLOT_KIND)
    fuel: ast.expr = P.mul(P.name(n), clone(rewrite.per))
    pre: list[ast.stmt] = []
    if charges.adds:
        assert buffer is not None
        pre.append(P.assign(length, P.call("_p_len", P.name(buffer))))
        fuel = P.add(fuel, P.call(ADDS_HELPER, P.name(length), P.name(n)))
    pre.append(P.assign(total, fuel))
    tests: list[ast.expr] = [
        P.name(n),
        P.compare(P.name("f"), P.GTE, P.name(total)),
        P.compare(P.name(total), P.GTE, P.mul(P.name(n), P.const(costs.LOOP_ITERATION_FUEL))),
    ]
    if charges.adds:
        assert charges.room is not None
        tests.append(P.compare(P.add(P.name(length), P.name(n)), P.LTE, P.name(charges.room)))
    if charges.sizes:
        tests.append(P.compare(P.name(start), P.GTE, P.const(0)))
        for size in dict.fromkeys(charges.sizes):
            tests.append(P.compare(P.add(P.name(start), P.name(n)), P.LTE, P.name(size)))
    loop = P.range_loop(ivar, [P.name(start), P.add(P.name(start), P.name(n))], rewrite.out)
    done = [
        loop,
        P.assign("f", P.sub(P.name("f"), P.name(total))),
        P.assign(start, P.add(P.name(start), P.name(n))),
        P.continue_(),
    ]
    return [*pre, P.if_(P.and_(*tests), done)]


__all__ = ["ADDS_HELPER", "fast_chunk"]
