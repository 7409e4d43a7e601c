"""``k * x + c`` in a fast chunk with one test of ``x`` and no temporary (issue 16, Collatz).

Why: a fast chunk computes ``3 * x + 1`` as ``t = 3 * x``, ``t``'s own upper test nested under the
step's (``codegen.fused_step``), then ``x = t + 1``: the common path stores and reloads ``t`` and
compares it against a bound that is not a compact int (``bounds.py``). With ``k > 0`` a constant,
``k * x + c > B`` holds exactly when ``x > B // k`` (floor division, for every integer ``x``), and
``B // k`` fits one digit whenever ``k >= 2`` and ``B`` is an I32 bound. So the step is tested on
its operand before anything is computed, and the common path is one compact comparison and
``x = k * x + c`` in one expression, as plain Python writes it. The rare path is today's code
unchanged, in its order - the product, the product's own test and fault, then the step's exact stub -
so the first overflow still faults first with the same operands, at the same fuel.

Only a product into a fresh temporary (read by nothing but the step) is taken apart: an IR local's
product must keep its store.
"""

from __future__ import annotations

import ast
import copy

from . import bounds
from . import pyast as P


def product(stmt: ast.stmt, slot: str) -> tuple[ast.expr, int] | None:
    """``(x, k)`` when ``stmt`` is ``slot = k * x`` or ``slot = x * k`` with ``k > 0`` an int constant
    and ``x`` a name other than ``slot`` (loaded twice on the rare path, so it must be pure)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target, value = stmt.targets[0], stmt.value
    if not (isinstance(target, ast.Name) and target.id == slot and isinstance(value, ast.BinOp)):
        return None
    if not isinstance(value.op, ast.Mult):
        return None
    for factor, operand in ((value.left, value.right), (value.right, value.left)):
        k = _positive_int(factor)
        if k is not None and isinstance(operand, ast.Name) and operand.id != slot:
            return operand, k
    return None


def operand_test(operand: ast.expr, k: int, bound: int) -> ast.expr:
    """``k * operand > bound``, tested on the operand (``k > 0``): ``operand > bound // k``."""
    return bounds.above(operand, bound // k)


def _positive_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0:
        return node.value
    return None


def step(
    held: ast.stmt,
    slot: str,
    check: ast.stmt,
    out: str,
    value: ast.BinOp,
    bound: int,
    failing: list[ast.stmt],
) -> ast.If | None:
    """The step ``out = slot (+|-) c`` (``value``), ``slot`` the fresh temporary ``held`` stores a
    product into, as ``if x > bound // k: <held; check; failing> else: out = k * x (+|-) c``; None
    when ``held`` is not ``slot = k * x`` with a positive constant ``k`` and a name ``x``."""
    found = product(held, slot)
    if found is None or not isinstance(held, ast.Assign):
        return None
    operand, k = found
    direct = P.binop(copy.deepcopy(held.value), value.op, value.right)
    return P.if_(operand_test(operand, k, bound), [held, check, *failing], [P.assign(out, direct)])


__all__ = ["operand_test", "product", "step"]
