"""Hostile input: whatever the text, parse_text returns a Module or raises DotBoxDError, never
another exception (no RecursionError, no Lark or Unicode errors leaking), deterministically."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core import ast
from dotboxd.core.codes import all_codes
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.formatter import format_module
from dotboxd.grammar.text import keywords, parse_text
from tests.strategies.ast_strategies import modules

KNOWN_CODES = set(all_codes())

_VOCABULARY = [
    *sorted(keywords()),
    "(", ")", "{", "}", "[", "]", "<", ">", "<=", ">=", "==", "!=", "=", ";", ",", "->", "..", "+", "-",
    "*", "/", "%", "!", "&&", "||", "x", "math.abs", "`odd name`", "`", '"', '"s"', "0", "42", "42L",
    "1.5", "1e3", "2147483648", 'path"a/b"', 'guid"x"', 'uri"http://h"', "//c\n", "\n", "PlayerId", "I32",
]  # fmt: skip


def parse_or_reject(source: str | bytes) -> ast.Module | DotBoxDError:
    """The only two outcomes allowed; anything else escapes and fails the test."""
    try:
        return parse_text(source)
    except DotBoxDError as error:
        assert error.code in KNOWN_CODES
        text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
        assert error.diagnostic.render(text, "fuzz.dbk")  # rendering never fails either
        return error


def outcome(result: ast.Module | DotBoxDError) -> object:
    if isinstance(result, DotBoxDError):
        return [d.to_json() for d in result.diagnostics]
    return result


@given(st.text(max_size=300))
def test_arbitrary_text(source: str) -> None:
    assert outcome(parse_or_reject(source)) == outcome(parse_or_reject(source))


@given(st.binary(max_size=300))
def test_arbitrary_bytes(source: bytes) -> None:
    parse_or_reject(source)


@given(st.lists(st.sampled_from(_VOCABULARY), max_size=60))
def test_token_soup(tokens: list[str]) -> None:
    parse_or_reject('module "m" version "1";\nfn f() -> I32 {\n' + " ".join(tokens) + "\n}\n")


_SMALL_MODULES = modules(depth=1, expr_depth=2)
_INSERTS = st.sampled_from(_VOCABULARY) | st.text(max_size=3)


@st.composite
def mutated_modules(draw: st.DrawFn) -> str:
    """A valid module's text with a few random edits (deletions, insertions, duplications)."""
    text = format_module(draw(_SMALL_MODULES))
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 8)))
        edit = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if edit == "delete":
            text = text[:start] + text[end:]
        elif edit == "insert":
            text = text[:start] + draw(_INSERTS) + text[start:]
        else:
            text = text[:end] + text[start:end] + text[end:]
    return text


@given(mutated_modules())
def test_mutated_modules(source: str) -> None:
    parse_or_reject(source)


@given(
    st.sampled_from(["(", "{", "[", "!", "-", "if a {} else ", "List<", "f(", "a + "]), st.integers(60, 3000)
)
def test_repeated_openers(opener: str, count: int) -> None:
    result = parse_or_reject('module "m" version "1";\nfn f() -> I32 {\n x = ' + opener * count + "a;\n}\n")
    assert isinstance(result, DotBoxDError)
