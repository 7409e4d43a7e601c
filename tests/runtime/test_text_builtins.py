"""The extension string built-ins (``dotboxd-1+ext1``): the properties their costs and the prover rely on.

``core.textops`` promises that case mapping never changes a string's UTF-16 length (so the charge
and the prover bound can be the input's), and that searches and offsets are ordinal over UTF-16 code
units even though Python strings are sequences of code points. These tests check the promises
directly, and end to end on both backends.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.core import textops
from dotboxd.core.utf16 import utf16_len
from dotboxd.core.values import SandboxFault
from dotboxd.host import SandboxHost

from .kernels import module, policy


@functools.cache
def _all_code_points() -> str:
    """Every Unicode scalar value, built on first use rather than at collection."""
    return "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)


@pytest.mark.parametrize("mapping", [textops.to_lower_invariant, textops.to_upper_invariant])
def test_case_mapping_keeps_every_code_points_utf16_width(mapping: object) -> None:
    assert callable(mapping)
    mapped = mapping(_all_code_points())
    assert len(mapped) == len(_all_code_points())  # one code point for one code point
    widths = [ord(c) > 0xFFFF for c in _all_code_points()]
    assert [ord(c) > 0xFFFF for c in mapped] == widths
    assert utf16_len(mapped) == utf16_len(_all_code_points())


def test_case_mapping_is_simple_and_context_free() -> None:
    assert textops.to_upper_invariant("straße") == "STRAßE"  # full mapping would give STRASSE
    assert textops.to_lower_invariant("İ") == "İ"  # full mapping would give i + combining dot
    assert textops.to_lower_invariant("ΟΔΟΣ") == "οδοσ"  # no final sigma
    assert textops.to_lower_invariant("ABC") == "abc" and textops.to_upper_invariant("é😀") == "É😀"


@pytest.mark.parametrize(
    ("text", "part", "expected"),
    [("a😀b", "b", 3), ("😀😀x", "x", 4), ("a😀b", "😀", 1), ("abc", "", 0), ("abc", "d", -1), ("", "", 0)],
)
def test_index_of_counts_utf16_units(text: str, part: str, expected: int) -> None:
    assert textops.index_of(text, part) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0", 0), ("-0", 0), ("+17", 17), ("007", 7), ("2147483647", 2**31 - 1), ("-2147483648", -(2**31))],
)
def test_parse_int_accepts_decimal_i32(text: str, expected: int) -> None:
    assert textops.parse_int(text) == expected


@pytest.mark.parametrize(
    "text", ["", "-", "+", " 1", "1 ", "1_000", "1,000", "2147483648", "-2147483649", "١٢", "0x10", "9" * 12]
)
def test_parse_int_refuses_anything_else_with_r_parse_int(text: str) -> None:
    with pytest.raises(SandboxFault) as info:
        textops.parse_int(text)
    assert info.value.code == "R-PARSE-INT"


def test_parse_int_of_a_huge_digit_string_is_a_clean_error_not_a_python_limit() -> None:
    """T-RUN: Python's ``int()`` refuses more than 4,300 digits with ValueError and is quadratic below
    that; ``parse.int`` must give R-PARSE-INT (or the value, for leading zeros) in linear time."""
    with pytest.raises(SandboxFault) as info:
        textops.parse_int("9" * 100_000)
    assert info.value.code == "R-PARSE-INT"
    assert textops.parse_int("0" * 100_000 + "42") == 42


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_extension_builtins_agree_on_both_backends(backend: str) -> None:
    source = module(
        "low = string.toLowerInvariant(s);\n"
        'if string.contains(low, "free money") { return string.indexOf(low, "free money"); }\n'
        'if string.startsWith(s, "😀") && string.endsWith(s, "!") { return 100; }\n'
        "return 0 - 1;",
        "main(s String) -> I32",
    )
    host = SandboxHost()
    plan = host.prepare(source, policy())
    got = {
        s: host.execute(plan, "main", [s], backend=backend)  # type: ignore[arg-type]
        for s in ("Get FREE Money", "😀 hi!", "nothing", "😀 FREE MONEY")
    }
    assert {s: r.value for s, r in got.items()} == {
        "Get FREE Money": 4,
        "😀 hi!": 100,
        "nothing": -1,
        "😀 FREE MONEY": 3,
    }
    reference = SandboxHost()
    ref_plan = reference.prepare(source, policy())
    for s, result in got.items():
        other = reference.execute(ref_plan, "main", [s], backend="reference")
        assert result.usage == other.usage, s


def _utf16_last_index(text: str, part: str) -> int:
    """An oracle over UTF-16 code units, independent of ``textops``."""
    hay, needle = text.encode("utf-16-le"), part.encode("utf-16-le")
    for unit in range(len(hay) // 2 - len(needle) // 2, -1, -1):
        if hay[2 * unit : 2 * unit + len(needle)] == needle:
            return unit
    return -1


@settings(max_examples=300)
@given(text=st.text("ab😀é", max_size=12), part=st.text("ab😀é", max_size=4))
def test_last_index_of_is_the_last_utf16_offset(text: str, part: str) -> None:
    assert textops.last_index_of(text, part) == _utf16_last_index(text, part)


def test_last_index_of_a_crafted_near_match_takes_linear_time_not_quadratic() -> None:
    """T-RUN: ``str.rfind`` has no two-way fallback, so a run of one character searched for a part
    that differs from it near its start costs ``len(text) x len(part)`` steps while the call is
    charged ``len(text) + len(part)`` fuel (seconds of CPU per call here). ``string.lastIndexOf``
    must take about the time of the linear forward search on the same input."""
    text, part = "a" * 200_000, "ab" + "a" * 50_000

    def cpu(run: Callable[[], object]) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            run()
            best = min(best, time.process_time() - start)
        return best

    forward = cpu(lambda: textops.contains(text, part[::-1]))
    backward = cpu(lambda: textops.last_index_of(text, part))
    assert textops.last_index_of(text, part) == -1
    assert backward <= 50 * forward + 0.05, f"{backward:.3f} s against {forward:.4f} s forward"
