"""``dotboxd lower``: exit 0 with the module, 1 with located diagnostics, 2 for usage and I/O."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotboxd.cli.main import main
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GAME = EXAMPLES / "kernels" / "game_world.py"


def test_lower_prints_wire_json_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lower", str(GAME)]) == 0
    lowered = import_module(capsys.readouterr().out)
    assert lowered == parse_text((EXAMPLES / "game-world.dbk").read_bytes())


def test_lower_to_text_round_trips_through_the_text_parser(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lower", str(GAME), "--to", "text"]) == 0
    text = capsys.readouterr().out
    assert "entrypoint fn main(monsters List<I32>) -> I32 {" in text
    assert parse_text(text) == parse_text((EXAMPLES / "game-world.dbk").read_bytes())


def test_lower_reports_a_refused_construct_at_the_python_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('module("k", version="1")\n\ndef main() -> I32:\n    import os\n    return 1\n', "utf-8")
    assert main(["lower", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:4:5: error[E-PY-UNSUPPORTED] an import" in err and "hint:" in err
    assert main(["lower", str(bad), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    d = report["diagnostics"][0]
    assert (report["ok"], d["code"], d["line"], d["column"]) == (False, "E-PY-UNSUPPORTED", 4, 5)


def test_lower_usage_and_io_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lower", str(GAME), "--to", "canonical"]) == 2
    assert main(["lower", str(tmp_path / "missing.py")]) == 2
    assert main(["lower", str(tmp_path)]) == 2
    capsys.readouterr()


def test_lower_of_hostile_python_never_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, data in {
        "deep.py": b"x = " + b"+".join([b"a"] * 200_000),
        "nul.py": b"x = 1\0",
        "latin1.py": b"# coding: latin-1\nx = '\xe9'\n",
        "empty.py": b"",
    }.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert main(["lower", str(path)]) == 1, name
    capsys.readouterr()


def test_check_and_run_accept_python_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    loot = EXAMPLES / "kernels" / "loot_score.py"
    assert main(["check", str(loot)]) == 0
    assert main(["run", str(loot), "--args", "[3, 4]", "--format", "json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(out)["value"] == 130
