"""Checked arithmetic: C# truncation, MIN/-1, overflow at the exact bounds, F64 finiteness."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dotboxd.core import arith
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN, SandboxFault

i32 = st.integers(I32_MIN, I32_MAX)
i64 = st.integers(I64_MIN, I64_MAX)


def _fault_code(fn, *args):  # type: ignore[no-untyped-def]
    with pytest.raises(SandboxFault) as info:
        fn(*args)
    assert info.value.category == "InvalidInput"
    return info.value.code


@given(i32, i32)
def test_i32_ops_match_exact_math_or_fault(a: int, b: int) -> None:
    for op, exact in [("add", a + b), ("sub", a - b), ("mul", a * b)]:
        fn = arith.ARITH_I32[op]
        if I32_MIN <= exact <= I32_MAX:
            assert fn(a, b) == exact
        else:
            assert _fault_code(fn, a, b) == "R-ARITH-OVERFLOW"
    if b == 0:
        assert _fault_code(arith.div_i32, a, b) == "R-ARITH-DIVIDE-BY-ZERO"
        assert _fault_code(arith.rem_i32, a, b) == "R-ARITH-DIVIDE-BY-ZERO"
        return
    q = math.trunc(Fraction(a, b))  # C#: toward zero
    if a == I32_MIN and b == -1:
        assert _fault_code(arith.div_i32, a, b) == "R-ARITH-OVERFLOW"
        assert _fault_code(arith.rem_i32, a, b) == "R-ARITH-OVERFLOW"
        return
    assert arith.div_i32(a, b) == q
    assert arith.rem_i32(a, b) == a - b * q


@given(i64, i64)
def test_i64_division_truncates(a: int, b: int) -> None:
    if b == 0 or (a == I64_MIN and b == -1):
        with pytest.raises(SandboxFault):
            arith.div_i64(a, b)
        return
    q = math.trunc(Fraction(a, b))
    assert arith.div_i64(a, b) == q
    r = arith.rem_i64(a, b)
    assert r == a - b * q and (r == 0 or (r > 0) == (a > 0))


def test_exact_boundaries() -> None:
    assert arith.add_i32(I32_MAX - 1, 1) == I32_MAX
    _fault_code(arith.add_i32, I32_MAX, 1)
    assert arith.sub_i32(I32_MIN + 1, 1) == I32_MIN
    _fault_code(arith.sub_i32, I32_MIN, 1)
    assert arith.add_i64(I64_MAX - 1, 1) == I64_MAX
    _fault_code(arith.add_i64, I64_MAX, 1)
    assert arith.neg_i32(I32_MAX) == -I32_MAX
    _fault_code(arith.neg_i32, I32_MIN)
    _fault_code(arith.neg_i64, I64_MIN)
    assert arith.div_i32(-7, 2) == -3 and arith.rem_i32(-7, 2) == -1  # Python: -4 and 1
    assert arith.div_i32(7, -2) == -3 and arith.rem_i32(7, -2) == 1
    _fault_code(arith.abs_i32, I32_MIN)
    assert arith.abs_i32(I32_MIN + 1) == I32_MAX


def test_f64_results_must_be_finite() -> None:
    assert _fault_code(arith.div_f64, 1.0, 0.0) == "R-ARITH-NOT-FINITE"
    assert _fault_code(arith.div_f64, 0.0, 0.0) == "R-ARITH-NOT-FINITE"
    assert _fault_code(arith.rem_f64, 1.0, 0.0) == "R-ARITH-NOT-FINITE"
    assert _fault_code(arith.mul_f64, 1e308, 10.0) == "R-ARITH-NOT-FINITE"
    assert _fault_code(arith.sqrt_f64, -1.0) == "R-ARITH-NOT-FINITE"
    assert arith.rem_f64(-7.5, 2.0) == -1.5  # fmod: sign of the dividend
    assert arith.round_f64(2.5) == 2.0 and arith.round_f64(3.5) == 4.0  # ties to even
    assert arith.floor_f64(-1.5) == -2.0 and arith.ceil_f64(-1.5) == -1.0


_ROUNDINGS = {"floor": arith.floor_f64, "ceil": arith.ceil_f64, "round": arith.round_f64}


@pytest.mark.parametrize("name", sorted(_ROUNDINGS))
@given(st.floats(allow_nan=False, allow_infinity=False))
@example(-0.0)
@example(-0.4)
@example(-0.5)
def test_rounding_builtins_keep_the_ieee_sign_of_zero(name: str, a: float) -> None:
    """IEEE 754 rounding never changes the sign: ``ceil(-0.5)``, ``floor(-0.0)`` and ``round(-0.4)``
    are ``-0.0`` (as in .NET), and the value is Python's integer rounding of ``a``."""
    expected = {"floor": math.floor, "ceil": math.ceil, "round": round}[name](a)
    result = _ROUNDINGS[name](a)
    assert result == expected
    assert math.copysign(1.0, result) == math.copysign(1.0, a)


def test_rounding_to_zero_returns_negative_zero_for_negative_operands() -> None:
    for fn, a in [
        (arith.ceil_f64, -0.5),
        (arith.floor_f64, -0.0),
        (arith.round_f64, -0.4),
        (arith.round_f64, -0.5),
    ]:
        result = fn(a)
        assert result == 0.0 and math.copysign(1.0, result) == -1.0, (fn.__name__, a)
    assert math.copysign(1.0, arith.floor_f64(0.5)) == 1.0


def test_clamp_rejects_inverted_bounds() -> None:
    assert arith.clamp_i32(5, 0, 3) == 3 and arith.clamp_i32(-5, 0, 3) == 0 and arith.clamp_i32(2, 0, 3) == 2
    assert _fault_code(arith.clamp_i32, 1, 3, 0) == "R-ARITH-CLAMP-RANGE"
