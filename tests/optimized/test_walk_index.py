"""``walk_index`` serves whole-function ``shapes.walk`` calls inside the verifier from one listing.

Why: the verifier's plan ties walk each function whole several times and read one shared listing
of it instead (issue 16); a check may only be fed from it if it sees the very nodes, in the very
order, its own walk would show it - else a rule could pass or fail on another node first.
"""

from __future__ import annotations

import ast
from typing import Any

from dotboxd.runtime.optimized import compile_plan, shapes
from dotboxd.runtime.optimized import pyast as P
from dotboxd.runtime.optimized.walk_index import indexed_walks, listed
from tests.benchmarks.test_bench_backends import WORKLOADS, _plan


def _own_walk(node: ast.AST) -> list[int]:
    """``shapes.walk`` as it walked before the index: a generator over a plain stack."""
    out: list[int] = []
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        out.append(id(current))
        for field in current._fields:
            value = getattr(current, field, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return out


def _agrees(fn: Any) -> None:
    with indexed_walks():
        first = list(shapes.walk(fn))
        assert [id(n) for n in first] == _own_walk(fn)
        shared = listed(fn, lambda node: [])
        assert shared is not None and [id(n) for n in shared] == _own_walk(fn)  # listed once, kept
        assert [id(n) for n in shapes.walk(fn)] == _own_walk(fn)
        for stmt in fn.body:
            assert listed(stmt, lambda node: []) is None  # a statement walks on its own
            assert [id(n) for n in shapes.walk(stmt)] == _own_walk(stmt)
    assert listed(fn, lambda node: []) is None  # outside the verifier: nothing shared
    assert [id(n) for n in shapes.walk(fn)] == _own_walk(fn)


def test_generated_functions_walk_as_they_would_on_their_own() -> None:
    for name in WORKLOADS:
        module = compile_plan(_plan(name, False), keep_module=True).module
        assert isinstance(module, ast.Module)
        for fn in module.body:
            _agrees(fn)


def test_a_node_held_twice_is_walked_at_both_places() -> None:
    shared = P.add(P.name("v1"), P.const(1))
    fn = P.function("_fn0", ["R", "f"], [P.assign("t0", P.mul(shared, shared)), P.ret(shared)])
    _agrees(fn)
    assert sum(1 for node in shapes.walk(fn) if node is shared) == 3


def test_list_items_that_are_not_nodes_are_passed_over_in_place() -> None:
    """``shapes.walk`` pushes a list field whole and drops what is not a node when it pops it
    (issue 16): lists mixing nodes with names, ``None``, text and a nested list (a ``global``, a
    dict display with a ``**`` entry, hand-tampered values) list the same nodes in the same order."""
    mixed = ast.Dict(keys=[None, P.const(1), "junk"], values=[P.name("v1"), [P.name("v2")], P.name("v3")])
    fn = P.function(
        "_fn0",
        ["R", "f"],
        [ast.Global(names=["v1", "v2"]), P.assign("t0", mixed), P.ret(P.tuple_(P.name("t0"), P.name("f")))],
    )
    _agrees(fn)
    assert sum(1 for node in shapes.walk(fn) if type(node) in shapes.NAMES) == 5
