"""Generated code runs in a fresh namespace with empty builtins and nothing but the stub table."""

from __future__ import annotations

import builtins

from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.stubs import PURE_HELPERS, RANGE_NAME, STUBS
from dotboxd.runtime.optimized.verifier import allowed_globals

from .kernels import FEATURES, prepare


def test_functions_see_empty_builtins_and_only_allowed_names() -> None:
    artifact = compile_plan(prepare(FEATURES))
    allowed = allowed_globals(artifact.tables)
    for function in artifact.functions.values():
        namespace = function.__globals__
        assert namespace["__builtins__"] == {}
        assert set(namespace) - {"__builtins__"} <= allowed
        assert not any(name in namespace for name in ("open", "eval", "exec", "getattr", "__import__"))
        assert function.__closure__ is None


def test_each_artifact_gets_its_own_namespace() -> None:
    first = compile_plan(prepare(FEATURES))
    second = compile_plan(prepare(FEATURES))
    one = next(iter(first.functions.values())).__globals__
    two = next(iter(second.functions.values())).__globals__
    assert one is not two


def test_the_stub_table_holds_no_builtins_that_reach_the_host() -> None:
    dangerous = {
        "open",
        "eval",
        "exec",
        "compile",
        "getattr",
        "setattr",
        "__import__",
        "globals",
        "vars",
        "input",
    }
    values = {*STUBS.values(), *PURE_HELPERS.values()}
    assert not any(value is getattr(builtins, name) for name in dangerous for value in values)
    assert RANGE_NAME == "_range"
