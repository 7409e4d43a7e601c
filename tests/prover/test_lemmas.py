"""CI check of the prover's own soundness lemmas (Agni-style), and proof that the check can fail."""

from __future__ import annotations

from typing import Any

from dotboxd.validator.prover import intervals, lemmas
from dotboxd.validator.prover.smt import _z3


def test_every_lemma_is_proved() -> None:
    results = lemmas.check_lemmas()
    assert len(results) >= 30
    failed = [r.name for r in results if not r.proved]
    assert failed == []


def test_every_interval_operator_has_a_lemma() -> None:
    names = {r.name.split("[")[0] for r in lemmas.check_lemmas()}
    operators = {
        "add",
        "sub",
        "mul",
        "neg",
        "scale",
        "join",
        "meet",
        "trunc_div",
        "trunc_div_const",
        "trunc_rem",
    }
    operators |= {"abs", "clamp", "min", "max", "widen.step", "forRange.count", "loop.total"}
    assert operators <= names


def _unsound_add(A: Any, x: tuple[Any, Any], y: tuple[Any, Any]) -> tuple[Any, Any]:
    """A plausible-looking but wrong operator: it forgets that the low ends add up."""
    return x[0], A.add(x[1], y[1])


def test_the_check_rejects_an_unsound_operator() -> None:
    z3 = _z3()
    A = lemmas.Z3Algebra()
    a, b, c, d, x, y = z3.Ints("a b c d x y")
    solver = z3.Solver()
    solver.add(a <= x, x <= b, c <= y, y <= d)
    lo, hi = _unsound_add(A, (a, b), (c, d))
    solver.add(z3.Not(z3.And(lo <= x + y, x + y <= hi)))
    assert str(solver.check()) == "sat"
    # while the operator the prover uses passes the same question
    good = z3.Solver()
    good.add(a <= x, x <= b, c <= y, y <= d)
    lo, hi = intervals.add(A, (a, b), (c, d))
    good.add(z3.Not(z3.And(lo <= x + y, x + y <= hi)))
    assert str(good.check()) == "unsat"
