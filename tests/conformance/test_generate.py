"""moduleTextGenerator: exact expansion, exact padding, and refusal of broken recipes."""

from __future__ import annotations

import time
import tracemalloc
from typing import Any

import pytest

from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.generate import check_generator, expand_generator


def expand(spec: dict[str, Any]) -> str:
    check_generator(spec, "g")
    return expand_generator(spec)


def test_repeat_with_separator_and_index() -> None:
    spec = {"template": "[${A}]", "fills": {"A": {"repeat": '"k${INDEX}"', "count": 3, "separator": ","}}}
    assert expand(spec) == '["k0","k1","k2"]'


def test_nest_and_recursive_fills() -> None:
    spec = {
        "template": "${N}",
        "fills": {
            "N": {"nest": ["[", "]"], "count": 2, "inner": "${S}"},
            "S": {"repeat": "a", "count": 3},
        },
    }
    assert expand(spec) == "[[aaa]]"


def test_zero_counts_expand_to_nothing() -> None:
    spec = {
        "template": "<${A}${B}>",
        "fills": {"A": {"repeat": "x", "count": 0}, "B": {"nest": ["(", ")"], "count": 0}},
    }
    assert expand(spec) == "<>"


@pytest.mark.parametrize("size", [10, 11, 1000])
def test_pad_to_bytes_is_exact_in_utf8(size: int) -> None:
    text = expand({"template": "\u00e9\u00e9", "padToBytes": size})
    assert len(text.encode("utf-8")) == size
    assert text.startswith("\u00e9\u00e9") and set(text[2:]) <= {" "}


def test_padding_smaller_than_the_text_is_an_error() -> None:
    with pytest.raises(CaseFormatError, match="already 4 bytes"):
        expand({"template": "\u00e9\u00e9", "padToBytes": 3})


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"template": "x", "other": 1}, "unknown key(s) 'other'"),
        ({"template": "x", "fills": {"a": {"repeat": "x", "count": 1}}}, "fill name 'a'"),
        ({"template": "x", "fills": {"INDEX": {"repeat": "x", "count": 1}}}, "fill name 'INDEX'"),
        ({"template": "x", "fills": {"A": {"repeat": "x"}}}, "'count' must be an integer"),
        ({"template": "x", "fills": {"A": {"repeat": "x", "count": -1}}}, "'count' must be an integer"),
        ({"template": "x", "fills": {"A": {"count": 1}}}, "either {'repeat'"),
        ({"template": "x", "fills": {"A": {"nest": ["("], "count": 1}}}, "'nest' must be [OPEN, CLOSE]"),
        (
            {"template": "x", "fills": {"A": {"repeat": "x", "count": 1, "inner": ""}}},
            "unknown key(s) 'inner'",
        ),
        ({"template": "x", "fills": {"A": {"repeat": 1, "count": 1}}}, "fill texts must be strings"),
        ({"template": "x", "padToBytes": -1}, "'padToBytes' must be"),
        ({"template": "x", "fills": []}, "'fills' must be an object"),
    ],
)
def test_broken_recipes_are_refused_by_the_shape_check(spec: dict[str, Any], fragment: str) -> None:
    with pytest.raises(CaseFormatError) as info:
        check_generator(spec, "g")
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"template": "${MISSING}"}, "has no fill"),
        ({"template": "${A}", "fills": {"A": {"repeat": "${A}", "count": 2}}}, "refers to itself"),
        ({"template": "${INDEX}"}, "only meaningful inside a 'repeat'"),
        ({"template": "${A}", "fills": {"A": {"repeat": "x" * 9, "count": 1_000_000}}}, "expands past"),
    ],
)
def test_broken_recipes_are_refused_on_expansion(spec: dict[str, Any], fragment: str) -> None:
    with pytest.raises(CaseFormatError) as info:
        expand(spec)
    assert fragment in str(info.value)


def _peak_bytes_and_seconds(spec: dict[str, Any]) -> tuple[int, float, str]:
    """Expand ``spec`` (expected to be refused) and report the peak traced allocation, the time
    taken and the refusal's message."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(CaseFormatError) as info:
            expand_generator(spec)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, elapsed, str(info.value)


# One 8 MB fill referenced many times from a 1.7 KB request: each reference used to be expanded on
# its own and all of them concatenated before the size guard looked at the result.
_WIDE = {"template": "${A}" * 400, "fills": {"A": {"repeat": "x" * 8, "count": 1_000_000}}}
_WIDE_SMALL = {"template": "${A}" * 20, "fills": {"A": {"repeat": "x" * 8, "count": 1_000_000}}}


@pytest.mark.parametrize("spec", [_WIDE_SMALL, _WIDE], ids=["20-references", "400-references"])
def test_generator_bomb_many_references_refused_with_bounded_memory(spec: dict[str, Any]) -> None:
    peak, elapsed, message = _peak_bytes_and_seconds(spec)
    assert "expands past" in message
    assert peak < 40 * 1024 * 1024, f"peak {peak} bytes"  # one 8 MB fill, never the 160 MB+ product
    assert elapsed < 5


@pytest.mark.parametrize("pad", [100_000_000, 6_000_000_000], ids=["100MB", "6GB"])
def test_generator_bomb_pad_to_bytes_is_bounded(pad: int) -> None:
    peak, elapsed, message = _peak_bytes_and_seconds({"template": "[]", "padToBytes": pad})
    assert "'padToBytes' must be an integer in 0..8388608" in message
    assert peak < 1024 * 1024 and elapsed < 1


def test_generator_bomb_doubling_chain_takes_linear_time() -> None:
    # F0 -> F1 F1 -> F2 F2 ... under a zero count: nothing is produced, but each fill used to be
    # expanded once per reference (2**24 expansions); each is now expanded once
    fills: dict[str, Any] = {
        f"F{i}": {"repeat": f"${{F{i + 1}}}${{F{i + 1}}}", "count": 0} for i in range(24)
    }
    fills["F24"] = {"repeat": "x", "count": 1}
    started = time.perf_counter()
    assert expand_generator({"template": "[${F0}]", "fills": fills}) == "[]"
    assert time.perf_counter() - started < 5


def test_generator_count_above_the_bound_is_refused_by_the_shape_check() -> None:
    with pytest.raises(CaseFormatError, match=r"'count' must be an integer in 0\.\.1000000"):
        check_generator({"template": "${A}", "fills": {"A": {"repeat": "", "count": 1_000_001}}}, "g")


def test_generator_many_fills_are_refused() -> None:
    fills = {f"F{i}": {"repeat": "x", "count": 1} for i in range(65)}
    with pytest.raises(CaseFormatError, match="at most 64 fills"):
        check_generator({"template": "x", "fills": fills}, "g")
