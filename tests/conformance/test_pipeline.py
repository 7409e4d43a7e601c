"""Our own pipeline behind the runner: each stage ends a case with the right Actual, and stops on time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dotboxd.conformance.pipeline import evaluate
from dotboxd.conformance.workspace import case_root, unsafe_file_path
from tests.game_bindings import kill_entry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOOT = json.loads((EXAMPLES / "loot-score.json").read_text(encoding="utf-8"))
NO_ENTRYPOINT = {"id": "m", "version": "1.0.0", "functions": []}
KILL_TEXT = (
    'module "k" version "1.0.0";\nrequires "game.world.monster.write.kill";\n'
    "entrypoint fn main(id I32) -> Bool {\n  a = game.world.kill(id);\n  return game.world.kill(id);\n}\n"
)


def kill_binding(**changes: Any) -> dict[str, Any]:
    """``game.world.kill`` answering false, then true."""
    return kill_entry(**{"behavior": {"kind": "sequence", "values": [False, True]}, **changes})


KILL_CASE = {
    "kernelText": KILL_TEXT,
    "policy": {"grants": [{"id": "game.world.monster.write.kill"}]},
    "bindings": [kill_binding()],
    "args": [7],
}


def test_import_stage_stops_when_asked_even_if_validation_would_fail() -> None:
    actual = evaluate({"module": NO_ENTRYPOINT}, "reference", "import")
    assert (actual.stage, actual.outcome) == ("import", "ok")


def test_validate_stage_reports_the_validators_root_cause() -> None:
    actual = evaluate({"module": NO_ENTRYPOINT}, "reference", "validate")
    assert (actual.stage, actual.outcome, actual.error) == ("validate", "rejected", "ValidationError")
    assert actual.diagnostic == "E-STRUCT-ENTRY"


def test_a_binding_registry_error_is_a_validate_rejection() -> None:
    case = {**KILL_CASE, "bindings": [kill_binding(capability=None)]}
    actual = evaluate(case, "reference", "validate")
    assert (actual.stage, actual.outcome) == ("validate", "rejected")
    assert (actual.diagnostic or "").startswith("E-BINDING-")


def test_a_missing_grant_is_a_policy_rejection() -> None:
    case = {**KILL_CASE, "policy": {}}
    actual = evaluate(case, "reference", "run")
    assert (actual.stage, actual.outcome, actual.error) == ("validate", "rejected", "PolicyDenied")


def test_run_stage_reports_value_usage_and_fixture_calls() -> None:
    actual = evaluate(KILL_CASE, "reference", "run")
    assert (actual.stage, actual.outcome) == ("run", "ok")
    assert actual.value is True  # the sequence fixture's second answer
    assert actual.binding_calls == {"game.world.kill": 2}
    assert actual.usage is not None and actual.usage["hostCalls"] == 2
    assert actual.usage["fuelUsed"] > 0


def test_run_stage_decodes_args_by_the_declared_types() -> None:
    actual = evaluate({"module": LOOT, "args": [3, 4]}, "reference", "run")
    assert (actual.outcome, actual.value) == ("ok", 3 * 10 + 4 * 25)


def test_a_failed_run_reports_category_and_stable_code() -> None:
    text = 'module "k" version "1.0.0";\nentrypoint fn main(a I32) -> I32 {\n  return a + 1;\n}\n'
    actual = evaluate({"kernelText": text, "args": [2**31 - 1]}, "reference", "run")
    assert (actual.stage, actual.outcome, actual.error) == ("run", "error", "InvalidInput")
    assert (actual.diagnostic or "").startswith("R-")


def test_a_raising_fixture_is_a_sanitized_binding_failure() -> None:
    secret = "/etc/shadow token=hunter2"
    case = {**KILL_CASE, "bindings": [kill_binding(behavior={"kind": "raise", "message": secret})]}
    actual = evaluate(case, "reference", "run")
    assert (actual.outcome, actual.error) == ("error", "BindingFailure")
    assert "hunter2" not in json.dumps(actual.to_json())


def test_case_root_holds_the_files_and_is_removed_afterwards() -> None:
    with case_root({"files": {"config/settings.json": '{"a": 1}'}}) as root:
        assert root is not None
        written = Path(root, "config", "settings.json")
        assert written.read_text(encoding="utf-8") == '{"a": 1}'
        assert Path(root).resolve() == Path(root)
    assert not Path(root).exists()
    with case_root({"module": {}}) as nothing:
        assert nothing is None


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "a/../../b", "a//b", "", "C:/x", "a\\b", "./a"])
def test_case_files_cannot_leave_the_root(path: str) -> None:
    assert unsafe_file_path(path) is not None
    with pytest.raises(ValueError), case_root({"files": {path: "x"}}):
        pass


READ_TEXT = (EXAMPLES / "config-reader.dbk").read_text(encoding="utf-8")
READ_BINDING = {
    "id": "file.readText",
    "parameters": ["SandboxPath"],
    "returnType": "String",
    "effects": ["Cpu", "Alloc", "FileRead"],
    "capability": "file.read",
    "cost": {"baseFuel": 50, "perByteFuel": 1},
    "isAsync": False,
    "audit": "PerResource",
    "safety": "ReadOnlyExternal",
    "behavior": {"kind": "return", "value": "fixture"},
}


@pytest.mark.parametrize(("root", "outcome"), [("$ROOT", "ok"), ("$ROOT/missing", "rejected")])
def test_policy_root_placeholder_is_bound_to_the_case_root(root: str, outcome: str) -> None:
    case = {
        "kernelText": READ_TEXT,
        "files": {"config/settings.json": "{}"},
        "bindings": [READ_BINDING],
        "policy": {"grants": [{"id": "file.read", "parameters": {"root": root, "maxBytesPerRun": "4096"}}]},
    }
    actual = evaluate(case, "reference", "validate")
    assert (actual.stage, actual.outcome) == ("validate", outcome), actual.message
    if outcome == "rejected":
        assert actual.diagnostic == "E-POLICY-GRANT-PARAM"
