"""moduleTextGenerator: exact expansion, exact padding, and refusal of broken recipes."""

from __future__ import annotations

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
        ({"template": "${A}", "fills": {"A": {"repeat": "x", "count": 9_000_000}}}, "expands past"),
    ],
)
def test_broken_recipes_are_refused_on_expansion(spec: dict[str, Any], fragment: str) -> None:
    with pytest.raises(CaseFormatError) as info:
        expand(spec)
    assert fragment in str(info.value)
