"""Issue 19, section 2: diagnostics a person reads once.

A truncated JSON document says where the unclosed bracket opened; a policy or binding manifest
error is placed at line:column with a caret, like a module's; a misspelt key, entrypoint or backend
gets the right names offered; and no hint sends the reader to a file the package does not ship.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from dotboxd.cli.main import main
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.jsonscan import scan_document

ROOT = Path(__file__).resolve().parents[2]
LOOT = str(ROOT / "examples" / "loot-score.dbk")


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_truncated_json_names_where_the_unclosed_bracket_opened() -> None:
    with pytest.raises(DotBoxDError) as info:
        scan_document('{\n  "limits": {\n    "maxFuel": 10,\n')
    diagnostic = info.value.diagnostic
    assert diagnostic.code == "E-JSON-INVALID"
    assert "the object opened at line 2, column 13" in diagnostic.message
    assert "(and the one around it)" in diagnostic.message
    assert diagnostic.evidence["opened"] == "2:13"
    assert "close the object with '}'" in diagnostic.hint


def test_truncated_array_says_array() -> None:
    with pytest.raises(DotBoxDError) as info:
        scan_document("[1, 2")
    assert info.value.diagnostic.message == "the document ends inside the array opened at line 1, column 1"


def test_a_misspelt_policy_limit_is_placed_on_its_line_with_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = _write(tmp_path, "p.json", '{\n  "limits": {\n    "maxFule": 100\n  }\n}\n')
    assert main(["check", LOOT, "--policy", policy]) == 1
    err = capsys.readouterr().err
    assert f"{policy}:3:5: error[E-POLICY-SCHEMA] unknown limit 'maxFule'" in err
    assert '    3 |     "maxFule": 100\n            ^' in err
    assert "hint: did you mean 'maxFuel'?" in err


def test_policy_location_is_in_the_json_output_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = _write(tmp_path, "p.json", '{"limits": {},\n "grnats": []}')
    assert main(["check", LOOT, "--policy", policy, "--format", "json"]) == 1
    (diagnostic,) = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (diagnostic["line"], diagnostic["column"]) == (2, 2)
    assert diagnostic["hint"] == "did you mean 'grants'?"


def test_a_binding_manifest_error_has_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _write(
        tmp_path,
        "m.json",
        '{"bindings": [\n  {"id": "demo.x", "returnType": "I32", "efects": ["Cpu"]}\n]}\n',
    )
    assert main(["check", LOOT, "--bindings", manifest]) == 1
    err = capsys.readouterr().err
    assert f"{manifest}:2:" in err and "^" in err and "did you mean 'effects'?" in err


def test_run_reports_policy_errors_with_a_caret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = _write(tmp_path, "p.json", '{"limits": {"maxFule": 1}}')
    assert main(["run", LOOT, "--policy", policy]) == 1
    err = capsys.readouterr().err
    assert f"{policy}:1:13:" in err and "did you mean 'maxFuel'?" in err


def test_an_unknown_backend_is_a_usage_error_listing_the_valid_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", LOOT, "--backend", "fast"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'fast'" in err and "'reference', 'optimized', 'auto'" in err


def test_an_unknown_entrypoint_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", LOOT, "--entry", "mian", "--args", "[1, 2]"])
    out = capsys.readouterr()
    assert "no entrypoint named 'mian'; did you mean 'main'?" in out.out + out.err


def _hint_literals() -> list[tuple[str, int, str]]:
    """Every string literal passed as a ``hint`` (keyword or the fifth argument of ``reject``)
    or returned by a function whose name says it makes hints, in the installed packages."""
    found: list[tuple[str, int, str]] = []
    for folder in ("dotboxd", "grammar", "validator", "runtime", "conformance"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                values: list[ast.expr] = []
                if isinstance(node, ast.Call):
                    values += [k.value for k in node.keywords if k.arg == "hint"]
                    name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                    if name in ("reject", "report", "fail") and len(node.args) >= 5:
                        values.append(node.args[4])
                for value in values:
                    for sub in ast.walk(value):
                        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                            found.append((str(path.relative_to(ROOT)), sub.lineno, sub.value))
    return found


def test_no_hint_points_at_a_file_the_package_does_not_ship() -> None:
    """The spec, the threat model and the README stay in the repository; a hint naming one of them
    sends an installed user nowhere."""
    literals = _hint_literals()
    assert len(literals) > 50  # the scan really found the hints
    offending = [(p, line, text) for p, line, text in literals if ".md" in text or "spec/" in text]
    assert offending == []
