"""Inline overflow tests shaped so that CPython's specializing interpreter runs them fast.

Why: CPython (3.11 to 3.13) specializes an int comparison (``COMPARE_OP_INT``) only when both
operands are *compact* ints, whose magnitude fits one 30-bit digit (at most ``2**30 - 1``). The I32
and I64 limits do not (``2147483647`` takes two digits), so a plain ``t > 2147483647`` always runs
the generic comparison, about twice the cost of the specialized one, and an arithmetic loop spends
a good part of its time in these tests (issue 16). Every test is therefore preceded by the same
comparison against the largest compact int: ``t > 1073741823 and t > 2147483647`` has the truth
value of ``t > 2147483647`` (the second implies the first), and for the values a kernel mostly
computes only the first, specialized comparison runs. A bound that is itself compact needs no
guard.

The tests are pure comparisons of a side-effect-free operand (``codegen.expr``), so evaluating the
operand twice on the rare path changes nothing but time.
"""

from __future__ import annotations

import ast
from typing import Final

from . import pyast as P

COMPACT_MAX: Final = 2**30 - 1
"""The largest int CPython stores in one digit (``PyLong_SHIFT`` is 30 on 64-bit builds)."""


def above(operand: ast.expr, bound: int) -> ast.expr:
    """``operand > bound``, guarded by a compact comparison when ``bound`` is not compact."""
    test = P.compare(operand, P.GT, P.const(bound))
    if bound <= COMPACT_MAX:
        return test
    return P.and_(P.compare(operand, P.GT, P.const(COMPACT_MAX)), test)


def below(operand: ast.expr, bound: int) -> ast.expr:
    """``operand < bound``, guarded by a compact comparison when ``bound`` is not compact."""
    test = P.compare(operand, P.LT, P.const(bound))
    if bound >= -COMPACT_MAX:
        return test
    return P.and_(P.compare(operand, P.LT, P.const(-COMPACT_MAX)), test)


def outside(operand: ast.expr, low: int, high: int) -> ast.expr:
    """``operand > high or operand < low``; when neither bound is compact, guarded as a whole by
    ``operand > COMPACT_MAX or operand < -COMPACT_MAX`` (two specialized comparisons on the common
    path instead of two generic ones)."""
    exact = P.or_(P.compare(operand, P.GT, P.const(high)), P.compare(operand, P.LT, P.const(low)))
    if high <= COMPACT_MAX or low >= -COMPACT_MAX:
        return exact
    guard = P.or_(
        P.compare(operand, P.GT, P.const(COMPACT_MAX)), P.compare(operand, P.LT, P.const(-COMPACT_MAX))
    )
    return P.and_(guard, exact)


__all__ = ["COMPACT_MAX", "above", "below", "outside"]
