"""``walk_index`` serves ``shapes.walk`` inside the verifier with exactly the walk's own nodes.

Why: the verifier's plan ties read their walks from one shared index of each function (issue 16); a
check may only be fed from it if it sees the very nodes, in the very order, its own walk would show
it - else a rule could pass or fail on another node first. Checked on every node of real generated
functions, and on a tree that holds one node twice (the generator shares some nodes).
"""

from __future__ import annotations

import ast
from typing import Any

from dotboxd.runtime.optimized import compile_plan, shapes
from dotboxd.runtime.optimized import pyast as P
from dotboxd.runtime.optimized.walk_index import indexed_walks, subtree
from tests.benchmarks.test_bench_backends import WORKLOADS, _plan


def _own_walk(node: ast.AST) -> list[int]:
    return [id(n) for n in shapes._walk(node)]


def _agrees_everywhere(fn: Any) -> None:
    with indexed_walks():
        assert subtree(fn.body[0]) is None  # a statement before its function: walked on its own
        whole = list(shapes.walk(fn))
        assert [id(n) for n in whole] == _own_walk(fn)
        for node in whole:
            indexed = subtree(node)
            assert indexed is not None
            assert [id(n) for n in indexed] == _own_walk(node)
            assert [id(n) for n in shapes.walk(node)] == _own_walk(node)
    assert subtree(fn) is None  # outside the verifier: no index


def test_every_node_of_generated_functions_walks_as_it_would_on_its_own() -> None:
    for name in WORKLOADS:
        module = compile_plan(_plan(name, False), keep_module=True).module
        assert isinstance(module, ast.Module)
        for fn in module.body:
            _agrees_everywhere(fn)


def test_a_node_held_twice_walks_the_same_from_either_place() -> None:
    shared = P.add(P.name("v1"), P.const(1))
    fn = P.function("_fn0", ["R", "f"], [P.assign("t0", P.mul(shared, shared)), P.ret(shared)])
    _agrees_everywhere(fn)
