"""SandboxHost: prepare (install), execute (metered run), run (both), results and their JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import Cost, Effect, ExecutionResult, Policy, SandboxHost, host_binding
from tests.game_bindings import kill_entry

ROOT = Path(__file__).resolve().parents[2]
LOOT = ROOT / "examples" / "loot-score.dbk"
POLICY = Policy.builder().with_max_wall_time_ms(60_000).build()


def test_prepare_and_execute_an_example() -> None:
    host = SandboxHost()
    plan = host.prepare(LOOT, POLICY)
    result = host.execute(plan, "main", [3, 4])
    assert result.ok and result.value == 3 * 10 + 4 * 25
    assert result.module_hash == plan.module_hash and result.plan_hash == plan.plan_hash
    assert result.policy_hash == plan.policy_hash and len(result.run_id) == 32


def test_wire_json_and_text_run_alike() -> None:
    host = SandboxHost()
    text = host.execute(host.prepare(LOOT, POLICY), "main", [1, 2])
    wire = host.execute(host.prepare(LOOT.with_suffix(".json"), POLICY), "main", [1, 2])
    assert (text.value, text.fuel_used) == (wire.value, wire.fuel_used)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ([3], "R-ENTRY-ARITY"),
        ([3, 4, 5], "R-ENTRY-ARITY"),
        ([3, "4"], "R-VALUE-TYPE"),
        ([3, True], "R-VALUE-TYPE"),
        ([3, 2**31], "R-VALUE-TYPE"),
        ([3, 4.0], "R-VALUE-TYPE"),
    ],
)
def test_inputs_are_checked_before_the_run(args: list[Any], code: str) -> None:
    host = SandboxHost()
    result = host.execute(host.prepare(LOOT, POLICY), "main", args)
    assert result.error is not None and (result.error.category, result.error.code) == ("InvalidInput", code)
    assert result.usage.fuel_used == 0


def test_unknown_entrypoint() -> None:
    host = SandboxHost()
    result = host.execute(host.prepare(LOOT, POLICY), "nope", [])
    assert result.error is not None and result.error.code == "R-ENTRY-UNKNOWN"


def test_unavailable_backend_is_a_host_failure() -> None:
    host = SandboxHost()
    result = host.execute(host.prepare(LOOT, POLICY), "main", [1, 2], backend="no-such-backend")
    assert result.error is not None and (result.error.category, result.error.code) == (
        "HostFailure",
        "R-BACKEND-UNAVAILABLE",
    )


def _binding(base_fuel: int) -> Any:
    @host_binding(
        id="probe.tick",
        capability="probe.tick",
        effects=Effect.CPU | Effect.HOST_STATE_READ,
        cost=Cost(base_fuel=base_fuel),
    )
    def tick() -> bool:
        return True

    return tick


def test_a_plan_from_another_host_with_changed_bindings_is_refused() -> None:
    src = 'module "t" version "1.0.0";\nentrypoint fn main() -> Bool { return probe.tick(); }\n'
    pol = Policy.builder().grant("probe.tick").build()
    plan = SandboxHost([_binding(1)]).prepare(src, pol)
    result = SandboxHost([_binding(2)]).execute(plan)
    assert result.error is not None and result.error.code == "E-PLAN-BINDINGS"
    assert result.error.category == "ValidationError"


def test_missing_grant_rejects_install() -> None:
    src = 'module "t" version "1.0.0";\nentrypoint fn main() -> Bool { return probe.tick(); }\n'
    with pytest.raises(DotBoxDError) as info:
        SandboxHost([_binding(1)]).prepare(src, Policy.default())
    assert info.value.code == "E-POLICY-CAP"


def test_run_reports_rejections_by_stage() -> None:
    host = SandboxHost()
    bad_json = host.run('{"id": "x", "version": "1"', "main")
    assert (bad_json.stage, bad_json.ok) == ("import", False)
    assert bad_json.to_json()["outcome"] == "rejected"
    bad_type = host.run('module "t" version "1.0.0";\nentrypoint fn main() -> I32 { return true; }\n')
    assert bad_type.stage == "validate" and bad_type.error is not None
    assert bad_type.error.diagnostic is not None and bad_type.to_json()["diagnostic"] == bad_type.error.code


def test_result_json_has_the_conformance_shape() -> None:
    host = SandboxHost()
    result: ExecutionResult = host.execute(host.prepare(LOOT, POLICY), "main", [1, 1])
    doc = result.to_json()
    assert doc["stage"] == "run" and doc["outcome"] == "ok" and doc["value"] == 35
    assert doc["fuelUsed"] == doc["usage"]["fuelUsed"] == result.fuel_used
    assert set(doc["usage"]) >= {"fuelUsed", "maxFuel", "loopIterations", "hostCalls", "stringBytes"}
    failed = host.execute(host.prepare(LOOT, POLICY), "main", [2147483647, 1]).to_json()
    assert (failed["outcome"], failed["error"], failed["code"]) == (
        "error",
        "InvalidInput",
        "R-ARITH-OVERFLOW",
    )
    assert "value" not in failed


def test_json_encoded_inputs() -> None:
    host = SandboxHost()
    src = 'module "t" version "1.0.0";\nentrypoint fn main(x F64) -> F64 { return x * 2.0; }\n'
    result = host.execute(host.prepare(src, POLICY), "main", [1], encoding="json")
    assert result.value == 2.0 and isinstance(result.value, float)


def test_cli_run(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "dotboxd.cli.main", "run", str(LOOT), "--args", "[3, 4]", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["ok"] and doc["value"] == 130 and doc["fuelUsed"] == 12
    overflow = subprocess.run(
        [sys.executable, "-m", "dotboxd.cli.main", "run", str(LOOT), "--args", "[2147483647, 0]"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert overflow.returncode == 1 and "R-ARITH-OVERFLOW" in overflow.stderr
    assert "Traceback" not in overflow.stderr


def test_cli_run_with_fixture_bindings_and_policy(tmp_path: Path) -> None:
    manifest = tmp_path / "bindings.json"
    manifest.write_text(json.dumps([kill_entry()]))
    pol = tmp_path / "policy.json"
    pol.write_text(
        json.dumps({"grants": [{"id": "game.world.monster.write.kill"}], "limits": {"maxWallTimeMs": 60000}})
    )
    kernel = ROOT / "examples" / "game-world.dbk"
    args = [
        sys.executable,
        "-m",
        "dotboxd.cli.main",
        "run",
        str(kernel),
        "--args",
        "[[1, 2]]",
        "--format",
        "json",
    ]
    out = subprocess.run(
        [*args, "--bindings", str(manifest), "--policy", str(pol)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["value"] == 2 and doc["bindingCalls"] == {"game.world.kill": 2}
    denied = subprocess.run([*args, "--bindings", str(manifest)], capture_output=True, text=True, check=False)
    assert denied.returncode == 1 and json.loads(denied.stdout)["diagnostics"][0]["code"] == "E-POLICY-CAP"


def test_game_world_demo_runs_from_the_command_line() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "game_world_demo.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "fuel used" in out.stdout and "install rejected with E-POLICY-CAP" in out.stdout
    assert "no kill applied" in out.stdout


def test_one_exception_hierarchy_covers_what_prepare_raises_and_what_a_run_reports() -> None:
    import dotboxd.host as api

    host = api.SandboxHost()
    with pytest.raises(api.DotBoxDException) as caught:
        host.prepare('module "t" version "1.0.0";\nentrypoint fn main() -> I32 { return true; }\n')
    assert isinstance(caught.value, api.DotBoxDError)
    assert isinstance(caught.value.diagnostic, api.Diagnostic) and caught.value.diagnostic.span is not None
    for cls in (api.DotBoxDError, api.SandboxError, api.BindingError):
        assert issubclass(cls, api.DotBoxDException)
    for name in ("AuditEvent", "Observer", "BindingDescriptor", "Diagnostic", "DotBoxDError", "Span"):
        assert name in api.__all__ and getattr(api, name) is not None
    assert api.BINDING_LOGGER.name == "dotboxd.binding"
