"""The text form's token budget is enforced before Lark runs (T-IMP-03: a token flood must be refused
quickly), and the pre-pass splits text exactly as Lark's lexer does, so it refuses the same texts at
the same token."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark.exceptions import LarkError

from dotboxd.conformance.loader import CORPUS_ROOT, load_cases
from dotboxd.core.diagnostics import DotBoxDError, Span
from dotboxd.grammar import jsonscan
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.text_syntax import _non_bracket_token, check_token_budget, parser, token_pattern
from tests.grammar.test_text_fuzz import _VOCABULARY

HEADER = 'module "m" version "1.0.0";\n'
FN = HEADER + "fn f() -> I32 {\n"
LIMIT = jsonscan.MAX_TOKENS

FLOODS = {
    "statements": FN + "    x = 1;\n" * (LIMIT // 4 + 1) + "}\n",
    "call-arguments": FN + "    return f(" + "1," * (LIMIT // 2) + "1);\n}\n",
    "one-line-sum": FN + "    return " + "1+" * (LIMIT // 2) + "1;\n}\n",
    "or-chain": FN + "    return " + "a||" * (LIMIT // 2) + "b;\n}\n",
    "functions": HEADER + "fn f() -> I32 { return 1; }\n" * (LIMIT // 10 + 1),
    "commented": FN + "    x = 1; // note\n" * (LIMIT // 4 + 1) + "}\n",
}


def pre_pass_tokens(text: str) -> list[tuple[int, str]] | None:
    """The pre-pass's tokens as (offset, text), or None where it stops (a character no terminal
    matches; trailing blanks and comments are not tokens)."""
    pattern = token_pattern()
    out: list[tuple[int, str]] = []
    position = 0
    while True:
        match = pattern.match(text, position)
        if match is None:
            rest = text[position:]
            return out if rest.strip() == "" or _only_comments(rest) else None
        out.append((match.start("token"), match.group("token")))
        position = match.end()


def _only_comments(rest: str) -> bool:
    return all(line.strip() == "" or line.strip().startswith("//") for line in rest.split("\n"))


def lark_tokens(text: str) -> list[tuple[int, str]] | None:
    try:
        return [(token.start_pos or 0, str(token)) for token in parser().lex(text)]
    except LarkError:
        return None


def lark_budget_span(text: str) -> Span:
    """Where Lark's own lexer-side budget (the backstop) refuses ``text``."""
    with pytest.raises(DotBoxDError) as info:
        for _ in parser().lex(text):
            pass
    assert info.value.code == "E-JSON-LIMIT"
    span = info.value.diagnostic.span
    assert span is not None
    return span


@pytest.mark.parametrize("name", sorted(FLOODS))
def test_a_text_token_flood_is_refused_within_a_second(name: str) -> None:
    text = FLOODS[name]
    parse_text(FN + "    return 1;\n}\n")  # the parser is built once, outside the measurement
    started = time.perf_counter()
    with pytest.raises(DotBoxDError) as info:
        parse_text(text)
    elapsed = time.perf_counter() - started
    assert info.value.code == "E-JSON-LIMIT"
    assert info.value.diagnostic.evidence["limit"] == LIMIT
    assert elapsed < 1.0, f"{name}: {elapsed:.2f} s"
    # the pre-pass points at the same token as the lexer's count would
    assert info.value.diagnostic.span == lark_budget_span(text)


def test_exactly_the_budget_is_not_refused_by_the_pre_pass() -> None:
    frame = len(lark_tokens(FN + "}\n") or [])  # the header, the function head and its closing brace
    statements = (LIMIT - frame) // 4  # "x = 1;" is 4 tokens; pad with empty statements ";"
    padding = LIMIT - frame - 4 * statements
    text = FN + "    x = 1;\n" * statements + "    ;\n" * padding + "}\n"
    assert len(pre_pass_tokens(text) or []) == LIMIT
    check_token_budget(text)  # no error: the parser decides
    with pytest.raises(DotBoxDError):
        check_token_budget(text.replace("}\n", "; }\n"))


def test_a_lexing_error_before_the_budget_is_left_to_the_parser() -> None:
    text = FN + "    x = 1;\n" * 10 + "    #\n" + "    x = 1;\n" * (LIMIT // 4 + 1) + "}\n"
    check_token_budget(text)
    with pytest.raises(DotBoxDError) as info:
        parse_text(text)
    assert info.value.code == "E-TEXT-SYNTAX"


def _corpus_texts() -> list[str]:
    texts = []
    for case in load_cases([CORPUS_ROOT / "import"]):
        if isinstance(case.raw.get("kernelText"), str):
            texts.append(case.raw["kernelText"])
    return texts


@pytest.mark.parametrize("text", _corpus_texts()[:200])
def test_the_pre_pass_splits_corpus_texts_like_the_lexer(text: str) -> None:
    expected = lark_tokens(text)
    if expected is not None:
        assert pre_pass_tokens(text) == expected, json.dumps(text)
        brackets = "".join(token for _, token in expected if token in ("(", ")", "[", "]", "{", "}"))
        assert _non_bracket_token().sub("", text) == brackets


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from([*_VOCABULARY, " ", "\t", "1..5", "a.b", "x1", "-1", '"(//"', "`{`"]), max_size=40
    )
)
def test_the_pre_pass_splits_token_soup_like_the_lexer(pieces: list[str]) -> None:
    for text in ("".join(pieces), " ".join(pieces), "\n".join(pieces)):
        expected = lark_tokens(text)
        if expected is not None:
            assert pre_pass_tokens(text) == expected
            # deleting every non-bracket token leaves the lexer's bracket tokens, in order
            brackets = "".join(token for _, token in expected if token in ("(", ")", "[", "]", "{", "}"))
            assert _non_bracket_token().sub("", text) == brackets


@pytest.mark.parametrize("nest", [jsonscan.MAX_DEPTH - 2, jsonscan.MAX_DEPTH + 5])
def test_the_first_budget_broken_is_the_one_reported(nest: int) -> None:
    """Brackets nested too deep just before the token budget breaks: the lexer would name the
    depth first, and so does the pre-pass; within the depth budget, the token budget is named."""
    body = "fn f() -> I32 { return 1; }\n" * (LIMIT // 11 - 20)  # 11 tokens each
    deep = "fn g() -> I32 { return " + "(" * nest + "1" + ")" * nest + "; }\n"
    text = HEADER + body + deep + "fn h() -> I32 { return 1; }\n" * 40
    with pytest.raises(DotBoxDError) as info:
        check_token_budget(text)
    assert info.value.diagnostic.span == lark_budget_span(text)
    assert ("deeper" in info.value.diagnostic.message) == (nest + 1 > jsonscan.MAX_DEPTH)
