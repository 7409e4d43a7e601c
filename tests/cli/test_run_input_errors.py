"""`dotboxd run` shows where a refused input is wrong: the pointer in the message and the JSON
report, and the hint on its own line (the inputs are typed JSON: a map is an array of pairs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotboxd.cli.main import main

EVENT = """module "event" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> Bool { return map.get(ev, "hp") > 0; }
"""


@pytest.fixture
def kernel(tmp_path: Path) -> str:
    path = tmp_path / "event.dbk"
    path.write_text(EVENT, encoding="utf-8")
    return str(path)


def test_a_refused_input_is_located_with_a_hint_in_text(
    kernel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", kernel, "--entry", "check", "--args", '[[["hp", 1], ["level", "x"]]]'])
    err = capsys.readouterr().err
    assert code == 1
    assert "[R-VALUE-TYPE] input 1: expected an integer for I32 (at /0/1/1)" in err
    assert "  hint: pass input 1 ('ev') as a value of type Map<String, I32>" in err


def test_a_refused_input_is_located_in_the_json_report(
    kernel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", kernel, "--entry", "check", "--args", '[[["hp", 1], ["hp", 2]]]', "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["code"] == "R-VALUE-TYPE" and report["pointer"] == "/0/1"
    assert report["message"] == "input 1: duplicate key in a Map (at /0/1)"
