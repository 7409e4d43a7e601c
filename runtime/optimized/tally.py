"""Branch fuel of a fast chunk kept in a small counter instead of the fuel local.

Why: inside a fast chunk (``ledger``: fuel reserved for the whole chunk), the only per-iteration
fuel updates are the extra charges of dearer branch arms (``f -= 2`` on the odd arm of a Collatz
step) and the fixes before a ``continue``. ``f`` holds the run's remaining fuel, which is usually a
many-digit int (a policy's fuel of 2**62 takes three 30-bit digits), so each of these updates
allocates a new many-digit int: a tenth of the time of a branchy loop (issue 16). Counting them
instead in a chunk-local tally that starts at 0 - in units of the charges' greatest common divisor,
so the common case is ``c = c + 1`` and stays among the small ints CPython caches - costs a third as
much.

The rewrite keeps one invariant inside the chunk body: the exact fuel is ``f - unit * c``. So every
``f -= k`` becomes ``c = c + k // unit`` (``f += k``: ``c = c - k // unit``), every read of ``f`` becomes
``f - unit * c`` (the fault stubs, the exits that compute the exact fuel), and a statement that
stores ``f`` (an exit) is followed by ``c = 0``, since ``f`` is then exact. The chunk's own end
pays ``n * base + unit * c`` and sets ``c = 0`` (``codegen``), and the tally is set to 0 before the
loop, so each chunk starts with ``c == 0`` and the reservation, the exact path and the code after
the loop read an exact ``f``.

Nodes are never changed in place (the generator shares some, such as the ``f`` load): a statement
or expression that holds a read of ``f`` is copied with its new children.
"""

from __future__ import annotations

import ast
import copy
import math

from . import pyast as P
from .treeops import nodes

FUEL = "f"


def tally_unit(body: list[ast.stmt]) -> int:
    """The greatest common divisor of the constant fuel updates (``f -= k``, ``f += k``) anywhere
    in ``body``; 0 when there are none (nothing to tally)."""
    unit = 0
    for node in _statements(body):
        amount = _constant_update(node)
        if amount:
            unit = math.gcd(unit, amount)
    return unit


def tally_body(body: list[ast.stmt], counter: str, unit: int) -> list[ast.stmt]:
    """``body`` with its constant fuel updates moved to ``counter`` (in units of ``unit``) and every
    other use of ``f`` rewritten to keep the exact fuel ``f - unit * counter``."""
    out: list[ast.stmt] = []
    for stmt in body:
        amount = _constant_update(stmt)
        if amount:
            assert isinstance(stmt, ast.AugAssign)
            grows = type(stmt.op) is ast.Sub  # ``f -= k``: more fuel spent, the tally grows
            step = P.const(amount // unit)  # a plain assignment: augmented ones only ever update ``f``
            out.append(P.assign(counter, (P.add if grows else P.sub)(P.name(counter), step)))
            continue
        new = _rewrite(stmt, counter, unit)
        assert isinstance(new, ast.stmt)
        out.append(new)
        if _stores_fuel(stmt):
            out.append(P.assign(counter, P.const(0)))  # ``f`` is exact from here on
    return out


def tallied_fuel(counter: str, unit: int) -> ast.expr:
    """``unit * counter``: the fuel the tally holds."""
    return P.name(counter) if unit == 1 else P.mul(P.const(unit), P.name(counter))


def _constant_update(node: ast.AST) -> int:
    """``k`` for ``f -= k`` or ``f += k`` with an int constant ``k > 0``, else 0."""
    if (
        isinstance(node, ast.AugAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == FUEL
        and type(node.op) in (ast.Sub, ast.Add)
        and isinstance(node.value, ast.Constant)
        and type(node.value.value) is int
        and node.value.value > 0
    ):
        return node.value.value
    return 0


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    found: list[ast.stmt] = []
    for stmt in body:
        found.append(stmt)
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                found.extend(_statements(inner))
    return found


def _stores_fuel(stmt: ast.stmt) -> bool:
    """An assignment of ``f`` (not ``f -= x``, which keeps ``f`` as far from exact as before)."""
    if not isinstance(stmt, ast.Assign):
        return False
    return any(isinstance(n, ast.Name) and n.id == FUEL for t in stmt.targets for n in nodes(t))


def _reads_fuel(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == FUEL and isinstance(n.ctx, ast.Load) for n in nodes(node))


def _has_update(node: ast.AST) -> bool:
    return isinstance(node, ast.stmt) and any(_constant_update(s) for s in _statements([node]))


def _rewrite(node: ast.AST, counter: str, unit: int) -> ast.AST:
    """``node`` with each read of ``f`` replaced by ``f - unit * counter`` and each nested block
    tallied (a copy when anything changes, ``node`` itself otherwise)."""
    if isinstance(node, ast.Name) and node.id == FUEL and isinstance(node.ctx, ast.Load):
        return P.sub(P.name(FUEL), tallied_fuel(counter, unit))
    if not (_reads_fuel(node) or _has_update(node)):
        return node
    new = copy.copy(node)
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            if value and all(isinstance(item, ast.stmt) for item in value):
                setattr(new, field, tally_body(value, counter, unit))
            else:
                setattr(
                    new, field, [_rewrite(v, counter, unit) if isinstance(v, ast.AST) else v for v in value]
                )
        elif isinstance(value, ast.AST):
            setattr(new, field, _rewrite(value, counter, unit))
    return new


__all__ = ["tallied_fuel", "tally_body", "tally_unit"]
