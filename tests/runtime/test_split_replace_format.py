"""``string.split``, ``string.replace``, ``format.simple`` and ``map.keys`` (``dotboxd-1+ext1``).

Their costs and limits rest on one promise each of ``core.textops``: the *measure* (pieces,
occurrences, a parsed template's length) predicts the *build* exactly, so every charge and every
limit is settled before a result is made. These tests check the promises directly, the semantics
end to end on both backends, and that an oversized result is refused without being built.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.core import textops
from dotboxd.core.utf16 import utf16_len
from dotboxd.core.values import SandboxFault
from dotboxd.host import SandboxHost

from .kernels import module, policy

BACKENDS = ["reference", "optimized"]

_TEXTS = ["", "a", ",", "a,b", ",a,,b,", "é😀,😀", "aaaa", "abababa", "😀😀😀"]
_PARTS = ["", ",", "a", "aa", "ab", "😀", "xyz"]


@pytest.mark.parametrize("text", _TEXTS)
@pytest.mark.parametrize("separator", _PARTS)
def test_split_count_predicts_the_pieces(text: str, separator: str) -> None:
    pieces = textops.split(text, separator)
    assert len(pieces) == textops.split_count(text, separator)
    assert separator.join(pieces) == text  # nothing is lost or invented
    units = sum(utf16_len(p) for p in pieces)
    assert units == utf16_len(text) - (len(pieces) - 1) * utf16_len(separator)


def test_split_keeps_empty_pieces_and_an_empty_separator_never_splits() -> None:
    assert textops.split("a,,b", ",") == ["a", "", "b"]
    assert textops.split("", ",") == [""]
    assert textops.split(",", ",") == ["", ""]
    assert textops.split("abc", "") == ["abc"]
    assert textops.split("aaa", "aa") == ["", "a"]  # non-overlapping, left to right


@pytest.mark.parametrize("text", _TEXTS)
@pytest.mark.parametrize("old", _PARTS)
@pytest.mark.parametrize("new", ["", "XY", "😀"])
def test_replace_count_predicts_the_result_length(text: str, old: str, new: str) -> None:
    result = textops.replace(text, old, new)
    count = textops.replace_count(text, old)
    assert utf16_len(result) == utf16_len(text) + count * (utf16_len(new) - utf16_len(old))


def test_replace_semantics() -> None:
    assert textops.replace("aaa", "aa", "b") == "ba"  # non-overlapping, left to right
    assert textops.replace("abc", "", "x") == "abc"  # an empty old matches nothing
    assert textops.replace("a😀b😀", "😀", "") == "ab"


@pytest.mark.parametrize(
    ("template", "args", "expected"),
    [
        ("", [], ""),
        ("plain", [], "plain"),
        ("{0}", ["x"], "x"),
        ("{1}{0}{1}", ["a", "b"], "bab"),
        ("{{0}} is {0}", ["z"], "{0} is z"),
        ("}}{{", [], "}{"),
        ("é{0}😀", ["😀"], "é😀😀"),
        ("{10}", [str(i) for i in range(11)], "10"),
        ("unused", ["a", "b"], "unused"),
    ],
)
def test_format_placeholders(template: str, args: list[str], expected: str) -> None:
    parsed = textops.format_parts(template, len(args))
    texts = dict(enumerate(args))
    assert parsed.build(texts) == expected
    assert parsed.length({i: utf16_len(t) for i, t in texts.items()}) == utf16_len(expected)


@pytest.mark.parametrize(
    ("template", "count"),
    [
        ("{", 1),
        ("}", 1),
        ("a{b", 1),
        ("{}", 1),
        ("{01}", 2),
        ("{ 0}", 1),
        ("{-1}", 1),
        ("{x}", 1),
        ("{0:x}", 1),
        ("{0,3}", 1),
        ("{1}", 1),
        ("{0}", 0),
        ("{{{0}", 0),
        ("{9999999999}", 1),
    ],
)
def test_format_refuses_bad_braces_and_missing_arguments_with_r_format(template: str, count: int) -> None:
    with pytest.raises(SandboxFault) as info:
        textops.format_parts(template, count)
    assert info.value.code == "R-FORMAT"


def _run(body: str, signature: str, args: list[Any], backend: str, **limits: int) -> Any:
    host = SandboxHost()
    plan = host.prepare(module(body, signature), policy(**limits))
    return host.execute(plan, "main", args, backend=backend, encoding="json")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_four_builtins_end_to_end(backend: str) -> None:
    body = (
        'words = string.split(string.replace(s, ";", ","), ",");\n'
        "m = map.empty[Map<String, I32>]();\n"
        "for i in 0 .. list.count(words) { m = map.set(m, list.get(words, i), i); }\n"
        "keys = map.keys(m);\n"
        'out = "";\n'
        "for i in 0 .. list.count(keys) {\n"
        '  out = string.concatBudgeted(out, format.simple("[{0}]", list.of(list.get(keys, i))));\n'
        "}\n"
        "return out;"
    )
    result = _run(body, "main(s String) -> String", ["pear;\ue000,😀;apple,pear"], backend)
    assert result.ok, result.error
    # canonical order is by UTF-16 units: the astral 😀 (0xD83D ...) sorts before U+E000
    assert result.value == "[apple][pear][😀][\ue000]"
    reference = _run(body, "main(s String) -> String", ["pear;\ue000,😀;apple,pear"], "reference")
    assert result.usage == reference.usage


@pytest.mark.parametrize("backend", BACKENDS)
def test_map_keys_is_in_canonical_order_whatever_the_insertion_order(backend: str) -> None:
    body = "return map.keys(m);"
    for pairs in ([[3, 0], [-1, 0], [2, 0]], [[2, 0], [3, 0], [-1, 0]]):
        result = _run(body, "main(m Map<I32, I32>) -> List<I32>", [pairs], backend)
        assert result.ok and list(result.value) == [-1, 2, 3]
    result = _run(body, "main(m Map<Bool, I32>) -> List<Bool>", [[[True, 1], [False, 2]]], backend)
    assert result.ok and list(result.value) == [False, True]


@pytest.mark.parametrize("backend", BACKENDS)
def test_format_failure_is_r_format_after_the_template_charge(backend: str) -> None:
    result = _run('return format.simple(s, list.of("a"));', "main(s String) -> String", ["{1}"], backend)
    assert result.error is not None and result.error.code == "R-FORMAT"
    assert result.error.category == "InvalidInput"


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_into_more_pieces_than_max_list_length_is_refused_before_any_piece_is_built(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T-RUN (memory amplification): ``string.split`` of a text made of separators would make one
    piece per unit; with more pieces than maxListLength it is refused from the count alone, after
    the scan and per-piece fuel are charged, and no piece is ever made."""

    def never(*args: object) -> list[str]:
        raise AssertionError("the pieces were built before the limit was checked")

    monkeypatch.setattr(textops, "split", never)
    result = _run(
        'return string.split(s, ",");',
        "main(s String) -> List<String>",
        ["," * 500],
        backend,
        max_list_length=100,
    )
    assert result.error is not None and result.error.code == "R-QUOTA-LIST-LENGTH"
    assert result.usage.fuel_used >= 500 + 501  # the scan and every piece were charged first


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("body", "signature", "args"),
    [
        ('return string.replace(s, "a", "0123456789");', "main(s String) -> String", ["a" * 200]),
        (
            "return format.simple(s, list.of(t));",
            "main(s String, t String) -> String",
            ["{0}" * 40, "x" * 60],
        ),
    ],
)
def test_text_result_over_max_string_length_is_refused_before_it_is_built(
    backend: str, body: str, signature: str, args: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """T-RUN (memory amplification): ``string.replace`` and ``format.simple`` multiply their input
    (here 200 units into 2,000, and 120 into 2,400); the result's length is worked out first, so a
    result over maxStringLength is refused without being made, and without its per-byte fuel."""

    def never(*args: object) -> str:
        raise AssertionError("the result was built before the limit was checked")

    monkeypatch.setattr(textops, "replace", never)
    monkeypatch.setattr(textops.FormatTemplate, "build", never)
    result = _run(body, signature, args, backend, max_string_length=1000)
    assert result.error is not None and result.error.code == "R-QUOTA-STRING-LENGTH"
    assert result.usage.fuel_used < 1000  # no per-byte fuel for a result that was never built
