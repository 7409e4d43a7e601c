"""The Python kernels in examples/kernels/ are the same modules as their text twins: they lower to
an equal tree (same hash), prove the same, and run identically on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dotboxd.cli.main import main
from dotboxd.core import ast
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.canonical import module_hash
from dotboxd.grammar.pyfront import lower_python
from dotboxd.grammar.text import parse_text
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import prove_plan
from tests.runtime.examples_loader import load_demo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TWINS = [
    ("kernels/game_world.py", "game-world.dbk"),
    ("kernels/loot_score.py", "loot-score.dbk"),
    ("kernels/config_reader.py", "config-reader.dbk"),
    ("kernels/moderation.py", "moderation.dbk"),
]
BACKENDS = ("reference", "optimized")


@pytest.mark.parametrize(("py", "dbk"), TWINS)
def test_python_kernel_lowers_to_its_text_twin(py: str, dbk: str) -> None:
    lowered = lower_python((EXAMPLES / py).read_bytes(), py)
    text = parse_text((EXAMPLES / dbk).read_bytes(), dbk)
    assert lowered == text
    assert module_hash(lowered) == module_hash(text)


def test_game_world_python_kernel_proves_like_the_text_kernel() -> None:
    demo = load_demo()
    host = SandboxHost(bindings=[demo.make_binding(demo.World({1}))])
    policy = Policy.builder().grant(demo.CAPABILITY).build()
    reports = [
        prove_plan(host.prepare(EXAMPLES / name, policy))
        for name in ("kernels/game_world.py", "game-world.dbk")
    ]
    assert reports[0] == reports[1]
    assert reports[0].functions[0].verdict is not None


@pytest.mark.parametrize(("py", "dbk"), TWINS[1:2])
def test_python_kernel_proves_like_its_text_twin(
    py: str, dbk: str, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = []
    for name in (py, dbk):
        code = main(["prove", str(EXAMPLES / name), "--format", "json"])
        report = json.loads(capsys.readouterr().out)
        report.pop("file")
        reports.append((code, report))
    assert reports[0] == reports[1]
    assert reports[0][0] == 0 and reports[0][1]["allProved"] is True


def _outcome(result: Any) -> tuple[Any, ...]:
    error = result.error
    return (
        result.ok,
        result.value,
        None if error is None else (error.code, error.category),
        result.usage,
        result.module_hash,
    )


def _game_world_runs(kernel: Path, backend: str) -> list[tuple[Any, ...]]:
    demo = load_demo()
    outcomes: list[tuple[Any, ...]] = []
    for fuel, monsters in ((None, [1, 2, 3, 4]), (60, [1, 2, 3])):
        world = demo.World({1, 2, 3, 7})
        host = SandboxHost(bindings=[demo.make_binding(world)])
        builder = Policy.builder().grant(demo.CAPABILITY)
        policy = builder.build() if fuel is None else builder.with_fuel(fuel).build()
        result = host.execute(host.prepare(kernel, policy), "main", [monsters], backend=backend)
        outcomes.append((*_outcome(result), sorted(world.monsters), world.kill_calls))
    return outcomes


@pytest.mark.parametrize("backend", BACKENDS)
def test_game_world_python_kernel_runs_exactly_like_the_text_kernel(backend: str) -> None:
    python_runs = _game_world_runs(EXAMPLES / "kernels" / "game_world.py", backend)
    text_runs = _game_world_runs(EXAMPLES / "game-world.dbk", backend)
    assert python_runs == text_runs
    granted, starved = python_runs
    assert granted[0] is True and granted[1] == 3 and granted[-2] == [7]
    assert starved[0] is False and starved[-2] == [1, 2, 3, 7]  # nothing half-applied


def test_game_world_python_kernel_is_refused_without_the_grant() -> None:
    demo = load_demo()
    host = SandboxHost(bindings=[demo.make_binding(demo.World({1}))])
    with pytest.raises(DotBoxDError) as refused:
        host.prepare(EXAMPLES / "kernels" / "game_world.py", Policy.default())
    assert refused.value.code == "E-POLICY-CAP"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("args", [[3, 4], [0, 0], [2**31 - 1, 0], [-7, 100]])
def test_loot_score_python_kernel_runs_like_the_text_kernel(backend: str, args: list[int]) -> None:
    host = SandboxHost()
    outcomes = [
        _outcome(host.execute(host.prepare(EXAMPLES / name), "main", args, backend=backend))
        for name in ("kernels/loot_score.py", "loot-score.dbk")
    ]
    assert outcomes[0] == outcomes[1]


def test_run_diagnostics_point_at_the_python_line() -> None:
    source = (
        "from dotboxd.lang import I32, entrypoint, module\n"
        'module("div", version="1.0.0")\n'
        "\n"
        "@entrypoint\n"
        "def main(a: I32, b: I32) -> I32:\n"
        "    return a // b\n"
    )
    module = lower_python(source, "div.py")
    ret = module.functions[0].body[0]
    assert ret.span is not None and (ret.span.line, ret.span.column) == (6, 5)
    host = SandboxHost()
    for backend in BACKENDS:
        result = host.execute(host.prepare(module), "main", [1, 0], backend=backend)
        assert result.error is not None and result.error.code == "R-ARITH-DIVIDE-BY-ZERO"


def test_local_annotation_chooses_the_kind_of_an_integer_constant() -> None:
    source = (
        "from dotboxd.lang import F64, I64, entrypoint, module\n"
        'module("kinds", version="1.0.0")\n'
        "\n"
        "@entrypoint\n"
        "def main() -> F64:\n"
        "    big: I64 = -5\n"
        "    ratio: F64 = 2\n"
        "    plain = 3\n"
        "    return ratio\n"
    )
    body = lower_python(source, "kinds.py").functions[0].body
    values = [getattr(stmt, "value", None) for stmt in body[:3]]
    assert [(v.kind.value, v.value) for v in values if isinstance(v, ast.Literal)] == [
        ("i64", -5),
        ("f64", 2.0),
        ("i32", 3),
    ]
    assert parse_text(
        'module "kinds" version "1.0.0";\n'
        "entrypoint fn main() -> F64 { big = -5L; ratio = 2.0; plain = 3; return ratio; }"
    ) == lower_python(source, "kinds.py")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("message", ["hello", "FREE Money and SPAM", "no scаm here", "sCaM spam"])
def test_moderation_python_kernel_runs_like_the_text_kernel(backend: str, message: str) -> None:
    policy = Policy.from_json((EXAMPLES / "moderation-policy.json").read_text("utf-8"))
    host = SandboxHost()
    outcomes = [
        _outcome(host.execute(host.prepare(EXAMPLES / name, policy), "main", [message], backend=backend))
        for name in ("kernels/moderation.py", "moderation.dbk")
    ]
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] is True


def test_moderation_python_kernel_proves_within_budget_like_the_text_kernel() -> None:
    policy = Policy.from_json((EXAMPLES / "moderation-policy.json").read_text("utf-8"))
    host = SandboxHost()
    reports = [
        prove_plan(host.prepare(EXAMPLES / name, policy))
        for name in ("kernels/moderation.py", "moderation.dbk")
    ]
    assert reports[0] == reports[1]
    assert reports[0].all_proved()


def test_moderation_python_kernel_is_refused_under_the_dotboxd_surface_only() -> None:
    policy = Policy.from_json((EXAMPLES / "moderation-dotboxd1-policy.json").read_text("utf-8"))
    with pytest.raises(DotBoxDError) as refused:
        SandboxHost().prepare(EXAMPLES / "kernels" / "moderation.py", policy)
    assert refused.value.code == "E-CALL-SURFACE"
