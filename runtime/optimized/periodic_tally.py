"""Branch fuel of a periodic arm counted in closed form instead of by a tally (issue 16).

Why: a fast forRange chunk whose only dearer branch arm is taken when the loop counter hits a
residue (``if i % 3 == 0: ...``, the "every c-th iteration" idiom) would otherwise count that arm's
extra fuel with ``t = t + 1`` on every hit (``tally.py``), one of the dearest statements of such a
loop. How many iterations of ``[k, x)`` took the arm is a function of ``k`` and ``x`` alone, so the
count costs nothing per iteration: it is computed where the exact fuel is read - at the chunk's
end and on the failure paths.

The form: the chunk body holds, at its top level, ``if v % C == R:`` (or ``!=``; ``v`` the chunk's
iteration variable, which the body never assigns; ``C > 0`` and ``0 <= R < C`` integer constants)
whose one *tallied arm* holds every constant fuel update of the body (``f -= k`` / ``f += k``), all
at the top level of that arm. The body has no ``break``, ``continue`` or ``return`` anywhere (every
iteration reaches the ``if``, and an arm always falls through, so each hit pays exactly the arm's
net update ``S``), and nothing in it stores ``f`` (no exit) or ``v``. The generated test itself decides the arm, with Python's ``%``, and the count is of
that same Python predicate: the number of ``j`` in ``[k, x)`` with ``j % C == R`` is
``(x - R + C - 1) // C - (k - R + C - 1) // C`` for every integer ``k <= x`` (floor division, ``C > 0``),
and the tallied arm of an ``==`` test's ``else`` (or a ``!=`` test's body) is hit by the others.

The updates close the tallied arm (the generator charges an arm's extra fuel at the join). The
invariant: at a point of iteration ``i`` the exact fuel is ``f`` minus ``S * hits(x)``, where ``x`` is
``i`` before the ``if`` and in its arms (``[k, i)``: this iteration's updates have not run) and
``i + 1`` after it. A completed chunk pays ``n * base + S * hits(k + n)``. Every other body keeps ``tally.py``.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from . import pyast as P
from .tally import FUEL
from .treeops import clone, nodes

_EXITS = (ast.Break, ast.Continue, ast.Return)


def periodic_settle(
    body: list[ast.stmt], ivar: str, start: str, n: str, base: int
) -> tuple[list[ast.stmt], list[ast.stmt]] | None:
    """(the chunk body without its branch-fuel updates, what a completed chunk pays), or None when
    ``body`` is not of the periodic form (the caller tallies it)."""
    walks = _Walks()
    found = _periodic_arm(body, ivar, walks)
    if found is None:
        return None
    index, test, tallied = found
    net = sum(_update(s) for s in tallied)
    if not net:
        return None  # a zero net update: nothing to count, the ordinary tally handles it
    counter = _Counter(test, ivar, start)
    out: list[ast.stmt] = []
    for position, stmt in enumerate(body):
        if position != index:
            hit_here = position > index  # after the ``if``: this iteration's hit is counted
            out.append(_reading(stmt, counter.spent(net, P.name(ivar), hit_here), walks))
            continue
        assert isinstance(stmt, ast.If)
        new = copy.copy(stmt)
        arms = {"body": stmt.body, "orelse": stmt.orelse}
        for field, arm in arms.items():
            if arm is tallied:
                setattr(new, field, _tallied_arm(arm, counter, net, ivar, walks) or [P.pass_()])
            else:
                setattr(
                    new, field, [_reading(s, counter.spent(net, P.name(ivar), False), walks) for s in arm]
                )
        out.append(new)
    end = P.add(P.name(start), P.name(n))
    spent = _times(net, counter.hits(end))
    paid = P.add(P.mul(P.name(n), P.const(base)), spent) if base else spent
    return out, [P.aug(FUEL, P.SUB, paid)]


class _Counter:
    """``hits(x)``: how many iterations of ``[start, x)`` take the tallied arm."""

    def __init__(self, test: tuple[int, int, bool], ivar: str, start: str) -> None:
        self.modulus, self.residue, self.on_match = test
        self.ivar = ivar
        self.start = start

    def matches(self, x: ast.expr) -> ast.expr:
        """``(x - R + C - 1) // C - (k - R + C - 1) // C``: the ``j`` in ``[k, x)`` with ``j % C == R``."""
        shift = self.modulus - 1 - self.residue

        def ceiling(value: ast.expr) -> ast.expr:
            return P.binop(
                P.add(value, P.const(shift)) if shift else value, P.FLOORDIV, P.const(self.modulus)
            )

        return P.sub(ceiling(x), ceiling(P.name(self.start)))

    def hits(self, x: ast.expr) -> ast.expr:
        if self.on_match:
            return self.matches(x)
        return P.sub(P.sub(x, P.name(self.start)), self.matches(x))

    def spent(self, net: int, ivar: ast.expr, this_one: bool) -> ast.expr:
        """The arm fuel paid up to iteration ``ivar`` (``this_one``: including its own hit)."""
        x = P.add(ivar, P.const(1)) if this_one else ivar
        return _times(net, self.hits(x))


def _times(net: int, count: ast.expr) -> ast.expr:
    return count if net == 1 else P.mul(P.const(net), count)


class _Walks:
    """Each statement's nodes (``treeops.nodes``), listed once per ``periodic_settle``: the form's
    tests and the rewrite read every statement of the body up to five times (issue 16). The body
    does not change meanwhile, and a listed statement stays alive in its own list (its ``id`` is
    never reused while this exists)."""

    def __init__(self) -> None:
        self.known: dict[int, list[Any]] = {}

    def __call__(self, stmt: ast.stmt) -> list[Any]:
        found = self.known.get(id(stmt))
        if found is None:
            found = self.known[id(stmt)] = nodes(stmt)
        return found


