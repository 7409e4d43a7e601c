"""``treeops.clone`` and ``treeops.nodes`` stand in for ``copy.deepcopy`` and ``ast.walk``.

Why: the chunk rewrites swapped to them for compile latency (issue 16) on the promise that the
generated code cannot tell the difference; these tests hold them to it on real generated modules
(positioned twin classes, shared context nodes) and on a tree that shares a subtree.
"""

from __future__ import annotations

import ast
import copy

import pytest

from dotboxd.conformance.generator import RandomSource, build_program
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized import pyast as P
from dotboxd.runtime.optimized.treeops import clone, nodes
from tests.benchmarks.test_bench_backends import WORKLOADS, _plan


def _modules() -> list[ast.Module]:
    modules = []
    for name in WORKLOADS:
        module = compile_plan(_plan(name, False), keep_module=True).module
        assert module is not None
        modules.append(module)
    for seed in range(6):
        program = build_program(RandomSource(f"treeops-{seed}"))
        raw = {"policy": program.policy_json, "bindings": program.bindings_json}
        module = compile_plan(validate_case(program.module, raw, None).plan, keep_module=True).module
        assert module is not None
        modules.append(module)
    return modules


_MODULES = _modules()


@pytest.mark.parametrize("module", _MODULES)
def test_nodes_lists_what_ast_walk_yields_in_its_order(module: ast.Module) -> None:
    walked = list(ast.walk(module))
    listed = nodes(module)
    assert len(listed) == len(walked)
    assert all(a is b for a, b in zip(listed, walked, strict=True))
    for stmt in module.body[0].body:  # type: ignore[attr-defined]
        assert [id(n) for n in nodes(stmt)] == [id(n) for n in ast.walk(stmt)]


@pytest.mark.parametrize("module", _MODULES)
def test_clone_is_a_deepcopy(module: ast.Module) -> None:
    cloned, copied = clone(module), copy.deepcopy(module)
    assert ast.unparse(cloned) == ast.unparse(module)
    assert ast.dump(cloned, include_attributes=True) == ast.dump(copied, include_attributes=True)
    fresh, deep, original = nodes(cloned), nodes(copied), nodes(module)
    assert [type(n) for n in fresh] == [type(n) for n in deep] == [type(n) for n in original]
    assert [sorted(vars(n)) for n in fresh] == [sorted(vars(n)) for n in deep]
    assert not {id(n) for n in fresh} & {id(n) for n in original}  # nothing of the original is reused
    # the same sharing as deepcopy: a node twice in the original is one node twice in the copy
    assert len({id(n) for n in fresh}) == len({id(n) for n in deep})


def test_clone_keeps_a_shared_subtree_shared_and_copies_lists() -> None:
    shared = P.add(P.name("a"), P.const(1))
    stmt = P.assign("t0", P.mul(shared, shared))
    cloned = clone(stmt)
    value = cloned.value
    assert isinstance(value, ast.BinOp)
    assert value.left is value.right and value.left is not shared
    assert cloned.targets is not stmt.targets and cloned.targets[0] is not stmt.targets[0]
    assert type(cloned) is type(stmt) and ast.unparse(cloned) == "t0 = (a + 1) * (a + 1)"
    tupled = ast.Constant(value=(1, (2, 3)))
    assert clone(tupled).value == (1, (2, 3))
