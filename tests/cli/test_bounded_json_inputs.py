"""Every JSON the CLI reads besides the module (``--args``, ``--policy``, ``--bindings``) goes
through the bounded reader: a 100,000-deep document or an oversized file is a diagnostic with a
stable code and a position, exit 1 or 2 - never a RecursionError reported as exit 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotboxd.cli.main import EXIT_INTERNAL, main
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOOT = str(EXAMPLES / "loot-score.dbk")
DEEP = "[" * 100_000


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_cli_deep_args_are_a_usage_error_with_position_not_a_crash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", LOOT, "--args", DEEP])
    err = capsys.readouterr().err
    assert code == 2 and code != EXIT_INTERNAL
    assert "[E-JSON-LIMIT]" in err and "line 1, column 129" in err and "internal error" not in err


def test_cli_deep_args_json_output_names_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", LOOT, "--args", DEEP, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 2 and report["error"]["kind"] == "usage" and "E-JSON-LIMIT" in report["error"]["message"]


@pytest.mark.parametrize("command", ["run", "check", "prove"])
def test_cli_deep_policy_file_is_rejected_with_position(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = _write(tmp_path, "policy.json", '{"limits": ' + DEEP)
    code = main([command, LOOT, "--policy", policy, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    (diagnostic,) = report["diagnostics"]
    assert code == 1
    assert diagnostic["code"] == "E-POLICY-SCHEMA" and diagnostic["evidence"]["jsonCode"] == "E-JSON-LIMIT"
    assert (diagnostic["line"], diagnostic["column"]) == (
        1,
        len('{"limits": ') + 128,
    )  # the 128th "[" opens level 129


@pytest.mark.parametrize("command", ["run", "check", "prove"])
def test_cli_deep_bindings_manifest_is_rejected_with_position(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _write(tmp_path, "bindings.json", DEEP)
    code = main([command, LOOT, "--bindings", manifest, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    (diagnostic,) = report["diagnostics"]
    assert code == 1 and diagnostic["code"] == "E-BINDING-MANIFEST"
    assert diagnostic["evidence"]["jsonCode"] == "E-JSON-LIMIT" and diagnostic["line"] == 1


def test_cli_oversized_policy_file_is_refused_by_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    limit = HOST_DOCUMENT_BUDGETS.max_document_bytes
    policy = _write(tmp_path, "policy.json", '{"policyId": "' + "a" * limit + '"}')
    code = main(["check", LOOT, "--policy", policy, "--format", "json"])
    (diagnostic,) = json.loads(capsys.readouterr().out)["diagnostics"]
    assert code == 1 and diagnostic["code"] == "E-POLICY-SCHEMA"
    # only the budget plus one byte was read, so the reported size is exactly that
    assert diagnostic["message"].endswith(f"the document is {limit + 1} bytes; the limit is {limit}")


def test_cli_manifest_that_is_a_json_string_is_a_manifest_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _write(tmp_path, "bindings.json", json.dumps(DEEP))
    code = main(["run", LOOT, "--bindings", manifest, "--format", "json"])
    (diagnostic,) = json.loads(capsys.readouterr().out)["diagnostics"]
    assert code == 1 and diagnostic["code"] == "E-BINDING-MANIFEST"


def test_cli_valid_args_still_run(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", LOOT, "--args", "[2, 3]", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["value"] == 95
