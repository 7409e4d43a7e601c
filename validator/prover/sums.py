"""Loop totals as arithmetic sums: a triangular loop nest costs about n(n+1)/2, not n + n^2.

A loop's total is normally its trip-count bound ``N`` times the largest per-iteration cost. When
that cost grows linearly with a local that changes by exactly the same step ``d`` on every
iteration (the outer counter of a triangular nest: the inner loop runs ``i`` times and ``i`` rises
by 1), the cost of iteration ``k`` is at most ``T(k) = rest + c * (e + k*d)`` with ``e`` the
local's entry value, so the first ``N`` iterations cost at most::

    sum_{k < N} T(k) = N * T(0) + c * d * N * (N - 1) / 2

Why it is sound: ``c * d > 0``, so ``T`` rises with ``k``. If the loop runs at least once, ``T(0)``
bounds a real iteration's cost, hence ``T(0) >= 0`` and every further term is ``>= 0`` too: adding
the terms up to the bound ``N`` (which is at least the real count) only adds. If it never runs, its
cost is 0, and the sum is clamped at 0. The caller keeps the smaller of this and ``N * max T``.
"""

from __future__ import annotations

from collections.abc import Mapping

from .sym import ZERO, Poly, Sym


def arithmetic_sum(
    s: Sym,
    per: Poly,
    atom: int,
    step: int,
    entry: tuple[Poly, Poly],
    n: Poly,
    elim: Mapping[int, tuple[Poly, Poly]],
) -> Poly | None:
    """The summed cost of ``n`` iterations whose cost bound ``per`` is ``c * atom + rest`` (the
    loop-head atom of a local that changes by exactly ``step`` per iteration; ``rest`` free of
    it), or None when ``per`` has another form or does not grow with the iterations."""
    coeff = 0
    rest: list[tuple[tuple[int, ...], int]] = []
    for mono, k in per.terms:
        if mono == (atom,):
            coeff = k
        elif any(atom in s.factors[f].atoms for f in mono):
            return None  # the atom inside a product or a min/max: not a straight line
        else:
            rest.append((mono, k))
    if coeff == 0 or coeff * step <= 0:
        return None
    rest_b = s.bound(Poly(tuple(rest)), elim, True)
    first_value = entry[1] if coeff > 0 else entry[0]  # the largest c * e
    first = s.add(rest_b, s.scale(first_value, coeff))  # T(0)
    if s.atoms(first) & elim.keys():
        return None
    triangle = s.fdiv(s.mul(n, s.add_const(n, -1)), 2)  # N(N - 1) is even: exact
    total = s.add(s.mul(n, first), s.scale(triangle, coeff * step))
    return s.max(total, ZERO) if s.range(total)[0] < 0 else total


def const_step(s: Sym, delta: tuple[Poly, Poly] | None) -> int | None:
    """The exact change per iteration when the probe found one constant (``i = i + 1``)."""
    if delta is None or delta[0] != delta[1] or not delta[0].is_const:
        return None
    step = delta[0].const
    return step if step != 0 else None
