"""Parse the readable text form (``kernel.lark``) into the typed AST.

The text form is a second spelling of wire format v1, not a second language: it must accept exactly
the modules the wire importer accepts and reject the rest with the same codes. So literal and
identifier rules come from ``dotboxd.grammar.literals`` (shared with ``wire``), every node gets the
JSON pointer it would have in the wire form (diagnostics compare across forms), and after the tree
is built its wire form is run through the wire scanner's budgets (depth, tokens, string sizes), so a
text module is never accepted when its JSON twin would be rejected.

Hostile input is bounded before any recursion: the source is capped at 1 MiB, the token stream at
100,000 tokens (counted by a one-expression pre-pass before Lark runs, so a token flood is refused
in milliseconds, and again while lexing) and 64 nested brackets (checked while lexing, ``text_syntax``), and the parse tree's
depth is measured iteratively before the recursive tree-to-AST walk (``text_build``) runs. Every
failure is a DotBoxDError.
"""

from __future__ import annotations

import json

from lark.exceptions import LarkError, UnexpectedInput

from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.grammar import jsonscan
from dotboxd.grammar.text_build import MAX_TREE_DEPTH, TreeBuilder, check_tree_depth
from dotboxd.grammar.text_syntax import (
    check_token_budget,
    is_plain_name,
    keywords,
    parser,
    source_text,
    syntax_error,
)
from dotboxd.grammar.wire import to_wire


def _check_wire_budgets(module: ast.Module, spans: dict[str, Span]) -> None:
    """Run the module's compact wire form through the wire scanner, so the text form never accepts
    a module whose JSON twin breaks a wire budget (depth 64, tokens, items, string bytes)."""
    text = json.dumps(to_wire(module), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        jsonscan.scan_document(text)
    except DotBoxDError as exc:
        d = exc.diagnostic
        pointer = d.pointer
        span = spans.get(pointer)
        probe = pointer
        while span is None and probe:
            probe = probe.rsplit("/", 1)[0]
            span = spans.get(probe)
        raise reject(
            d.code,
            f"the module's wire form breaks an import budget: {d.message}",
            pointer,
            span,
            d.hint,
            **dict(d.evidence),
        ) from None


# ---------------------------------------------------------------------------------------------
# Public API


def parse_text(source: str | bytes, filename: str = "<text>") -> ast.Module:
    """Parse the readable text form into a Module (nodes carry wire pointers and text spans).

    ``filename`` only names the source in messages about the file as a whole (size, encoding).
    Raises DotBoxDError: E-TEXT-SYNTAX for text that does not parse, E-JSON-LIMIT for budgets, and
    the wire importer's codes (E-IR-ID, E-IR-CLR-REF, E-JSON-PATH, E-JSON-TYPE, ...) for bad names
    and literals. Never any other exception.
    """
    text = source_text(source, filename)
    check_token_budget(text)
    try:
        tree = parser().parse(text)
    except UnexpectedInput as exc:
        raise syntax_error(exc, text) from None
    except LarkError as exc:  # no other Lark error is known to reach here; stay a diagnostic if one does
        raise reject(
            "E-TEXT-SYNTAX", f"the text does not parse ({type(exc).__name__})", "", Span(1, 1)
        ) from None
    check_tree_depth(tree)
    builder = TreeBuilder()
    module = builder.module(tree)
    _check_wire_budgets(module, builder.spans)
    return module


__all__ = ["MAX_TREE_DEPTH", "is_plain_name", "keywords", "parse_text"]
