"""Properties over generated ASTs: the formatter's text re-parses to the same tree, and
text -> AST -> JSON -> AST is the identity (with the same pointers in both forms)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from hypothesis import given

from dotboxd.core import ast
from dotboxd.grammar.formatter import format_module
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import dumps_wire, import_module
from tests.strategies.ast_strategies import modules


def iter_nodes(node: ast.Node) -> Iterator[ast.Node]:
    """Every node of a tree in a fixed pre-order (fields in declaration order)."""
    stack: list[ast.Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        children: list[ast.Node] = []
        for f in dataclasses.fields(current):
            value = getattr(current, f.name)
            if isinstance(value, ast.Node):
                children.append(value)
            elif isinstance(value, tuple):
                children.extend(v for v in value if isinstance(v, ast.Node))
        stack.extend(reversed(children))


@given(modules())
def test_formatter_output_reparses_to_the_same_tree(module: ast.Module) -> None:
    text = format_module(module)
    parsed = parse_text(text)
    assert parsed == module
    # Equality ignores float signs of zero and int/float identity; the wire text does not.
    assert dumps_wire(parsed) == dumps_wire(module)
    assert format_module(parsed) == text  # canonical: printing is a fixed point


@given(modules())
def test_text_to_wire_to_ast_is_the_identity(module: ast.Module) -> None:
    from_text = parse_text(format_module(module))
    from_wire = import_module(dumps_wire(from_text))
    assert from_wire == from_text
    assert dumps_wire(from_wire) == dumps_wire(from_text)
    text_pointers = [n.pointer for n in iter_nodes(from_text)]
    assert text_pointers == [n.pointer for n in iter_nodes(from_wire)]
    assert all(n.span is not None for n in iter_nodes(from_text))
    assert len(set(text_pointers)) == len(text_pointers)  # one node per wire location
