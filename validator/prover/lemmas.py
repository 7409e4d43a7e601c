"""The prover checks itself: SMT soundness lemmas for the operators that build its bounds.

In the style of the Agni work on the eBPF verifier, every interval operator of ``intervals.py`` is
run *as written* over Z3 terms (the same generic function the prover runs over Python ints and
over polys) and Z3 is asked for a counterexample to its soundness statement
``forall x in [a, b], y in [c, d]: op(x, y) in op#([a, b], [c, d])``. The statements are
quantifier-free (the bound variables are free constants); ``unsat`` means the operator is sound for
all integers. Transfer rules that are not interval operators - the loop-head widening, the
``forRange`` trip count, the per-loop cost total, the ranking-function argument, the simplification
and elimination rules of the symbolic bounds - are stated as inductive steps over the same code.

``check_lemmas()`` is run by CI (``tests/prover/test_lemmas.py``) and by ``dotboxd prove
--self-check``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import intervals, smt
from .smt import _z3

LEMMA_RLIMIT = 20_000_000


class Z3Algebra:
    """The interval operators' algebra over Z3 integer terms."""

    def __init__(self) -> None:
        self.z3 = _z3()

    def const(self, value: int) -> Any:
        return self.z3.IntVal(value)

    def add(self, a: Any, b: Any) -> Any:
        return a + b

    def sub(self, a: Any, b: Any) -> Any:
        return a - b

    def mul(self, a: Any, b: Any) -> Any:
        return a * b

    def scale(self, a: Any, k: int) -> Any:
        return a * k

    def max(self, a: Any, b: Any) -> Any:
        return self.z3.If(a >= b, a, b)

    def min(self, a: Any, b: Any) -> Any:
        return self.z3.If(a <= b, a, b)

    def fdiv(self, a: Any, k: int) -> Any:
        return a / k  # SMT-LIB integer division: the floor for a positive divisor


@dataclass(frozen=True, slots=True)
class LemmaResult:
    name: str
    statement: str
    status: str  # unsat = proved

    @property
    def proved(self) -> bool:
        return self.status == "unsat"


def _within(x: Any, iv: tuple[Any, Any]) -> Any:
    z3 = _z3()
    return z3.And(iv[0] <= x, x <= iv[1])


def _trunc_div(z3: Any, x: Any, d: Any) -> Any:
    """Division rounded toward zero, as ``dotboxd.core.arith.trunc_div`` defines it."""
    ax = z3.If(x >= 0, x, -x)
    ad = z3.If(d >= 0, d, -d)
    q = ax / ad
    return z3.If((x >= 0) == (d > 0), q, -q)