def _periodic_arm(
    body: list[ast.stmt], ivar: str, walks: _Walks
) -> tuple[int, tuple[int, int, bool], list[ast.stmt]] | None:
    """(index of the periodic ``if`` in ``body``, (C, R, whether the tallied arm runs on a match),
    the tallied arm) when ``body`` has the form of the module docstring, else None."""
    candidates: list[tuple[int, tuple[int, int, bool], list[ast.stmt]]] = []
    for index, stmt in enumerate(body):
        if not _updates_inside(stmt, walks):
            continue
        if not isinstance(stmt, ast.If):
            return None  # an update outside the periodic ``if``
        test = _residue_test(stmt.test, ivar)
        if test is None:
            return None
        modulus, residue, equal = test
        with_updates = [arm for arm in (stmt.body, stmt.orelse) if _updates_inside_block(arm, walks)]
        if len(with_updates) != 1:
            return None
        arm = with_updates[0]
        if any(_updates_inside(s, walks) and not _update(s) for s in arm):
            return None  # an update nested in the arm: its position is not the arm's
        if not _closes(arm):
            return None  # a statement after an update would see this iteration's hit
        candidates.append((index, (modulus, residue, equal == (arm is stmt.body)), arm))
    if len(candidates) != 1:
        return None
    index, test, arm = candidates[0]
    if _exits_or_stores(body, ivar, walks):
        return None
    return index, test, arm


def _residue_test(test: ast.expr, ivar: str) -> tuple[int, int, bool] | None:
    """(C, R, True for ``==``) for ``ivar % C == R`` / ``ivar % C != R`` with ``C > 0``, ``0 <= R < C``."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in (ast.Eq, ast.NotEq)
    ):
        return None
    left, right = test.left, test.comparators[0]
    if not (isinstance(left, ast.BinOp) and type(left.op) is ast.Mod):
        return None
    if not (isinstance(left.left, ast.Name) and left.left.id == ivar):
        return None
    modulus, residue = _int(left.right), _int(right)
    if modulus is None or residue is None or modulus <= 0 or not 0 <= residue < modulus:
        return None
    return modulus, residue, type(test.ops[0]) is ast.Eq


def _closes(arm: list[ast.stmt]) -> bool:
    """Whether the arm's updates are its last statements (where the generator puts an arm's
    extra charge: at the join)."""
    first = next(i for i, s in enumerate(arm) if _update(s))
    return all(_update(s) for s in arm[first:])


def _int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _update(stmt: ast.stmt) -> int:
    """The fuel ``stmt`` spends when it is ``f -= k`` (``k``) or ``f += k`` (``-k``), else 0."""
    if not (
        isinstance(stmt, ast.AugAssign)
        and isinstance(stmt.target, ast.Name)
        and stmt.target.id == FUEL
        and isinstance(stmt.value, ast.Constant)
        and type(stmt.value.value) is int
    ):
        return 0
    if type(stmt.op) is ast.Sub:
        return stmt.value.value
    if type(stmt.op) is ast.Add:
        return -stmt.value.value
    return 0


def _updates_inside(stmt: ast.stmt, walks: _Walks) -> bool:
    """Whether ``stmt`` is or holds any augmented update of ``f``."""
    return any(
        isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == FUEL
        for node in walks(stmt)
    )


def _updates_inside_block(block: list[ast.stmt], walks: _Walks) -> bool:
    return any(_updates_inside(s, walks) for s in block)


def _exits_or_stores(body: list[ast.stmt], ivar: str, walks: _Walks) -> bool:
    """Whether ``body`` can leave an iteration early (``break``, ``continue``, ``return``: an
    iteration could then skip the ``if`` its residue says it takes) or stores ``f`` or ``ivar``
    other than by the augmented updates the form moves."""
    updated = {id(n.target) for s in body for n in walks(s) if isinstance(n, ast.AugAssign)}
    for node in (n for s in body for n in walks(s)):
        if isinstance(node, _EXITS):
            return True
        if (
            isinstance(node, ast.Name)
            and node.id in (FUEL, ivar)
            and isinstance(node.ctx, ast.Store)
            and id(node) not in updated
        ):
            return True
    return False


def _tallied_arm(
    arm: list[ast.stmt], counter: _Counter, net: int, ivar: str, walks: _Walks
) -> list[ast.stmt]:
    """The tallied arm without its updates (they close it): a read of ``f`` in it sees the hits of
    the iterations before this one."""
    spent = counter.spent(net, P.name(ivar), False)
    return [_reading(stmt, spent, walks) for stmt in arm if not _update(stmt)]


def _reading(node: ast.stmt, spent: ast.expr, walks: _Walks) -> ast.stmt:
    """``node`` with each read of ``f`` replaced by ``f - spent`` (a copy when anything changes:
    the generator shares some nodes)."""
    if not any(isinstance(n, ast.Name) and n.id == FUEL for n in walks(node)):
        return node
    new = _Reads(spent).visit(clone(node))
    assert isinstance(new, ast.stmt)
    return new


class _Reads(ast.NodeTransformer):
    def __init__(self, spent: ast.expr) -> None:
        self.spent = spent

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == FUEL and isinstance(node.ctx, ast.Load):
            return P.sub(P.name(FUEL), self.spent)
        return node


__all__ = ["periodic_settle"]
