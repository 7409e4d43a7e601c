"""Exact equality of encoded sandbox values (the value encoding of conformance/README.md).

Python's ``==`` is too forgiving for a conformance verdict: ``True == 1 == 1.0`` and
``0.0 == -0.0``. Encoded values are compared structurally instead: a boolean equals only a boolean,
numbers equal when they denote the same number (``1`` and ``1.0`` do: decoding is directed by the
declared type, so the JSON spelling of an integral F64 is not the implementation's choice), and a
zero's sign counts because F64 arithmetic can produce ``-0.0``.
"""

from __future__ import annotations

import math
from typing import Any


def same_value(expected: Any, actual: Any) -> bool:
    """True when two decoded JSON values denote the same encoded sandbox value."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if _is_number(expected) or _is_number(actual):
        return _is_number(expected) and _is_number(actual) and _same_number(expected, actual)
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, str) or isinstance(actual, str):
        return isinstance(expected, str) and isinstance(actual, str) and expected == actual
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(map(same_value, expected, actual))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same_value(expected[k], actual[k]) for k in expected)
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same_number(left: int | float, right: int | float) -> bool:
    if isinstance(left, float) and not math.isfinite(left):
        return False  # the encoding has no NaN or infinity
    if isinstance(right, float) and not math.isfinite(right):
        return False
    if left != right:
        return False
    if left == 0 and (isinstance(left, float) or isinstance(right, float)):
        return math.copysign(1.0, left) == math.copysign(1.0, right)
    # Python compares int with float exactly (no rounding across 2**53), so equality is enough here.
    return True
