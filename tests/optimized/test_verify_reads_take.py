"""``verify_reads.is_take`` written out agrees with the rule it stands for (issue 16).

Why: the verifier asks ``is_take`` of every assignment, so it no longer goes through ``_assign`` and
``_name``; it must still answer exactly ``_assign(stmt)`` is a view name or a ``_p_lbuf`` call, for
the generator's statements and for tampered ones (plain and positioned classes, a loaded or
non-text target, several targets, a type comment, a subscript target, names like a view).
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from dotboxd.runtime.optimized import compile_plan, verify_reads
from dotboxd.runtime.optimized import pyast as P
from tests.benchmarks.test_bench_backends import WORKLOADS, _plan


def _by_the_rule(stmt: Any) -> bool:
    found = verify_reads._assign(stmt)
    return found is not None and (
        verify_reads.VIEW.match(found[0]) is not None or verify_reads._call(found[1], verify_reads.TAKE)
    )


def _variants(stmt: ast.Assign) -> list[Any]:
    out: list[Any] = [stmt]
    target = stmt.targets[0]
    for change in ("load", "number", "view", "big", "two", "comment", "plain", "subscript", "take"):
        twin: Any = copy.deepcopy(stmt)
        if change == "load" and isinstance(target, ast.Name):
            twin.targets[0].ctx = ast.Load()
        elif change == "number" and isinstance(target, ast.Name):
            twin.targets[0].id = 7
        elif change in ("view", "big") and isinstance(target, ast.Name):
            twin.targets[0].id = "g12" if change == "view" else "g12345678"
        elif change == "two":
            twin.targets.append(copy.deepcopy(target))
        elif change == "comment":
            twin.type_comment = "int"
        elif change == "plain":
            twin = ast.Assign(targets=twin.targets, value=twin.value, lineno=1)
        elif change == "subscript":
            twin.targets[0] = ast.Subscript(P.name("v1"), P.const(0), ast.Store())
        elif change == "take":
            twin.value = P.call(verify_reads.TAKE, P.name("v1"))
        out.append(twin)
    return out


def test_is_take_answers_as_assign_and_name_do() -> None:
    seen = taken = 0
    for name in WORKLOADS:
        module = compile_plan(_plan(name, True), keep_module=True).module
        assert module is not None
        for stmt in [node for node in ast.walk(module) if isinstance(node, ast.Assign)]:
            for variant in _variants(stmt):
                assert verify_reads.is_take(variant) == _by_the_rule(variant)
                seen += 1
                taken += _by_the_rule(variant)
    assert seen > 1000 and 0 < taken < seen  # both answers were given, many times
