"""The single definition of numeric operator semantics, called by every backend.

Why here and not in the interpreter: the reference interpreter, the optimized backend and the
prover's arithmetic-safety obligations must agree on every corner case, so each operation exists
exactly once. The rules (spec/semantics.md section 4):

* I32 and I64 arithmetic is *checked*: a result outside the type's range, a division or remainder
  by zero, ``MIN / -1`` and ``MIN % -1`` (whose mathematical result 0 fits, but which C# traps) all
  raise ``SandboxFault`` with category InvalidInput;
* ``div`` truncates toward zero and ``rem`` takes the sign of the dividend (C#), unlike Python's
  flooring ``//`` and ``%``;
* F64 inputs are finite (an invariant of sandbox values) and any NaN or infinite result, including
  ``x / 0.0`` and ``fmod(x, 0.0)``, is InvalidInput;
* ordering compares numbers of one type; equality is structural (``values.values_equal``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN, SandboxFault

OVERFLOW = "R-ARITH-OVERFLOW"
DIVIDE_BY_ZERO = "R-ARITH-DIVIDE-BY-ZERO"
NOT_FINITE = "R-ARITH-NOT-FINITE"


def _overflow(type_name: str) -> SandboxFault:
    return SandboxFault(OVERFLOW, f"{type_name} arithmetic overflow")


def _zero() -> SandboxFault:
    return SandboxFault(DIVIDE_BY_ZERO, "integer division by zero")


def _not_finite() -> SandboxFault:
    return SandboxFault(NOT_FINITE, "F64 result is not finite")


# --- truncating division (exact on Python's unbounded ints) ---------------------------------


def trunc_div(a: int, b: int) -> int:
    """Quotient rounded toward zero (``b`` must be non-zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_rem(a: int, b: int) -> int:
    """Remainder with the sign of the dividend: ``a == b * trunc_div(a, b) + trunc_rem(a, b)``."""
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


# --- I32 --------------------------------------------------------------------------------------


def add_i32(a: int, b: int) -> int:
    r = a + b
    if I32_MIN <= r <= I32_MAX:
        return r
    raise _overflow("I32")


def sub_i32(a: int, b: int) -> int:
    r = a - b
    if I32_MIN <= r <= I32_MAX:
        return r
    raise _overflow("I32")


def mul_i32(a: int, b: int) -> int:
    r = a * b
    if I32_MIN <= r <= I32_MAX:
        return r
    raise _overflow("I32")


def div_i32(a: int, b: int) -> int:
    if b == 0:
        raise _zero()
    if b == -1 and a == I32_MIN:
        raise _overflow("I32")
    return trunc_div(a, b)


def rem_i32(a: int, b: int) -> int:
    if b == 0:
        raise _zero()
    if b == -1 and a == I32_MIN:
        raise _overflow("I32")
    return trunc_rem(a, b)


def neg_i32(a: int) -> int:
    if a == I32_MIN:
        raise _overflow("I32")
    return -a


# --- I64 --------------------------------------------------------------------------------------


def add_i64(a: int, b: int) -> int:
    r = a + b
    if I64_MIN <= r <= I64_MAX:
        return r
    raise _overflow("I64")


def sub_i64(a: int, b: int) -> int:
    r = a - b
    if I64_MIN <= r <= I64_MAX:
        return r
    raise _overflow("I64")


def mul_i64(a: int, b: int) -> int:
    r = a * b
    if I64_MIN <= r <= I64_MAX:
        return r
    raise _overflow("I64")


def div_i64(a: int, b: int) -> int:
    if b == 0:
        raise _zero()
    if b == -1 and a == I64_MIN:
        raise _overflow("I64")
    return trunc_div(a, b)


def rem_i64(a: int, b: int) -> int:
    if b == 0:
        raise _zero()
    if b == -1 and a == I64_MIN:
        raise _overflow("I64")
    return trunc_rem(a, b)


def neg_i64(a: int) -> int:
    if a == I64_MIN:
        raise _overflow("I64")
    return -a


# --- F64 --------------------------------------------------------------------------------------


def finite(x: float) -> float:
    """``x`` if it is finite, else InvalidInput."""
    if math.isfinite(x):
        return x
    raise _not_finite()


def add_f64(a: float, b: float) -> float:
    return finite(a + b)


def sub_f64(a: float, b: float) -> float:
    return finite(a - b)


def mul_f64(a: float, b: float) -> float:
    return finite(a * b)


def div_f64(a: float, b: float) -> float:
    if b == 0.0:
        raise _not_finite()  # IEEE gives +-Inf or NaN, neither of which a sandbox value may hold
    return finite(a / b)


def rem_f64(a: float, b: float) -> float:
    if b == 0.0:
        raise _not_finite()  # IEEE fmod(x, 0) is NaN
    return finite(math.fmod(a, b))


def neg_f64(a: float) -> float:
    return -a


# --- conversions and math built-ins -----------------------------------------------------------


def to_i64(a: int) -> int:
    """``numeric.toI64(I32)``: always exact."""
    return a


def to_f64(a: int) -> float:
    """``numeric.toF64(I32|I64)``: round to nearest double (ties to even), as C# does."""
    return float(a)


def abs_i32(a: int) -> int:
    """``math.abs``: ``abs(MIN)`` does not fit and is InvalidInput (C# ``Math.Abs`` throws)."""
    if a == I32_MIN:
        raise _overflow("I32")
    return -a if a < 0 else a


def clamp_i32(value: int, low: int, high: int) -> int:
    """``math.clamp``: ``low > high`` is InvalidInput (C# ``Math.Clamp`` throws)."""
    if low > high:
        raise SandboxFault("R-ARITH-CLAMP-RANGE", "math.clamp lower bound exceeds the upper bound")
    return low if value < low else high if value > high else value


def sin_f64(a: float) -> float:
    """Sine of a finite value: always finite (|sin| <= 1), so it cannot fail."""
    return finite(math.sin(a))


def cos_f64(a: float) -> float:
    return finite(math.cos(a))


def tan_f64(a: float) -> float:
    """Tangent of a finite value: no double is exactly an odd multiple of pi/2, so it is finite."""
    return finite(math.tan(a))


def sqrt_f64(a: float) -> float:
    if a < 0.0:
        raise _not_finite()  # NaN
    return finite(math.sqrt(a))


def _signed(result: float, a: float) -> float:
    """``result`` with IEEE's sign of zero: a rounding that lands on zero keeps the operand's sign.

    Why: Python's ``math.floor``/``math.ceil``/``round`` return *integers*, which have no negative
    zero, so ``float(math.ceil(-0.5))`` is ``+0.0`` where IEEE 754 (and .NET's ``Math.Ceiling``) give
    ``-0.0``. The sign of a zero is observable (``1.0 / x`` is not, but results and encodings are), so
    both backends route every rounding built-in through here."""
    return math.copysign(0.0, a) if result == 0.0 else result


def floor_f64(a: float) -> float:
    """``math.floor``: toward negative infinity; ``floor(-0.0)`` is ``-0.0``."""
    return _signed(float(math.floor(a)), a)


def ceil_f64(a: float) -> float:
    """``math.ceil``: toward positive infinity; ``ceil(-0.5)`` and ``ceil(-0.0)`` are ``-0.0``."""
    return _signed(float(math.ceil(a)), a)


def round_f64(a: float) -> float:
    """``math.round``: to nearest, ties to even (C# ``Math.Round`` default, Python ``round``);
    ``round(-0.4)`` and ``round(-0.5)`` are ``-0.0``."""
    return _signed(float(round(a)), a)


def int32_to_string_invariant(a: int) -> str:
    """``int32.toStringInvariant``: decimal digits with a leading ``-`` when negative."""
    return str(a)


# --- operator tables --------------------------------------------------------------------------

ARITH_I32: dict[str, Callable[[int, int], int]] = {
    "add": add_i32,
    "sub": sub_i32,
    "mul": mul_i32,
    "div": div_i32,
    "rem": rem_i32,
}
ARITH_I64: dict[str, Callable[[int, int], int]] = {
    "add": add_i64,
    "sub": sub_i64,
    "mul": mul_i64,
    "div": div_i64,
    "rem": rem_i64,
}
ARITH_F64: dict[str, Callable[[float, float], float]] = {
    "add": add_f64,
    "sub": sub_f64,
    "mul": mul_f64,
    "div": div_f64,
    "rem": rem_f64,
}
NEGATE: dict[str, Callable[..., int | float]] = {"I32": neg_i32, "I64": neg_i64, "F64": neg_f64}
