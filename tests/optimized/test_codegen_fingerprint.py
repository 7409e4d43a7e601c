"""``tools/codegen_fingerprint.py`` notices a plan whose generated source changed.

Why: compile-latency work (issue 16) leans on that tool to show the generated code stayed
byte-identical; a check that could never report a difference would prove nothing. Here it runs over
a few corpus plans and generated programs, passes against its own record, and fails once one
recorded hash is altered or one plan is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runtime.examples_loader import load_script

_TOOL = Path(__file__).resolve().parents[2] / "tools" / "codegen_fingerprint.py"


def test_check_passes_on_its_own_record_and_fails_on_a_changed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = load_script(_TOOL)
    cases = tool.load_cases()[:12]
    monkeypatch.setattr(tool, "load_cases", lambda: cases)
    monkeypatch.setattr(tool, "GENERATED_PROGRAMS", 3)
    record = tmp_path / "before.json"
    assert tool.main(["fp", "record", str(record)]) == 0
    recorded = json.loads(record.read_text())
    assert any(name.startswith("generated:") for name in recorded)
    assert any(name.startswith("corpus:") for name in recorded)
    assert tool.main(["fp", "check", str(record)]) == 0

    changed = dict(recorded)
    name = sorted(changed)[0]
    changed[name] = "0" * 64
    record.write_text(json.dumps(changed))
    capsys.readouterr()
    assert tool.main(["fp", "check", str(record)]) == 1
    assert f"differs: {name}" in capsys.readouterr().out

    del changed[name]
    record.write_text(json.dumps(changed))
    assert tool.main(["fp", "check", str(record)]) == 1
