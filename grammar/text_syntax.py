"""Lexing and syntax-level concerns of the text form: the Lark parser, reserved words, the source
budgets checked before and while lexing, and the translation of Lark's errors into diagnostics.

``dotboxd.grammar.text`` drives it; ``text_build`` turns its parse tree into the AST. Lark's own
exceptions never leave this module: every syntax problem becomes an ``E-TEXT-SYNTAX`` diagnostic
whose message names the expected tokens in words and whose span points at the offending character.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr, TerminalDef

from dotboxd.core.bounded_text import bounded_text
from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.core.suggest import close_matches, did_you_mean
from dotboxd.grammar import jsonscan

MAX_SOURCE_BYTES = jsonscan.MAX_DOCUMENT_BYTES
MAX_TOKENS = jsonscan.MAX_TOKENS
MAX_BRACKET_DEPTH = jsonscan.MAX_DEPTH
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
"""Names that print without backticks (when they are not keywords); mirrors IDENT in kernel.lark."""

_OPENERS = frozenset({"LPAR", "LSQB", "LBRACE"})
_CLOSERS = frozenset({"RPAR", "RSQB", "RBRACE"})
# The same brackets by their text (a token whose whole text is "(" can only be LPAR).
_OPENING_TEXTS = frozenset({"(", "[", "{"})
_CLOSING_TEXTS = frozenset({")", "]", "}"})
_BRACKET_STEPS = {**dict.fromkeys(_OPENING_TEXTS, 1), **dict.fromkeys(_CLOSING_TEXTS, -1)}

_TERMINAL_WORDS: dict[str, str] = {
    "IDENT": "a name",
    "QUOTED_NAME": "a `quoted name`",
    "INT": "an integer",
    "LONG": "an I64 integer (42L)",
    "FLOAT": "an F64 number",
    "STRING": 'a "string"',
    "GUID": 'a guid"..." literal',
    "PATH": 'a path"..." literal',
    "URI": 'a uri"..." literal',
    "$END": "the end of the input",
}


# ---------------------------------------------------------------------------------------------
# The parser (built once)


class _Budget:
    """Lark post-lexer: counts tokens and bracket depth while lexing, so a token flood or a
    ``((((`` bomb fails at the first token past the budget instead of after a full parse."""

    always_accept: tuple[str, ...] = ()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        for count, token in enumerate(stream, 1):
            if count > MAX_TOKENS:
                raise too_many_tokens(token_span(token))
            if token.type in _OPENERS:
                depth += 1
                if depth > MAX_BRACKET_DEPTH:
                    raise too_deep(token_span(token))
            elif token.type in _CLOSERS:
                depth -= 1
            yield token


def too_many_tokens(span: Span) -> DotBoxDError:
    """The token budget is broken at ``span``."""
    return reject(
        "E-JSON-LIMIT",
        f"the text has more than {MAX_TOKENS} tokens",
        "",
        span,
        "split the module or simplify it",
        limit=MAX_TOKENS,
    )


def too_deep(span: Span) -> DotBoxDError:
    """The bracket-depth budget is broken at ``span``."""
    return reject(
        "E-JSON-LIMIT",
        f"brackets nest deeper than {MAX_BRACKET_DEPTH} levels",
        "",
        span,
        "flatten the module; like the wire format, the text form allows 64 nested levels",
        limit=MAX_BRACKET_DEPTH,
    )


@lru_cache(maxsize=1)
def parser() -> Lark:
    grammar = resources.files("dotboxd.grammar").joinpath("kernel.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="basic",
        keep_all_tokens=True,
        propagate_positions=True,
        postlex=_Budget(),
    )


def _ordered_terminals() -> list[TerminalDef]:
    """The grammar's terminals in the order Lark's basic lexer tries them: priority, then width,
    then pattern length, then name."""
    return sorted(
        parser().terminals,
        key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
    )


@lru_cache(maxsize=1)
def token_pattern() -> re.Pattern[str]:
    """One real token of ``kernel.lark`` (group ``token``) with the ignored text (blanks, comments)
    before it (group ``lead``).

    Built from the parser's own terminal list, in the lexer's order, with each choice atomic
    because the lexer never reconsiders a token it matched: it splits a text into exactly the
    lexer's tokens and cannot drift from the grammar (a test compares the two on the corpus and on
    token soup)."""
    ignored_names = parser().ignore_tokens
    ordered = _ordered_terminals()
    ignored = "|".join(t.pattern.to_regexp() for t in ordered if t.name in ignored_names)
    real = "|".join(t.pattern.to_regexp() for t in ordered if t.name not in ignored_names)
    return re.compile(f"(?P<lead>(?>(?:{ignored})*))(?P<token>(?>{real}))")


@lru_cache(maxsize=1)
def _non_bracket_token() -> re.Pattern[str]:
    """Any token but a bracket, ignored ones included, chosen as the lexer chooses (same order,
    atomic). Deleting its matches from lexable text leaves exactly the bracket tokens, in order."""
    brackets = _OPENERS | _CLOSERS
    return re.compile(
        "(?>" + "|".join(t.pattern.to_regexp() for t in _ordered_terminals() if t.name not in brackets) + ")"
    )


@lru_cache(maxsize=1)
def _budget_pattern() -> re.Pattern[str]:
    """Exactly ``MAX_TOKENS`` consecutive tokens from the start of the text (possessive: linear)."""
    unit = token_pattern().pattern.replace("(?P<lead>", "(?:").replace("(?P<token>", "(?:")
    return re.compile(f"(?:{unit}){{{MAX_TOKENS}}}+")


def _span_at(text: str, offset: int) -> Span:
    line_start = text.rfind("\n", 0, offset) + 1
    return Span(text.count("\n", 0, offset) + 1, offset - line_start + 1)


def check_token_budget(text: str) -> None:
    """E-JSON-LIMIT at the first token past ``MAX_TOKENS``, found before Lark runs.

    Lark builds a token object and takes a parser step per token, so a text just over the budget
    took seconds to reject; matching one compiled expression for the first ``MAX_TOKENS`` tokens
    takes a small fraction of a second, with no Python work per token. A text of at most
    ``MAX_TOKENS`` characters cannot break the budget (a token is at least one character) and is
    not scanned. The lexer would report whichever budget breaks first, so before the token budget
    is reported, the brackets of the tokens before it are checked for depth. When a character no
    terminal matches comes first, nothing is reported here: the parser names it. The lexer's own
    count (``_Budget``) stays as the backstop."""
    if len(text) <= MAX_TOKENS:
        return
    budget = _budget_pattern().match(text)
    if budget is None:
        return
    extra = token_pattern().match(text, budget.end())
    if extra is None:
        return
    if _deepest_before(text, budget.end()) > MAX_BRACKET_DEPTH:
        _raise_depth_before(text, budget.end())
    raise too_many_tokens(_span_at(text, extra.start("token")))


def _deepest_before(text: str, end: int) -> int:
    """The deepest bracket nesting among the tokens of ``text[:end]``, computed without a Python
    step per token: deleting every other token, mapping brackets to +1/-1 and the running sum all
    stay in C. Skipped when the text holds too few opening bracket characters to nest that deep."""
    if sum(text.count(opener, 0, end) for opener in _OPENING_TEXTS) <= MAX_BRACKET_DEPTH:
        return 0
    brackets = _non_bracket_token().sub("", text[:end])
    steps = map(_BRACKET_STEPS.get, brackets, itertools.repeat(0))
    return max(itertools.accumulate(steps), default=0)


def _raise_depth_before(text: str, end: int) -> None:
    """Raise the depth error at the first bracket in ``text[:end]`` nested deeper than allowed."""
    offset = 0
    depth = 0
    for lead, token in token_pattern().findall(text, 0, end):
        offset += len(lead)
        if token in _OPENING_TEXTS:
            depth += 1
            if depth > MAX_BRACKET_DEPTH:
                raise too_deep(_span_at(text, offset))
        elif token in _CLOSING_TEXTS:
            depth -= 1
        offset += len(token)


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """The reserved words of the grammar (every literal terminal that looks like a plain name); a
    name equal to one of them must be written in backticks."""
    return frozenset(
        t.pattern.value
        for t in parser().terminals
        if isinstance(t.pattern, PatternStr) and PLAIN_NAME.fullmatch(t.pattern.value)
    )


def is_plain_name(name: str) -> bool:
    """True when ``name`` can be written without backticks."""
    return PLAIN_NAME.fullmatch(name) is not None and name not in keywords()


def token_span(token: Token) -> Span:
    """The 1-based line:column where ``token`` starts (and, on one line, where it ends)."""
    end = token.end_column if token.end_line == token.line and token.end_column else 0
    return Span(token.line or 1, token.column or 1, end or 0)


# ---------------------------------------------------------------------------------------------
# Syntax errors and the source text


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    for terminal in parser().terminals:
        if terminal.name == name and isinstance(terminal.pattern, PatternStr):
            return f"'{terminal.pattern.value}'"
    return name


_TOKEN_NOUNS: dict[str, str] = {
    "IDENT": "name",
    "QUOTED_NAME": "quoted name",
    "INT": "integer",
    "LONG": "I64 integer",
    "FLOAT": "F64 number",
    "STRING": "string",
    "GUID": "guid literal",
    "PATH": "path literal",
    "URI": "uri literal",
}
"""How a *found* token is named: ``unexpected name 'y'`` (the expected list keeps its articles:
``expected one of a name, an integer``)."""


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of the input"
    if token.type in _TOKEN_NOUNS:
        return f"{_TOKEN_NOUNS[token.type]} {str(token)[:40]!r}"
    return f"'{token}'"


def _expected_list(names: set[str]) -> str:
    described = sorted({_describe_terminal(n) for n in names})
    if len(described) == 1:
        return described[0]
    return "one of " + ", ".join(described)


_GENERIC_CALL_ATTEMPT = re.compile(r"[A-Za-z0-9_`]\s*<\s*[A-Za-z_`][^;{}<>]*$")
_TRAILING_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")
_LEADING_WORD = re.compile(r"(?:^|[;{}])\s*([A-Za-z_][A-Za-z0-9_.]*)\s*$")
"""A word that begins a statement or an item (after ``;``, ``{``, ``}`` or at the start)."""

DECLARATION_WORDS = frozenset({"let", "var", "val", "const", "mut", "auto", "def", "local"})
"""Declaration keywords of other languages: the text form has none (a local is created by its first
assignment), so ``let y = 1;`` gets a hint saying so instead of a complaint about the name ``y``."""

_EXAMPLE_OF: dict[str, str] = {
    "return": "return x;",
    "if": "if x > 0 { ... }",
    "while": "while x > 0 { ... }",
    "for": "for i in 0 .. n { ... }",
    "fn": "fn f(x I32) -> I32 { ... }",
    "entrypoint": "entrypoint fn main() -> I32 { ... }",
}


def _statement_word_hint(token: Token | None, before: str) -> str | None:
    """A hint when a name or literal follows a word that starts a statement or item: a declaration
    keyword of another language (``let y = 1;``) or a misspelt keyword (``retrun x;``)."""
    if token is None or token.type not in (*_TOKEN_NOUNS, "LPAR", "BANG", "MINUS"):
        return None
    match = _LEADING_WORD.search(before[-200:])
    if match is None:
        return None
    word = match.group(1)
    if word in DECLARATION_WORDS:
        target = str(token) if token.type == "IDENT" else "y"
        return (
            f"'{word}' is not part of the text form: a local is created by its first assignment, "
            f"so write `{target} = ...;`"
        )
    close = close_matches(word, keywords(), n=1)
    if close and word not in keywords():
        keyword = close[0]
        example = _EXAMPLE_OF.get(keyword)
        return f"did you mean the keyword '{keyword}'?" + (f" e.g. `{example}`" if example else "")
    return None


_STATEMENT_FORMS = (
    "a statement is `name = expr;`, `expr;`, `return expr;` (`return ();` in a Unit function), "
    "`if`, `while`, `for`, `break;` or `continue;`"
)


def _hint_for(expected: set[str], token: Token | None, before: str) -> str:
    """A hint for a syntax error; ``before`` is the source text up to the offending token."""
    keyword: str | None = None
    if token is not None and str(token) in keywords() and "IDENT" in expected:
        keyword = str(token)  # `fn if() ...`: a keyword where a name is due
    elif token is not None and token.type == "EQUAL":
        word = _TRAILING_WORD.search(before[-200:])  # `if = 1;`: assigning to a keyword
        if word is not None and word.group(1) in keywords():
            keyword = word.group(1)
    if keyword is not None:
        return f"'{keyword}' is a keyword; a name spelled like a keyword is written in backticks: `{keyword}`"
    if token is not None and token.type == "IDENT":
        # a misspelt keyword where keywords are due: `entrypont fn`, `modul "m"`
        wanted = {_describe_terminal(n).strip("'") for n in expected} & keywords()
        suggestion = did_you_mean(str(token), wanted, n=1)
        if suggestion:
            return suggestion
    word_hint = _statement_word_hint(token, before)
    if word_hint is not None:
        return word_hint
    if token is not None and token.type in ("LT", "LTE", "GT", "GTE", "EQ", "NE"):
        if _GENERIC_CALL_ATTEMPT.search(before[-200:]) and token.type == "GT":
            return "a generic call is written with brackets: list.empty[I32]()"
        return "comparisons do not chain; add parentheses: (a < b) == c"
    if "SEMICOLON" in expected and token is not None and token.type == "$END":
        return "simple statements and declarations end with ';'"
    if "SEMICOLON" in expected and token is not None and token.type in _TOKEN_NOUNS:
        return "two operands in a row: an operator or ';' is missing between them"
    if "SEMICOLON" in expected:
        return "simple statements and declarations end with ';'"
    if "RBRACE" in expected and (token is None or token.type == "$END"):
        return "the text ends inside a block: close every '{' with '}'"
    if "RBRACE" in expected or "RETURN" in expected:
        return _STATEMENT_FORMS
    return 'a module is `module "id" version "1.0.0";`, then `requires`, `meta` and `fn` items'


def syntax_error(exc: UnexpectedInput, source: str) -> DotBoxDError:
    if isinstance(exc, UnexpectedCharacters):
        span = Span(exc.line, exc.column)
        ch = exc.char
        if ch in '"`':
            return reject(
                "E-TEXT-SYNTAX",
                "unterminated string or name: the closing quote is missing on this line",
                "",
                span,
                "a literal ends on the line where it starts; write line breaks as \\n",
            )
        shown = repr(ch) if ch.isprintable() else f"U+{ord(ch):04X}"
        return reject(
            "E-TEXT-SYNTAX",
            f"unexpected character {shown}",
            "",
            span,
            "names with other characters are written in backticks: `odd name`",
        )
    if isinstance(exc, UnexpectedToken):
        token = exc.token
        expected = set(exc.accepts or exc.expected)
        at_end = token.type == "$END"
        span = _end_span(source) if at_end else token_span(token)
        before = source if at_end else source[: token.start_pos]
        message = f"unexpected {_describe_token(token)}; expected {_expected_list(expected)}"
        if "SEMICOLON" in expected and not at_end and _end_span(before).line < span.line:
            # A forgotten ';' is noticed on the next line; point at the end of the unfinished one.
            message = f"missing ';' (found {_describe_token(token)} on line {span.line}); expected " + (
                _expected_list(expected)
            )
            span = _end_span(before)
        return reject("E-TEXT-SYNTAX", message, "", span, _hint_for(expected, token, before))
    if isinstance(exc, UnexpectedEOF):
        expected = set(exc.expected)
        return reject(
            "E-TEXT-SYNTAX",
            f"unexpected end of the input; expected {_expected_list(expected)}",
            "",
            _end_span(source),
            _hint_for(expected, None, source),
        )
    return reject("E-TEXT-SYNTAX", "the text does not parse", "", Span(1, 1))


def _end_span(source: str) -> Span:
    """Just after the last non-blank character, so the caret excerpt shows where the text stops."""
    text = source.rstrip()
    lines = text.split("\n")
    return Span(len(lines), len(lines[-1]) + 1)


def source_text(source: str | bytes, filename: str) -> str:
    """Decode and size-check the source (budgets before any parsing)."""
    return bounded_text(
        source,
        MAX_SOURCE_BYTES,
        what=filename,
        invalid_code="E-TEXT-SYNTAX",
        utf8_hint="the text form is UTF-8 only",
    )
