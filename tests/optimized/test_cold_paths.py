"""Cold exact paths: built on first need, checked like everything else, exact, and fail closed.

The exact per-iteration path of a fast bulk loop lives in a cold function ``_x<i>`` that is
generated, verified and compiled only when a run first needs it (``runtime/optimized/cold.py``).
These tests hold that machinery to its promises: nothing is built before a run needs it; what is
built agrees with the reference interpreter charge by charge (including after a disk-cache load);
the cold module goes through the same verifier (its own tampered forms are all refused); and a cold
path that cannot be built ends the run with ``R-HOST-INTERNAL`` without running anything.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dotboxd.core.values import Value
from dotboxd.host import SandboxHost
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.optimized import Artifact, ArtifactCache, compile_plan
from dotboxd.runtime.optimized import artifact as artifact_module
from dotboxd.runtime.optimized.artifact import ArtifactKey, bind
from dotboxd.runtime.optimized.codegen import GenOptions, generate, generate_cold
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.runtime.optimized.tables import Tables
from dotboxd.runtime.optimized.verifier import verify_cold_module, verify_module

from .differential import differences, observe
from .kernels import LOOPS_AND_FAULTS, double, policy, prepare

KERNEL = """module "cold" version "1.0.0";
fn sq(x I32) -> I32 { return x * x + 1; }
entrypoint fn main(n I32, d I32) -> I32 {
    acc = 0;
    for i in 0 .. n {
        if i == d { break; }
        acc = (acc + sq(i % 50)) % 10007;
        if acc % 5 == 1 { continue; }
        acc = acc + 1;
    }
    k = n;
    while k > 0 {
        k = k - 1;
        if k == d { return acc - 1; }
        acc = (acc * 3 + k) % 1009;
    }
    return acc;
}
"""

PLAN = prepare(KERNEL)
ARGS = [40, 100]


class _Pinned:
    """A backend running one given artifact (the run's limits come from the plan's policy)."""

    name = "optimized"

    def __init__(self, artifact: Artifact) -> None:
        self.artifact = artifact

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        return self.artifact.run(run, function_id, args)


def _compare(artifact: Artifact, args: list[Any], **limits: int) -> dict[str, Any]:
    plan = dataclasses.replace(PLAN, policy=policy(**limits))
    host = SandboxHost(bindings=[double], backends={"optimized": _Pinned(artifact)})
    reference = observe(host.execute(plan, "main", list(args)))
    optimized = observe(host.execute(plan, "main", list(args), backend="optimized"))
    diff = differences(reference, optimized)
    assert not diff, f"{limits}:\n  " + "\n  ".join(diff)
    return optimized


def _fuel_needed(args: list[Any]) -> int:
    host = SandboxHost(bindings=[double])
    return host.execute(PLAN, "main", list(args)).usage.fuel_used


def test_the_hot_module_calls_cold_paths_instead_of_holding_them() -> None:
    generated = generate(PLAN)
    assert len(generated.tables.colds) == 2  # the forRange and the while loop are both fast
    calls = {
        node.func.id
        for node in ast.walk(generated.module)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert {"_x0", "_x1"} <= calls
    assert "_s_liter" in calls  # the forRange loop still charges its exact iteration inline


def test_nothing_is_built_until_a_run_needs_an_exact_iteration() -> None:
    artifact = compile_plan(PLAN)
    assert artifact.cold.count == 2 and not artifact.cold.built
    _compare(artifact, ARGS)  # plenty of fuel: every iteration runs in bulk chunks
    assert not artifact.cold.built
    _compare(artifact, ARGS, max_fuel=_fuel_needed(ARGS) // 2)  # runs out inside the first loop
    assert artifact.cold.built


def test_every_fuel_budget_agrees_through_the_cold_paths() -> None:
    artifact = compile_plan(PLAN)
    for args in (ARGS, [40, 7], [30, 12]):
        needed = _fuel_needed(args)
        for fuel in range(0, needed + 2, 3):
            _compare(artifact, args, max_fuel=fuel)
    assert artifact.cold.built


def test_every_loop_budget_agrees_through_the_cold_paths() -> None:
    artifact = compile_plan(PLAN)
    for loops in range(0, 90, 4):
        _compare(artifact, ARGS, max_loop_iterations=loops)


def test_frames_short_for_inlined_calls_run_every_iteration_on_the_cold_path() -> None:
    artifact = compile_plan(PLAN)
    for depth in (1, 2, 3):
        _compare(artifact, [12, 100], max_call_depth=depth)


def test_an_artifact_loaded_from_disk_builds_its_cold_paths_from_the_plan(tmp_path: Path) -> None:
    ArtifactCache(directory=tmp_path).get_or_compile(PLAN)
    reader = ArtifactCache(directory=tmp_path)
    loaded = reader.get_or_compile(PLAN)
    assert reader.stats.disk_hits == 1 and not loaded.cold.built
    _compare(loaded, [40, 7], max_fuel=_fuel_needed([40, 7]) - 3)
    assert loaded.cold.built


def test_a_cold_path_that_fails_verification_fails_the_run_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[bool] = []

    def tampered(plan: Any, tables: Tables) -> ast.Module:
        module = generate_cold(plan, tables)
        first = module.body[0]
        assert isinstance(first, ast.FunctionDef)
        first.body[0:0] = ast.parse("import os").body
        ast.fix_missing_locations(module)
        ran.append(True)
        return module

    monkeypatch.setattr(artifact_module, "generate_cold", tampered)
    artifact = compile_plan(PLAN)
    plan = dataclasses.replace(PLAN, policy=policy(max_fuel=_fuel_needed(ARGS) // 2))
    host = SandboxHost(bindings=[double], backends={"optimized": _Pinned(artifact)})
    for _ in range(2):  # the failure is remembered: no second attempt
        result = host.execute(plan, "main", list(ARGS), backend="optimized")
        assert not result.ok and result.error is not None
        assert result.error.code == "R-HOST-INTERNAL"
    assert ran == [True] and not artifact.cold.built
    assert host.execute(PLAN, "main", list(ARGS), backend="optimized").ok  # bulk runs are unaffected


# --- the cold module goes through the verifier -----------------------------------------------


def _cold_parts() -> tuple[ast.Module, Tables]:
    tables = copy.deepcopy(generate(PLAN).tables)
    return generate_cold(PLAN, tables), tables


def _cold_fn(module: ast.Module, index: int = 0) -> ast.FunctionDef:
    fn = module.body[index]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def _insert(code: str) -> Callable[[ast.Module, Tables], None]:
    def mutate(module: ast.Module, tables: Tables) -> None:
        _cold_fn(module).body[0:0] = ast.parse(code).body

    return mutate


def _calls_a_cold_path(module: ast.Module, tables: Tables) -> None:
    params = ", ".join(a.arg for a in _cold_fn(module, 1).args.args)  # the right arity
    _cold_fn(module).body[0:0] = ast.parse(f"_x1({params})").body


def _short_return(module: ast.Module, tables: Tables) -> None:
    for node in ast.walk(_cold_fn(module)):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            node.value.elts.pop()
            return
    raise AssertionError("a cold function returns")


def _drop_function(module: ast.Module, tables: Tables) -> None:
    module.body.pop()


def _extra_param(module: ast.Module, tables: Tables) -> None:
    _cold_fn(module).args.args.append(ast.arg("v99"))


def _rename(module: ast.Module, tables: Tables) -> None:
    _cold_fn(module).name = "_fn0"


def _no_such_loop(module: ast.Module, tables: Tables) -> None:
    tables.colds[0] = (tables.colds[0][0], 99)


COLD_MUTATIONS: dict[str, Callable[[ast.Module, Tables], None]] = {
    "import": _insert("import os"),
    "attribute access": _insert("t90 = v0.real"),
    "dunder name": _insert("t90 = __builtins__"),
    "lambda": _insert("t90 = lambda: 1"),
    "string constant": _insert("t90 = 'x'"),
    "unlisted stub": _insert("_s_evil(R, f)"),
    "write to the frame budget": _insert("d = 10 ** 6"),
    "break outside a loop": _insert("break"),
    "a cold path calling a cold path": _calls_a_cold_path,
    "a return of the wrong shape": _short_return,
    "a cold path missing": _drop_function,
    "parameters differ from the loop's": _extra_param,
    "a plan function's name": _rename,
    "tables naming no loop": _no_such_loop,
}


def test_the_untampered_cold_module_passes() -> None:
    module, tables = _cold_parts()
    verify_cold_module(module, tables, PLAN)


@pytest.mark.parametrize("name", sorted(COLD_MUTATIONS))
def test_tampered_cold_module_is_rejected(name: str) -> None:
    module, tables = _cold_parts()
    COLD_MUTATIONS[name](module, tables)
    ast.fix_missing_locations(module)
    with pytest.raises(VerifierFailure):
        verify_cold_module(module, tables, PLAN)


def _cold_call(module: ast.Module) -> ast.Assign:
    for node in ast.walk(module):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "_x0":
                return node
    raise AssertionError("the hot module calls _x0")


def _hot_unpacks_too_few(module: ast.Module, tables: Tables) -> None:
    target = _cold_call(module).targets[0]
    assert isinstance(target, ast.Tuple)
    target.elts.pop()


def _hot_passes_too_many(module: ast.Module, tables: Tables) -> None:
    call = _cold_call(module).value
    assert isinstance(call, ast.Call)
    call.args.append(ast.Constant(1))


def _hot_unpacks_a_stub_into_four(module: ast.Module, tables: Tables) -> None:
    call = _cold_call(module).value
    assert isinstance(call, ast.Call)
    call.func = ast.Name("_s_liter", ast.Load())
    call.args = call.args[:3]


def _colds_name_no_loop(module: ast.Module, tables: Tables) -> None:
    tables.colds.append((tables.colds[0][0], 57))


HOT_MUTATIONS: dict[str, Callable[[ast.Module, Tables], None]] = {
    "cold results unpacked into too few names": _hot_unpacks_too_few,
    "cold path called with an extra argument": _hot_passes_too_many,
    "a stub's pair unpacked into four names": _hot_unpacks_a_stub_into_four,
    "tables list a cold path of no loop": _colds_name_no_loop,
}


@pytest.mark.parametrize("name", sorted(HOT_MUTATIONS))
def test_tampered_cold_calls_are_rejected(name: str) -> None:
    generated = generate(PLAN)
    module, tables = copy.deepcopy(generated.module), copy.deepcopy(generated.tables)
    HOT_MUTATIONS[name](module, tables)
    ast.fix_missing_locations(module)
    with pytest.raises(VerifierFailure):
        verify_module(module, tables, PLAN)
    with pytest.raises(VerifierFailure):
        bind(PLAN, ArtifactKey.for_plan(PLAN, GenOptions()), module, tables, generated.ir_nodes)


# --- generation does not depend on memory layout ----------------------------------------------


def test_generated_code_does_not_depend_on_what_else_was_allocated() -> None:
    """The generator once keyed sign facts by the ``id`` of operand nodes it could drop, so a later
    node reusing a freed ``id`` could inherit a stale "never negative" fact and lose its check; how
    often that happened depended on the allocator. The same plan must give the same module however
    the heap looks."""
    plans = [prepare(KERNEL), prepare(LOOPS_AND_FAULTS)]
    first = [ast.dump(generate(plan).module) for plan in plans]
    churn = [[ast.Name(str(i), ast.Load()) for i in range(n)] for n in range(1, 400)]
    again = [ast.dump(generate(plan).module) for plan in plans]
    del churn
    gc.collect()
    third = [ast.dump(generate(plan).module) for plan in plans]
    assert first == again == third
