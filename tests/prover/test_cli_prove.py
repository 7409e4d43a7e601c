"""``dotboxd prove``: the evidence a reviewer reads, and the exit-code contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dotboxd.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_over_budget_kernel_prints_a_counterexample_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["prove", str(EXAMPLES / "over-budget.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "fn main (entrypoint): budgets REFUTED" in out
    assert "ranking function r = |items| - i" in out
    assert "counterexample (proved): items=a list of" in out and "over the limit of" in out
    assert "hint: bound `items` in inputBounds or raise maxFuel" in out


def test_examples_prove_and_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", str(EXAMPLES / "loot-score.json")]) == 0
    out = capsys.readouterr().out
    assert "fuel: PROVED" in out and "REFUTED - I32 overflow" in out
    policy = tmp_path / "policy.json"
    policy.write_text(
        json.dumps(
            {
                "grants": [
                    {"id": "file.read", "parameters": {"root": str(tmp_path), "maxBytesPerRun": "1024"}}
                ],
                "allowRuntimeAsync": True,
            }
        )
    )
    # a binding that may return 65,536 units at 1 fuel per byte: not provable, not refutable
    assert main(["prove", str(EXAMPLES / "config-reader.json"), "--policy", str(policy)]) == 0
    out = capsys.readouterr().out
    assert "fuel: UNKNOWN" in out and "hostCalls: PROVED (max 1, limit 100)" in out


def test_json_output_and_smt_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    smt = tmp_path / "smt"
    code = main(["prove", str(EXAMPLES / "over-budget.json"), "--format", "json", "--emit-smt", str(smt)])
    payload = json.loads(capsys.readouterr().out)
    assert code == 1 and payload["ok"] is False and payload["command"] == "prove"
    fuel = payload["functions"][0]["budgets"][0]
    assert fuel["resource"] == "fuel" and fuel["verdict"] == "REFUTED"
    assert fuel["witness"]["args"] and fuel["reached"] > fuel["limit"] and fuel["factor"] > 1
    index = json.loads((smt / "index.json").read_text())
    assert payload["smtFiles"] == len(index) == len(payload["obligations"])
    for name in fuel["obligations"]:
        assert (smt / f"{name}.smt2").is_file()


def test_policy_with_input_bounds_makes_it_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"inputBounds": {"main": {"items": [0, 20]}}, "requireStaticBound": True}))
    code = main(["prove", str(EXAMPLES / "over-budget.json"), "--policy", str(policy)])
    out = capsys.readouterr().out
    assert code == 0
    assert "fn main (entrypoint): budgets PROVED" in out and "requireStaticBound: met" in out


def test_strict_policy_not_met_exits_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"requireStaticBound": True}))
    kernel = tmp_path / "k.dbk"
    kernel.write_text(
        'module "k" version "1.0.0";\nentrypoint fn main(n I32) -> I32 {\n'
        "x = n;\nwhile x > 1 { if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; } }\nreturn x;\n}\n"
    )
    assert main(["prove", str(kernel), "--policy", str(policy)]) == 1
    assert "requireStaticBound: NOT met" in capsys.readouterr().out


def test_self_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--self-check"]) == 0
    assert "lemmas proved" in capsys.readouterr().out


def test_usage_and_io_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove"]) == 2
    assert main(["prove", str(tmp_path / "missing.json")]) == 2
    bad = tmp_path / "bad.dbk"
    bad.write_text("module")
    assert main(["prove", str(bad)]) == 1  # rejected by the parser, with a diagnostic
    capsys.readouterr()
