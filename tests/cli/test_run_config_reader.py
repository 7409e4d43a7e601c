"""`dotboxd run` reaches the standard file facade: config-reader reads inside its granted root only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dotboxd.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config-reader.json"


def _policy(tmp_path: Path, root: Path) -> Path:
    policy = {
        "grants": [
            {"id": "file.read", "parameters": {"root": os.path.realpath(root), "maxBytesPerRun": "4096"}}
        ],
        "allowRuntimeAsync": True,
    }
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy), encoding="utf-8")
    return path


def test_config_reader_runs_with_a_file_read_grant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    (root / "config").mkdir(parents=True)
    (root / "config" / "settings.json").write_text('{"a": 1}', encoding="utf-8")
    code = main(["run", str(EXAMPLE), "--policy", str(_policy(tmp_path, root)), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["outcome"] == "ok" and report["value"] == '{"a": 1}'


def test_config_reader_without_the_file_is_not_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    code = main(["run", str(EXAMPLE), "--policy", str(_policy(tmp_path, root)), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["error"] == "NotFound"


def test_config_reader_is_refused_without_a_grant(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(EXAMPLE), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["diagnostic"] == "E-POLICY-CAP"
