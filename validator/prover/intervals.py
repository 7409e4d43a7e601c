"""The interval operators the prover builds its bounds with, written once over any integer algebra.

Why generic: the same function computes a concrete range (over Python ints), a symbolic bound (over
the prover's polys) and - in ``lemmas.py`` - an SMT term over fresh Z3 variables, so the soundness
lemma checked in CI is about *this code*, not a restatement of it (the Agni approach to the eBPF
verifier's range analysis). An interval is a ``(lo, hi)`` pair; every operator returns an interval
that contains every result of the concrete operation on members of its argument intervals, which is
exactly what ``lemmas.py`` asks Z3 to confirm.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

T = TypeVar("T")


class Algebra(Protocol[T]):
    """Integer operations on some representation ``T`` (ints, polys, Z3 terms)."""

    def const(self, value: int) -> T: ...
    def add(self, a: T, b: T) -> T: ...
    def sub(self, a: T, b: T) -> T: ...
    def mul(self, a: T, b: T) -> T: ...
    def scale(self, a: T, k: int) -> T: ...
    def max(self, a: T, b: T) -> T: ...
    def min(self, a: T, b: T) -> T: ...
    def fdiv(self, a: T, k: int) -> T: ...


class IntAlgebra:
    """Exact Python integers."""

    def const(self, value: int) -> int:
        return value

    def add(self, a: int, b: int) -> int:
        return a + b

    def sub(self, a: int, b: int) -> int:
        return a - b

    def mul(self, a: int, b: int) -> int:
        return a * b

    def scale(self, a: int, k: int) -> int:
        return a * k

    def max(self, a: int, b: int) -> int:
        return a if a >= b else b

    def min(self, a: int, b: int) -> int:
        return a if a <= b else b

    def fdiv(self, a: int, k: int) -> int:
        return a // k


INT = IntAlgebra()


IV = tuple[T, T]
"""An interval ``(lo, hi)`` over some algebra's representation."""


def add(A: Algebra[T], x: IV[T], y: IV[T]) -> IV[T]:
    return A.add(x[0], y[0]), A.add(x[1], y[1])


def sub(A: Algebra[T], x: IV[T], y: IV[T]) -> IV[T]:
    return A.sub(x[0], y[1]), A.sub(x[1], y[0])


def neg(A: Algebra[T], x: IV[T]) -> IV[T]:
    return A.scale(x[1], -1), A.scale(x[0], -1)


def scale(A: Algebra[T], x: IV[T], k: int) -> IV[T]:
    """Multiplication by a known integer."""
    if k >= 0:
        return A.scale(x[0], k), A.scale(x[1], k)
    return A.scale(x[1], k), A.scale(x[0], k)


def mul(A: Algebra[T], x: IV[T], y: IV[T]) -> IV[T]:
    """The four corner products: a product of intervals is bounded by its extreme corners."""
    a = A.mul(x[0], y[0])
    b = A.mul(x[0], y[1])
    c = A.mul(x[1], y[0])
    d = A.mul(x[1], y[1])
    return A.min(A.min(a, b), A.min(c, d)), A.max(A.max(a, b), A.max(c, d))


def join(A: Algebra[T], x: IV[T], y: IV[T]) -> IV[T]:
    """The hull: contains both intervals."""
    return A.min(x[0], y[0]), A.max(x[1], y[1])


def meet(A: Algebra[T], x: IV[T], y: IV[T]) -> IV[T]:
    """The intersection: a value in both lies in it."""
    return A.max(x[0], y[0]), A.min(x[1], y[1])


def trunc_div_const(A: Algebra[T], x: IV[T], k: int) -> IV[T]:
    """``x / k`` rounded toward zero for a constant ``k >= 1`` (monotone in x): the floor of the low
    end below, the ceiling of the high end above."""
    return A.fdiv(x[0], k), A.fdiv(A.add(x[1], A.const(k - 1)), k)


def trunc_div(A: Algebra[T], x: IV[T]) -> IV[T]:
    """``x / d`` rounded toward zero for any non-zero ``d``: never larger in magnitude than x."""
    return A.min(x[0], A.scale(x[1], -1)), A.max(x[1], A.scale(x[0], -1))


def trunc_rem(A: Algebra[T], x: IV[T], d: IV[T]) -> IV[T]:
    """``x % d`` with the sign of the dividend: between min(x, 0) and max(x, 0), and smaller in
    magnitude than the largest |d|."""
    big = A.max(A.scale(d[0], -1), d[1])
    return (
        A.max(A.min(x[0], A.const(0)), A.sub(A.const(1), big)),
        A.min(A.max(x[1], A.const(0)), A.sub(big, A.const(1))),
    )


def absolute(A: Algebra[T], x: IV[T]) -> IV[T]:
    return (
        A.max(A.max(x[0], A.scale(x[1], -1)), A.const(0)),
        A.max(x[1], A.scale(x[0], -1)),
    )


def minimum(A: Algebra[T], x: IV[T], y: IV[T]) -> IV[T]:
    return A.min(x[0], y[0]), A.min(x[1], y[1])


def maximum(A: Algebra[T], x: IV[T], y: IV[T]) -> IV[T]:
    return A.max(x[0], y[0]), A.max(x[1], y[1])


def clamp(A: Algebra[T], v: IV[T], low: IV[T], high: IV[T]) -> IV[T]:
    """``min(max(v, low), high)`` (the result when low <= high); monotone in all three."""
    return A.min(A.max(v[0], low[0]), high[0]), A.min(A.max(v[1], low[1]), high[1])


def widen(A: Algebra[T], entry: IV[T], delta: IV[T], n: T) -> IV[T]:
    """A loop-head invariant: a value that starts in ``entry`` and changes by an amount in
    ``delta`` per iteration stays in this interval for the first ``n >= 0`` iterations."""
    return (
        A.add(entry[0], A.mul(n, A.min(delta[0], A.const(0)))),
        A.add(entry[1], A.mul(n, A.max(delta[1], A.const(0)))),
    )


def range_count(A: Algebra[T], start: T, end: T) -> T:
    """Iterations of ``forRange`` from ``start`` to ``end`` (end exclusive)."""
    return A.max(A.sub(end, start), A.const(0))


def loop_total(A: Algebra[T], iterations: T, per_iteration: T) -> T:
    """Cost of ``iterations`` loop iterations that each cost at most ``per_iteration``."""
    return A.mul(iterations, per_iteration)
