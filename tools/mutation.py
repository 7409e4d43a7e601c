"""A small AST mutation tester for the validator and the file facade (``make mutation``).

Why our own instead of mutmut or cosmic-ray: the ``dotboxd.*`` namespace is assembled from several
top-level folders (setuptools ``package-dir``), and mutmut 3 copies sources into ``mutants/`` under
their folder names, which the editable install never imports; cosmic-ray rewrites the files in place
and starts a fresh pytest per mutant (about 10 s of imports and collection each on this machine), too
slow for a run on two shared cores. This runner imports the library and the selected tests once, then
forks one child per mutant. The child recompiles the mutated module in a scratch namespace and swaps
the new code objects into the *existing* functions (so every module that imported them sees the
mutant, and classes keep their identity), then runs pytest in-process with ``-x``. A non-zero pytest
exit, a crash or a time-out kills the mutant; exit 0 means it survived.

Mutation sites are inside function bodies (plus module-level constants): comparison operators,
``and``/``or``, arithmetic operators, ``not`` removal, boolean and integer constants, and ``return``
values replaced by ``None``. Docstrings and annotations are never mutated.

Known blind spots (reported as survivors, never as kills): values computed at import or collection
time from the original code (for example parametrize lists) are not recomputed for the mutant.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import signal
import sys
import time
import types
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# module -> (source file, tests that cover it)
TARGETS: dict[str, tuple[str, list[str]]] = {
    "dotboxd.validator.policy_resolution": (
        "validator/policy_resolution.py",
        [
            "tests/validator/test_policy_resolution.py",
            "tests/validator/test_policy_resolution_edges.py",
            "tests/validator/test_conformance_cases.py",
            "tests/validator/test_threats.py",
            "tests/validator/test_policy.py",
            "tests/validator/test_plan.py",
        ],
    ),
    "dotboxd.runtime.facades.files": (
        "runtime/facades/files.py",
        [
            "tests/runtime/test_file_facades.py",
            "tests/runtime/test_file_facade_hardening.py",
            "tests/conformance/test_standard_bindings.py",
        ],
    ),
    "dotboxd.validator.capabilities": (
        "validator/capabilities.py",
        [
            "tests/validator/test_policy_resolution.py",
            "tests/validator/test_threats.py",
            "tests/validator/test_effects.py",
            "tests/validator/test_plan.py",
        ],
    ),
    "dotboxd.validator.effects": (
        "validator/effects.py",
        [
            "tests/validator/test_effects.py",
            "tests/validator/test_threats.py",
            "tests/validator/test_policy_resolution.py",
            "tests/validator/test_plan.py",
        ],
    ),
    "dotboxd.validator.call_graph": (
        "validator/call_graph.py",
        [
            "tests/validator/test_body_passes.py",
            "tests/validator/test_threats.py",
            "tests/validator/test_policy_resolution.py",
            "tests/validator/test_effects.py",
        ],
    ),
    "dotboxd.validator.structure": (
        "validator/structure.py",
        [
            "tests/validator/test_structure.py",
            "tests/validator/test_nesting_boundary.py",
            "tests/validator/test_threats.py",
        ],
    ),
    "dotboxd.validator.policy": (
        "validator/policy.py",
        [
            "tests/validator/test_policy.py",
            "tests/validator/test_conformance_cases.py",
            "tests/validator/test_policy_resolution.py",
            "tests/validator/test_plan.py",
            "tests/validator/test_threats.py",
        ],
    ),
    "dotboxd.validator.typecheck": (
        "validator/typecheck.py",
        [
            "tests/validator/test_types.py",
            "tests/validator/test_builtins.py",
            "tests/validator/test_body_passes.py",
            "tests/validator/test_threats.py",
        ],
    ),
}

COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}


@dataclass(frozen=True)
class Mutant:
    module: str
    index: int
    line: int
    function: str
    description: str


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed | survived | timeout | error
    seconds: float


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return isinstance(parent, ast.Expr) and isinstance(node, ast.Constant) and isinstance(node.value, str)


class _Sites(ast.NodeVisitor):
    """Numbers every mutation site in traversal order; ``apply`` re-walks and changes site ``n``."""

    def __init__(self, target: int | None = None) -> None:
        self.count = 0
        self.target = target
        self.found: list[tuple[int, str, str]] = []  # (line, function, description)
        self.function: list[str] = []
        self.applied = False

    def _site(self, node: ast.AST, description: str) -> bool:
        index = self.count
        self.count += 1
        self.found.append((getattr(node, "lineno", 0), ".".join(self.function) or "<module>", description))
        return index == self.target

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.function.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.function.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.function.append(node.name)
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.visit(statement)
        self.function.pop()

    def visit_Module(self, node: ast.Module) -> None:
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.visit(statement)
            elif isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
                self.visit(statement.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)  # never the annotation

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            swap = COMPARE_SWAPS.get(type(op))
            if swap is not None and self._site(node, f"{type(op).__name__} -> {swap.__name__}"):
                node.ops[i] = swap()
                self.applied = True
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        swap = ast.Or if isinstance(node.op, ast.And) else ast.And
        if self._site(node, f"{type(node.op).__name__} -> {swap.__name__}"):
            node.op = swap()
            self.applied = True
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = BINOP_SWAPS.get(type(node.op))
        if swap is not None and self._site(node, f"{type(node.op).__name__} -> {swap.__name__}"):
            node.op = swap()
            self.applied = True
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not) and self._site(node, "remove `not`"):
            node.op = ast.UAdd()  # placeholder, replaced below by the operand itself
            node._mutated = True  # type: ignore[attr-defined]
            self.applied = True
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            if self._site(node, f"{value} -> {not value}"):
                node.value = not value
                self.applied = True
        elif isinstance(value, int) and self._site(node, f"{value} -> {value + 1}"):
            node.value = value + 1
            self.applied = True

    def visit_Return(self, node: ast.Return) -> None:
        if (
            node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
            and self._site(node, "return value -> None")
        ):
            node.value = ast.Constant(value=None)
            self.applied = True
            return
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if _is_docstring(node.value, node):
            return
        self.generic_visit(node)


class _DropUAddNot(ast.NodeTransformer):
    """Turns the ``not`` placeholder (``+x`` from a ``not x``) into plain ``x``."""

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        return node.operand if getattr(node, "_mutated", False) else node


def discover(module: str, source: str) -> list[Mutant]:
    sites = _Sites()
    sites.visit(ast.parse(source))
    return [Mutant(module, i, line, fn, desc) for i, (line, fn, desc) in enumerate(sites.found)]


def mutated_code(source: str, filename: str, index: int) -> types.CodeType:
    tree = ast.parse(source)
    sites = _Sites(index)
    sites.visit(tree)
    assert sites.applied, f"site {index} not found"
    tree = ast.fix_missing_locations(_DropUAddNot().visit(tree))
    return compile(tree, filename, "exec")


def _functions(namespace: dict[str, Any], module: str) -> Iterator[tuple[str, types.FunctionType]]:
    """Every function defined in ``module`` reachable from its namespace, by qualified name."""
    seen: set[int] = set()

    def unwrap(value: Any) -> Iterator[types.FunctionType]:
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        if isinstance(value, property):
            for part in (value.fget, value.fset, value.fdel):
                if part is not None:
                    yield from unwrap(part)
            return
        while hasattr(value, "__wrapped__") and not isinstance(value, types.FunctionType):
            value = value.__wrapped__
        if isinstance(value, types.FunctionType) and value.__module__ == module:
            yield value
            if hasattr(value, "__wrapped__"):
                yield from unwrap(value.__wrapped__)

    def walk(space: dict[str, Any]) -> Iterator[tuple[str, types.FunctionType]]:
        for value in list(space.values()):
            if isinstance(value, type) and value.__module__ == module and id(value) not in seen:
                seen.add(id(value))
                yield from walk(dict(vars(value)))
                continue
            for function in unwrap(value):
                if id(function) not in seen:
                    seen.add(id(function))
                    yield function.__qualname__, function

    yield from walk(namespace)


INSTALL_FAILED = 6
RAISED = 7
SIMPLE = (int, float, str, bool, type(None), tuple, frozenset)


def install(module_name: str, code: types.CodeType) -> None:
    """Swap the mutant's code into the live module's functions and simple module-level constants."""
    live = importlib.import_module(module_name)
    scratch: dict[str, Any] = {
        "__name__": module_name,
        "__file__": live.__file__,
        "__package__": live.__package__,
        "__spec__": live.__spec__,
        "__builtins__": __builtins__,
    }
    exec(code, scratch)
    new_functions = dict(_functions(scratch, module_name))
    for qualname, old in _functions(vars(live), module_name):
        new = new_functions.get(qualname)
        if new is not None and new.__code__ != old.__code__:
            old.__code__ = new.__code__
            old.__defaults__ = new.__defaults__
            old.__kwdefaults__ = new.__kwdefaults__
    for name, value in scratch.items():
        old_value = vars(live).get(name, value)
        if isinstance(value, SIMPLE) and isinstance(old_value, SIMPLE) and value != old_value:
            setattr(live, name, value)


def run_one(mutant: Mutant, source: str, filename: str, tests: list[str], timeout: float) -> Outcome:
    import pytest

    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: install the mutant and run the tests, never return
        code = INSTALL_FAILED
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            signal.alarm(int(timeout) + 1)
            if mutant.index >= 0:
                install(mutant.module, mutated_code(source, filename, mutant.index))
            code = RAISED
            code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests]))
        except BaseException:
            pass
        finally:
            os._exit(code)
    deadline = start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return Outcome(mutant, "timeout", time.monotonic() - start)
        time.sleep(0.05)
    seconds = time.monotonic() - start
    if os.WIFEXITED(status):
        exit_code = os.WEXITSTATUS(status)
        if exit_code == 0:
            return Outcome(mutant, "survived", seconds)
        if exit_code in (1, 3, RAISED):  # a failing test, a pytest internal error, an escaped exception
            return Outcome(mutant, "killed", seconds)
        return Outcome(mutant, "error", seconds)  # 2 interrupted, 5 no tests, install failed: no kill
    return Outcome(mutant, "killed", seconds)  # died on a signal (alarm, crash)


def preload(module: str, source: str, filename: str, tests: list[str], timeout: float) -> float:
    """Import the library and collect the tests once, so each forked child starts warm; then run the
    unmutated tests in a child (so no test state lingers in the parent) and return how long they took."""
    import pytest

    code = pytest.main(["--collect-only", "-qq", "-p", "no:cacheprovider", *tests])
    if code != 0:
        raise SystemExit(f"collecting {tests} failed ({code})")
    baseline = run_one(Mutant(module, -1, 0, "-", "baseline"), source, filename, tests, timeout)
    if baseline.status != "survived":
        raise SystemExit(f"the unmutated tests do not pass ({baseline.status}): fix them before mutating")
    return baseline.seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="*", default=list(TARGETS), help="dotted module names")
    parser.add_argument(
        "--timeout", type=float, default=0.0, help="seconds per mutant (0: 6x the baseline, >= 15)"
    )
    parser.add_argument(
        "--budget", type=float, default=3600.0, help="total seconds; later mutants are skipped"
    )
    parser.add_argument("--results", default="reports/mutation-results.json")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    os.environ.setdefault("CI", "true")  # the derandomized, bounded Hypothesis profile
    sys.path.insert(0, str(ROOT))
    results_path = ROOT / args.results
    results: dict[str, Any] = json.loads(results_path.read_text()) if results_path.exists() else {}
    started = time.monotonic()
    for module in args.modules:
        filename, tests = TARGETS[module]
        source = (ROOT / filename).read_text(encoding="utf-8")
        mutants = discover(module, source)
        print(f"== {module}: {len(mutants)} mutants, tests {' '.join(tests)}", flush=True)
        baseline = preload(module, source, str(ROOT / filename), tests, args.timeout or 600.0)
        timeout = args.timeout or max(15.0, 6 * baseline)
        print(f"   baseline (unmutated) passes in {baseline:.1f}s; time-out {timeout:.0f}s", flush=True)
        outcomes: list[Outcome] = []
        for mutant in mutants:
            if time.monotonic() - started > args.budget:
                print("   budget spent: stopping", flush=True)
                break
            outcome = run_one(mutant, source, str(ROOT / filename), tests, timeout)
            outcomes.append(outcome)
            print(
                f"   #{mutant.index:4d} {outcome.status:8s} {outcome.seconds:5.1f}s "
                f"{filename}:{mutant.line} {mutant.function}: {mutant.description}",
                flush=True,
            )
        results[module] = {
            "file": filename,
            "tests": tests,
            "total": len(mutants),
            "outcomes": [
                {**asdict(o.mutant), "status": o.status, "seconds": round(o.seconds, 2)} for o in outcomes
            ],
        }
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results_path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        if time.monotonic() - started > args.budget:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
