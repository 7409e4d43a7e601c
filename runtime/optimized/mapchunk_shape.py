"""What a pre-checked owned-map chunk may charge (issue 16), read off its generated body.

A pre-checked chunk (``mapchunk``) counts its fuel in a chunk-local *tally* ``T`` with statements
``T = T + E``, where every ``E`` is a sum of *terms*: a non-negative integer constant, the map's
size slot (``s``, alone or times a constant) and walk terms ``x // 32`` (``x`` the size slot or a
count a set leaves). The code generator and the verifier both read those statements with
``increment`` and both bound a whole body with ``worst``: one function, so they cannot disagree,
and the verifier applies it to the tree it is given, not to anything the generator says.

``worst`` returns the largest ``(per_size, fixed, walks, sets)`` over the body's paths - each
component the maximum over the two arms of every ``if`` (so the sum bounds every path), and
``sets`` the dict stores ``m[k] = v`` on a path. ``core.costs.owned_map_chunk_fuel`` and
``owned_map_chunk_units`` turn those into the chunk's worst fuel and units.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from dotboxd.core import costs

from . import pyast as P

WALK_DIVISOR = costs.MAP_ENTRIES_PER_WALK_FUEL
"""The divisor of a walk term ``x // 32``."""


def _kind(base: type[ast.AST]) -> frozenset[type[ast.AST]]:
    return frozenset({base, *(cls for cls, plain in P.POSITIONED.items() if plain is base)})


NAMES, CONSTS, BINOPS = _kind(ast.Name), _kind(ast.Constant), _kind(ast.BinOp)
ASSIGNS, IFS, SUBSCRIPTS = _kind(ast.Assign), _kind(ast.If), _kind(ast.Subscript)


@dataclass(frozen=True, slots=True)
class Charge:
    """A sum of terms: ``per_size`` times the size slot, ``fixed`` and walk terms on ``walks``."""

    per_size: int = 0
    fixed: int = 0
    walks: tuple[str, ...] = ()

    def plus(self, other: Charge) -> Charge:
        return Charge(self.per_size + other.per_size, self.fixed + other.fixed, self.walks + other.walks)

    @property
    def empty(self) -> bool:
        return not (self.per_size or self.fixed or self.walks)

    def reads(self, size: str) -> frozenset[str]:
        return frozenset({*self.walks, *((size,) if self.per_size else ())})

    def expr(self, size: str) -> ast.expr:
        """The canonical sum ``s * a + b + x // 32 + ...`` (``s`` alone for ``a == 1``)."""
        terms: list[ast.expr] = []
        if self.per_size:
            sized = P.name(size)
            terms.append(sized if self.per_size == 1 else P.mul(sized, P.const(self.per_size)))
        if self.fixed or not (self.per_size or self.walks):
            terms.append(P.const(self.fixed))
        terms += [P.binop(P.name(x), P.FLOORDIV, P.const(WALK_DIVISOR)) for x in self.walks]
        total = terms[0]
        for term in terms[1:]:
            total = P.add(total, term)
        return total


@dataclass(frozen=True, slots=True)
class Worst:
    """The most one iteration can charge: ``per_size * s + fixed + walks * (c // 32)``, ``sets``
    updates (each adds at most one entry)."""

    per_size: int = 0
    fixed: int = 0
    walks: int = 0
    sets: int = 0

    def plus(self, other: Worst) -> Worst:
        return Worst(
            self.per_size + other.per_size,
            self.fixed + other.fixed,
            self.walks + other.walks,
            self.sets + other.sets,
        )

    def most(self, other: Worst) -> Worst:
        return Worst(
            max(self.per_size, other.per_size),
            max(self.fixed, other.fixed),
            max(self.walks, other.walks),
            max(self.sets, other.sets),
        )

    def covered_by(self, other: Worst) -> bool:
        return (
            self.per_size <= other.per_size
            and self.fixed <= other.fixed
            and self.walks <= other.walks
            and self.sets <= other.sets
        )


class ShapeError(ValueError):
    """A tally increment or chunk statement outside the forms above."""


def terms(node: Any, size: str) -> Charge:
    """Parse a canonical sum (``Charge.expr``); anything else is a ``ShapeError``."""
    if type(node) in BINOPS and type(node.op) is ast.Add:
        return terms(node.left, size).plus(terms(node.right, size))
    if type(node) in NAMES and node.id == size:
        return Charge(per_size=1)
    if type(node) in CONSTS and type(node.value) is int and 0 <= node.value <= 2**64:
        return Charge(fixed=node.value)
    if type(node) in BINOPS and type(node.op) is ast.Mult:
        left, right = node.left, node.right
        if (
            type(left) in NAMES
            and left.id == size
            and type(right) in CONSTS
            and type(right.value) is int
            and 0 <= right.value <= 2**16
        ):
            return Charge(per_size=right.value)
    if type(node) in BINOPS and type(node.op) is ast.FloorDiv:
        left, right = node.left, node.right
        if (
            type(left) in NAMES
            and type(right) in CONSTS
            and right.value == WALK_DIVISOR
            and type(right.value) is int
        ):
            return Charge(walks=(left.id,))
    raise ShapeError("a tally increment is not a sum of constants, the size and walk terms")


def increment(stmt: Any, tally: str, size: str) -> Charge | None:
    """``T = T + E`` -> ``E``'s terms; None for any other statement (a malformed one raises)."""
    if type(stmt) not in ASSIGNS or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not (type(target) in NAMES and target.id == tally):
        return None
    value = stmt.value
    if not (
        type(value) in BINOPS
        and type(value.op) is ast.Add
        and type(value.left) in NAMES
        and value.left.id == tally
    ):
        raise ShapeError("the tally is only ever increased: T = T + <terms>")
    return terms(value.right, size)


def worst(body: list[ast.stmt], tally: str, size: str, table: str) -> Worst:
    """The most one pass of ``body`` charges and how many updates it makes, over every path."""
    total = Worst()
    stmt: Any
    for stmt in body:
        if type(stmt) in IFS:
            total = total.plus(
                worst(stmt.body, tally, size, table).most(worst(stmt.orelse, tally, size, table))
            )
            continue
        charge = increment(stmt, tally, size)
        if charge is not None:
            total = total.plus(Worst(charge.per_size, charge.fixed, len(charge.walks)))
        elif type(stmt) in ASSIGNS and _stores_item(stmt, table):
            total = total.plus(Worst(sets=1))
    return total


def _stores_item(stmt: Any, table: str) -> bool:
    target = stmt.targets[0]
    return type(target) in SUBSCRIPTS and type(target.value) in NAMES and target.value.id == table


__all__ = ["WALK_DIVISOR", "Charge", "ShapeError", "Worst", "increment", "terms", "worst"]