def _lemmas() -> list[tuple[str, str, Callable[[Any, Z3Algebra], tuple[list[Any], Any]]]]:
    """(name, statement, builder) where builder returns (premises, conclusion)."""
    out: list[tuple[str, str, Callable[[Any, Z3Algebra], tuple[list[Any], Any]]]] = []

    def binary(
        name: str, op: Callable[[Any, Any], Any], iv_op: Any, extra: Callable[..., Any] | None = None
    ) -> None:
        def build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
            a, b, c, d, x, y = z3.Ints("a b c d x y")
            prem = [_within(x, (a, b)), _within(y, (c, d))]
            if extra is not None:
                prem.append(extra(z3, x, y, a, b, c, d))
            return prem, _within(op(x, y), iv_op(A, (a, b), (c, d)))

        out.append((name, f"x in [a,b], y in [c,d] => {name}(x, y) in {name}#([a,b],[c,d])", build))

    binary("add", lambda x, y: x + y, intervals.add)
    binary("sub", lambda x, y: x - y, intervals.sub)
    binary("mul", lambda x, y: x * y, intervals.mul)
    binary("min", lambda x, y: _z3().If(x <= y, x, y), intervals.minimum)
    binary("max", lambda x, y: _z3().If(x >= y, x, y), intervals.maximum)

    def rem_build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        a, b, c, d, x, y = z3.Ints("a b c d x y")
        prem = [_within(x, (a, b)), _within(y, (c, d)), y != 0]
        r = x - y * _trunc_div(z3, x, y)
        return prem, _within(r, intervals.trunc_rem(A, (a, b), (c, d)))

    out.append(("trunc_rem", "x in [a,b], d in [c,e], d != 0 => x % d (sign of x) in rem#", rem_build))

    def div_build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        a, b, x, y = z3.Ints("a b x y")
        prem = [_within(x, (a, b)), y != 0]
        return prem, _within(_trunc_div(z3, x, y), intervals.trunc_div(A, (a, b)))

    out.append(("trunc_div", "x in [a,b], d != 0 => x / d (toward zero) in div#([a,b])", div_build))

    for k in (1, 2, 3, 7, 64):

        def div_k(z3: Any, A: Z3Algebra, k: int = k) -> tuple[list[Any], Any]:
            a, b, x = z3.Ints("a b x")
            return [_within(x, (a, b))], _within(
                _trunc_div(z3, x, z3.IntVal(k)), intervals.trunc_div_const(A, (a, b), k)
            )

        out.append((f"trunc_div_const[{k}]", f"x in [a,b] => x / {k} (toward zero) in div#", div_k))

    for k in (-3, -1, 0, 2, 5):

        def scale_k(z3: Any, A: Z3Algebra, k: int = k) -> tuple[list[Any], Any]:
            a, b, x = z3.Ints("a b x")
            return [_within(x, (a, b))], _within(x * k, intervals.scale(A, (a, b), k))

        out.append((f"scale[{k}]", f"x in [a,b] => {k}*x in scale#", scale_k))

    def neg_build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        a, b, x = z3.Ints("a b x")
        return [_within(x, (a, b))], _within(-x, intervals.neg(A, (a, b)))

    out.append(("neg", "x in [a,b] => -x in neg#([a,b])", neg_build))

    def abs_build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        a, b, x = z3.Ints("a b x")
        return [_within(x, (a, b))], _within(z3.If(x >= 0, x, -x), intervals.absolute(A, (a, b)))

    out.append(("abs", "x in [a,b] => |x| in abs#([a,b])", abs_build))

    def clamp_build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        a, b, c, d, e, f, v, lo, hi = z3.Ints("a b c d e f v lo hi")
        prem = [_within(v, (a, b)), _within(lo, (c, d)), _within(hi, (e, f)), lo <= hi]
        r = z3.If(v < lo, lo, z3.If(v > hi, hi, v))
        return prem, _within(r, intervals.clamp(A, (a, b), (c, d), (e, f)))

    out.append(("clamp", "v, lo, hi in their intervals, lo <= hi => clamp(v, lo, hi) in clamp#", clamp_build))

    def join_build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        a, b, c, d, x = z3.Ints("a b c d x")
        return [z3.Or(_within(x, (a, b)), _within(x, (c, d)))], _within(x, intervals.join(A, (a, b), (c, d)))

    out.append(("join", "x in [a,b] or x in [c,d] => x in join#", join_build))

    def meet_build(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        a, b, c, d, x = z3.Ints("a b c d x")
        return [_within(x, (a, b)), _within(x, (c, d))], _within(x, intervals.meet(A, (a, b), (c, d)))

    out.append(("meet", "x in [a,b] and x in [c,d] => x in meet#", meet_build))

    def widen_step(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        e0, e1, d0, d1, k, v, dv = z3.Ints("e0 e1 d0 d1 k v dv")
        prem = [k >= 0, _within(v, intervals.widen(A, (e0, e1), (d0, d1), k)), _within(dv, (d0, d1))]
        return prem, _within(v + dv, intervals.widen(A, (e0, e1), (d0, d1), k + 1))

    out.append(("widen.step", "v in widen(e, d, k), dv in d => v + dv in widen(e, d, k + 1)", widen_step))

    def widen_base(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        e0, e1, d0, d1, v = z3.Ints("e0 e1 d0 d1 v")
        return [_within(v, (e0, e1))], _within(v, intervals.widen(A, (e0, e1), (d0, d1), z3.IntVal(0)))

    out.append(("widen.base", "v in e => v in widen(e, d, 0)", widen_base))

    def widen_mono(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        e0, e1, d0, d1, k, n, v = z3.Ints("e0 e1 d0 d1 k n v")
        prem = [k >= 0, k <= n, _within(v, intervals.widen(A, (e0, e1), (d0, d1), k))]
        return prem, _within(v, intervals.widen(A, (e0, e1), (d0, d1), n))

    out.append(("widen.monotone", "0 <= k <= n => widen(e, d, k) is inside widen(e, d, n)", widen_mono))

    def count_step(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        s0, s1, e0, e1, s, e, k = z3.Ints("s0 s1 e0 e1 s e k")
        prem = [_within(s, (s0, s1)), _within(e, (e0, e1)), k >= 0, s + k < e]
        return prem, k + 1 <= intervals.range_count(A, s0, e1)

    out.append(
        (
            "forRange.count",
            "the (k+1)-th iteration of s..e runs only if k + 1 <= max(0, e_hi - s_lo)",
            count_step,
        )
    )

    def total_step(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        k, n, b, total, c = z3.Ints("k n b total c")
        prem = [k >= 0, k + 1 <= n, b >= 0, total <= intervals.loop_total(A, k, b), c <= b]
        return prem, total + c <= intervals.loop_total(A, n, b)

    out.append(
        (
            "loop.total",
            "k iterations cost <= k*B and one more costs <= B => total <= N*B while k < N",
            total_step,
        )
    )

    def ranking(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        r0, r, r_next, k = z3.Ints("r0 r r_next k")
        prem = [k >= 0, r <= r0 - k, r >= 1, r_next <= r - 1]
        return prem, z3.And(r_next <= r0 - (k + 1), k + 1 <= A.max(r0, A.const(0)))

    out.append(
        (
            "ranking",
            "guard => r >= 1 and r drops by >= 1 per iteration => at most max(0, r0) iterations",
            ranking,
        )
    )

    def max_simplify(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        p, q, lo, hi = z3.Ints("p q lo hi")
        prem = [_within(p - q, (lo, hi)), lo >= 0]
        return prem, A.max(p, q) == p

    out.append(
        ("sym.max", "range(p - q) >= 0 => max(p, q) = p (the simplification Sym.max makes)", max_simplify)
    )

    def min_simplify(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        p, q, lo, hi = z3.Ints("p q lo hi")
        prem = [_within(p - q, (lo, hi)), hi <= 0]
        return prem, A.min(p, q) == p

    out.append(
        ("sym.min", "range(p - q) <= 0 => min(p, q) = p (the simplification Sym.min makes)", min_simplify)
    )

    def elim_upper(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        x, y, u, v, c = z3.Ints("x y u v c")
        prem = [x >= 0, y >= 0, x <= u, y <= v, c > 0]
        return prem, c * x * y <= c * u * v

    out.append(
        ("elim.upper", "nonnegative factors below their upper ends => c*x*y <= c*u*v (c > 0)", elim_upper)
    )

    def elim_lower(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        x, y, lo_x, lo_y, c = z3.Ints("x y lo_x lo_y c")
        prem = [x >= 0, y >= 0, x >= lo_x, y >= lo_y, c > 0]
        low = c * A.max(lo_x, A.const(0)) * A.max(lo_y, A.const(0))
        return prem, c * x * y >= low

    out.append(
        (
            "elim.lower",
            "nonnegative factors above their lower ends => c*x*y >= c*max(l,0)*max(m,0)",
            elim_lower,
        )
    )

    def fdiv_mono(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        x, y = z3.Ints("x y")
        return [x <= y], A.fdiv(x, 64) <= A.fdiv(y, 64)

    out.append(("fdiv.monotone", "x <= y => floor(x / 64) <= floor(y / 64) (the shape-walk fuel)", fdiv_mono))

    def trunc_exact(z3: Any, A: Z3Algebra) -> tuple[list[Any], Any]:
        x = z3.Int("x")
        exact = z3.If(x >= 0, A.fdiv(x, 7), -A.fdiv(-x, 7))
        return [], exact == _trunc_div(z3, x, z3.IntVal(7))

    out.append(("div.exact", "ite(x >= 0, floor(x/k), -floor(-x/k)) is division toward zero", trunc_exact))
    return out


def check_lemmas() -> list[LemmaResult]:
    """Check every lemma; each result is ``unsat`` when the operator is sound."""
    z3 = _z3()
    algebra = Z3Algebra()
    results: list[LemmaResult] = []
    for name, statement, build in _lemmas():
        premises, conclusion = build(z3, algebra)
        solver = smt.pinned_solver(LEMMA_RLIMIT)
        solver.add(*premises)
        solver.add(z3.Not(conclusion))
        with smt.pinned_globals():
            answer = str(solver.check())
        results.append(LemmaResult(name, statement, answer))
    return results
