"""The front-end commands ``dotboxd parse | fmt | hash``: outputs, exit codes, hostile files.

Most tests run the CLI in-process through ``main([...])`` with stdout/stderr redirected to
byte-backed text streams (like a real terminal's); a few run the installed ``dotboxd`` command
in a subprocess to check what only a real process shows (tracebacks, broken pipes).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.cli import main as cli_main
from dotboxd.cli.main import EXIT_INTERNAL, main
from dotboxd.cli.output import write_text
from dotboxd.core.diagnostics import Diagnostic
from dotboxd.grammar.canonical import module_hash
from dotboxd.grammar.jsonscan import MAX_DOCUMENT_BYTES
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import import_module

LOOT_JSON = (Path(__file__).resolve().parents[2] / "examples" / "loot-score.json").read_text(encoding="utf-8")
"""The shipped loot-score example in its wire form (LOOT_TEXT below is the same module as text)."""

LOOT_TEXT = """module "loot-score" version "1.0.0";

entrypoint fn main(level I32, rarity I32) -> I32 {
    base = level * 10;
    bonus = rarity * 25;
    return base + bonus;
}
"""

DIAGNOSTIC_KEYS = list(Diagnostic("E-JSON-INVALID", "m").to_json())
ROOT = Path(__file__).resolve().parents[2]
INSTALLED_DOTBOXD = shutil.which("dotboxd", path=sysconfig.get_path("scripts"))
"""The console script the install put beside this interpreter (whatever venv or prefix that is)."""


def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """``main(args)`` with captured stdout/stderr (byte-backed, like a terminal) and optional stdin."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    old_stdin = sys.stdin
    try:
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = old_stdin
    out_bytes = out.buffer.getvalue()
    err_bytes = err.buffer.getvalue()
    return code, out_bytes.decode("utf-8", "replace"), err_bytes.decode("utf-8", "replace")


def run_json(*args: str, stdin: bytes | None = None) -> tuple[int, dict[str, Any]]:
    code, out, _err = run(*args, "--format", "json", stdin=stdin)
    assert out.count("\n") == 1 and out.endswith("\n"), out  # exactly one JSON object per run
    return code, json.loads(out)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "json": tmp_path / "loot.json",
        "text": tmp_path / "loot.dbk",
        "bad": tmp_path / "bad.json",
        "badtext": tmp_path / "bad.dbk",
    }
    paths["json"].write_text(LOOT_JSON, encoding="utf-8")
    paths["text"].write_text(LOOT_TEXT, encoding="utf-8")
    paths["bad"].write_text('{"id": "m", "version": "1.0.0", "functions": [], "extra": 1}', encoding="utf-8")
    paths["badtext"].write_text('module "m" version "1.0.0";\nfn main( -> I32 {}\n', encoding="utf-8")
    return paths


# ---------------------------------------------------------------------------------------------
# parse


def test_parse_accepts_both_forms(files: dict[str, Path]) -> None:
    for kind in ("json", "text"):
        code, out, err = run("parse", str(files[kind]))
        assert code == 0, err
        assert "accepted" in out and "loot-score" in out and err == ""


def test_parse_json_output(files: dict[str, Path]) -> None:
    code, payload = run_json("parse", str(files["text"]))
    assert code == 0
    assert payload["ok"] is True and payload["command"] == "parse" and payload["from"] == "text"
    assert payload["module"]["id"] == "loot-score"
    assert payload["module"]["entrypoints"] == ["main"]


def test_parse_rejection_is_readable_with_caret(files: dict[str, Path]) -> None:
    code, out, err = run("parse", str(files["bad"]))
    assert code == 1 and out == ""
    assert f"{files['bad']}:1:" in err and "error[E-JSON-SCHEMA]" in err
    caret_lines = [line for line in err.splitlines() if line.strip() == "^"]
    assert len(caret_lines) == 1
    assert "rejected (1 diagnostic)" in err

    code, out, err = run("parse", str(files["badtext"]))
    assert code == 1 and "error[E-TEXT-SYNTAX]" in err and "^" in err


def test_parse_rejection_json_output(files: dict[str, Path]) -> None:
    code, payload = run_json("parse", str(files["bad"]))
    assert code == 1
    assert payload["ok"] is False and payload["file"] == str(files["bad"])
    [diagnostic] = payload["diagnostics"]
    assert list(diagnostic) == DIAGNOSTIC_KEYS
    assert diagnostic["code"] == "E-JSON-SCHEMA" and diagnostic["line"] == 1


# ---------------------------------------------------------------------------------------------
# I/O errors and usage: exit 2


def test_missing_file_and_directory_are_io_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    for command in (["parse"], ["hash"], ["fmt", "--to", "json"]):
        code, out, err = run(*command, str(missing))
        assert code == 2 and out == "" and "no such file" in err
    code, out, err = run("parse", str(tmp_path))
    assert code == 2 and "is a directory" in err
    code, payload = run_json("hash", str(tmp_path))
    assert code == 2 and payload == {
        "ok": False,
        "command": "hash",
        "error": {
            "kind": "io",
            "message": f"{tmp_path}: is a directory, not a module file",
            "path": str(tmp_path),
        },
    }


def test_unreadable_paths_are_io_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(LOOT_JSON, encoding="utf-8")
    code, _, err = run("parse", str(plain / "child.json"))  # a file used as a directory
    assert code == 2 and "Not a directory" in err
    code, _, err = run("parse", "bad\x00name.json")
    assert code == 2 and "null" in err

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("dotboxd.grammar.source.open", denied, raising=False)
    code, _, err = run("parse", str(plain))
    assert code == 2 and "permission denied" in err


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["parse"],
        ["fmt", "x.json"],  # --to is required
        ["fmt", "x.json", "--to", "yaml"],
        ["parse", "x.json", "--format", "xml"],
        ["hash", "x.json", "--from", "yaml"],
        ["parse", "a.json", "b.json"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    code, _out, err = run(*argv)
    assert code == 2 and "usage:" in err and "Traceback" not in err


def test_help_exits_0() -> None:
    code, out, _ = run("--help")
    assert code == 0 and "parse" in out and "fmt" in out and "hash" in out


# ---------------------------------------------------------------------------------------------
# Hostile files: always a verdict, never a traceback


@pytest.mark.parametrize(
    ("name", "content", "code"),
    [
        ("empty.json", b"", "E-JSON-INVALID"),
        ("empty.dbk", b"", "E-TEXT-SYNTAX"),
        ("blank.dbk", b"  \n\t\n", "E-TEXT-SYNTAX"),
        ("latin1.json", b'{"id": "caf\xe9"}', "E-JSON-INVALID"),
        ("latin1.dbk", b'module "caf\xe9" version "1.0.0";', "E-TEXT-SYNTAX"),
        ("binary.json", bytes(range(256)) * 4, "E-JSON-INVALID"),
        ("binary.dbk", bytes(range(256)) * 4, "E-TEXT-SYNTAX"),
        ("nul.dbk", b"\x00\x00\x00", "E-TEXT-SYNTAX"),
        ("deep.json", b"[" * 100_000, "E-JSON-LIMIT"),
        ("deep.dbk", b'module "m" version "1.0.0"; fn f() -> I32 { return ' + b"(" * 100_000, "E-JSON-LIMIT"),
        ("bom.json", b"\xef\xbb\xbf" + LOOT_JSON.encode(), "E-JSON-INVALID"),
    ],
)
def test_hostile_content_is_rejected(tmp_path: Path, name: str, content: bytes, code: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    for command in (["parse"], ["hash"], ["fmt", "--to", "text"]):
        exit_code, payload = run_json(*command, str(path))
        assert exit_code == 1, payload
        assert payload["diagnostics"][0]["code"] == code
        exit_code, _out, err = run(*command, str(path))
        assert exit_code == 1 and "Traceback" not in err and f"error[{code}]" in err


@pytest.mark.parametrize("suffix", [".json", ".dbk"])
def test_oversized_files_are_rejected_without_reading_them_whole(tmp_path: Path, suffix: str) -> None:
    huge = tmp_path / f"huge{suffix}"
    with huge.open("wb") as handle:  # 64 MiB, sparse: only the first MiB+1 may be read
        handle.truncate(64 * 1024 * 1024)
    code, payload = run_json("parse", str(huge))
    assert code == 1
    [diagnostic] = payload["diagnostics"]
    assert diagnostic["code"] == "E-JSON-LIMIT"
    assert diagnostic["evidence"]["actual"] == 64 * 1024 * 1024
    just_over = tmp_path / f"over{suffix}"
    just_over.write_bytes(b" " * (MAX_DOCUMENT_BYTES + 1))
    assert run_json("parse", str(just_over))[1]["diagnostics"][0]["code"] == "E-JSON-LIMIT"


def test_endless_device_is_rejected() -> None:
    if not Path("/dev/zero").exists():
        pytest.fail("this platform has no /dev/zero; replace the endless source for it")
    code, payload = run_json("parse", "/dev/zero", "--from", "json")
    assert code == 1 and payload["diagnostics"][0]["code"] == "E-JSON-LIMIT"


def test_canonical_budget_is_a_rejection_not_a_crash(tmp_path: Path) -> None:
    """A backslash 50 levels deep would need 2**50 characters of canonical text."""
    expr: dict[str, Any] = {"string": "\\"}
    for _ in range(50):
        expr = {"unary": "-", "operand": expr}
    doc = {
        "id": "m",
        "version": "1.0.0",
        "functions": [
            {
                "id": "main",
                "visibility": "entrypoint",
                "returnType": "I32",
                "body": [{"op": "return", "value": expr}],
            }
        ],
    }
    path = tmp_path / "escapes.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run("parse", str(path))[0] == 0  # import accepts it
    code, payload = run_json("hash", str(path))
    assert code == 1 and payload["diagnostics"][0]["code"] == "E-CANON-LIMIT"
    code, _, err = run("fmt", str(path), "--to", "canonical")
    assert code == 1 and "error[E-CANON-LIMIT]" in err


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _mutations() -> st.SearchStrategy[bytes]:
    seeds = [LOOT_JSON.encode(), LOOT_TEXT.encode()]

    @st.composite
    def mutate(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(st.sampled_from(seeds)))
        for _ in range(draw(st.integers(1, 6))):
            position = draw(st.integers(0, len(data)))
            action = draw(st.sampled_from(["insert", "delete", "flip"]))
            chunk = draw(st.binary(min_size=1, max_size=4))
            if action == "insert":
                data[position:position] = chunk
            elif action == "delete":
                del data[position : position + len(chunk)]
            elif position < len(data):
                data[position] ^= chunk[0]
        return bytes(data)

    return st.one_of(st.binary(max_size=300), mutate())


@settings(max_examples=60)
@given(data=_mutations(), suffix=st.sampled_from([".json", ".dbk", ".txt"]))
def test_fuzzed_files_always_get_a_verdict(fuzz_dir: Path, data: bytes, suffix: str) -> None:
    path = fuzz_dir / f"case{suffix}"
    path.write_bytes(data)
    for command in (["parse"], ["hash"], ["fmt", "--to", "canonical"], ["fmt", "--to", "text"]):
        code, _out, err = run(*command, str(path))
        assert code in (0, 1), (command, err)
        assert "Traceback" not in err and "internal error" not in err


# ---------------------------------------------------------------------------------------------
# fmt and hash


def test_fmt_round_trips(files: dict[str, Path]) -> None:
    original = import_module(LOOT_JSON)
    code, out, _ = run("fmt", str(files["text"]), "--to", "json")
    assert code == 0 and import_module(out) == original
    code, out, _ = run("fmt", str(files["json"]), "--to", "text")
    assert code == 0 and parse_text(out) == original
    code, payload = run_json("fmt", str(files["json"]), "--to", "text")
    assert code == 0 and payload["to"] == "text" and parse_text(payload["output"]) == original


def test_fmt_canonical_bytes_hash_to_the_module_hash(files: dict[str, Path]) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(out):
        assert main(["fmt", str(files["text"]), "--to", "canonical"]) == 0
    canonical_bytes = out.buffer.getvalue()
    digest = hashlib.sha256(canonical_bytes).hexdigest()
    code, hash_out, _ = run("hash", str(files["json"]))
    assert code == 0 and hash_out == digest + "\n"
    assert digest == module_hash(import_module(LOOT_JSON))


def test_hash_is_the_same_for_both_forms_and_any_spacing(files: dict[str, Path], tmp_path: Path) -> None:
    spaced = tmp_path / "spaced.json"
    spaced.write_text(json.dumps(json.loads(LOOT_JSON), indent=9, sort_keys=True), encoding="utf-8")
    digests = {run("hash", str(path))[1] for path in (files["json"], files["text"], spaced)}
    assert len(digests) == 1
    code, payload = run_json("hash", str(files["text"]))
    assert code == 0 and payload["canonicalizer"] == "dotboxd-canonicalizer-1"
    assert payload["hash"] + "\n" in digests and payload["module"] == "loot-score"


def test_form_by_suffix_flag_or_content(tmp_path: Path) -> None:
    odd_json = tmp_path / "module.txt"
    odd_json.write_text(LOOT_JSON, encoding="utf-8")
    odd_text = tmp_path / "module"
    odd_text.write_text(LOOT_TEXT, encoding="utf-8")
    assert run_json("parse", str(odd_json))[1]["from"] == "json"  # sniffed: starts with '{'
    assert run_json("parse", str(odd_text))[1]["from"] == "text"
    misnamed = tmp_path / "really-text.json"
    misnamed.write_text(LOOT_TEXT, encoding="utf-8")
    assert run("parse", str(misnamed))[0] == 1  # the suffix wins...
    assert run("parse", str(misnamed), "--from", "text")[0] == 0  # ...unless --from says otherwise


def test_stdin_input() -> None:
    code, payload = run_json("hash", "-", stdin=LOOT_TEXT.encode())
    assert code == 0 and payload["file"] == "<stdin>" and payload["from"] == "text"
    assert payload["hash"] == module_hash(import_module(LOOT_JSON))
    code, _out, err = run("parse", "-", stdin=b'{"id": ')
    assert code == 1 and "<stdin>:1:" in err
    code, payload = run_json("parse", "-", stdin=b" " * (MAX_DOCUMENT_BYTES + 5))
    assert code == 1 and payload["diagnostics"][0]["code"] == "E-JSON-LIMIT"


def test_output_survives_terminals_that_cannot_show_it() -> None:
    ascii_stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    write_text(ascii_stream, "caf\xe9 \U0001f600 \ud800\n")
    ascii_stream.flush()
    assert ascii_stream.buffer.getvalue() == b"caf\\xe9 \\U0001f600 \\ud800\n"


def test_internal_errors_are_one_line_not_tracebacks(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(module: object) -> str:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("dotboxd.cli.cmd_hash.module_hash", broken)
    code, _out, err = run("hash", str(files["json"]))
    assert code == EXIT_INTERNAL
    assert err == "dotboxd: internal error (RuntimeError: boom); please report it\n"
    monkeypatch.setenv("DOTBOXD_DEBUG", "1")
    with pytest.raises(RuntimeError):
        run("hash", str(files["json"]))


def test_all_front_commands_are_registered() -> None:
    assert {"cmd_parse", "cmd_fmt", "cmd_hash"} <= set(cli_main.COMMAND_MODULES)


# ---------------------------------------------------------------------------------------------
# The installed command, in a real process


@contextlib.contextmanager
def _process(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "PYTHONIOENCODING": "", "LC_ALL": "C"}
    with subprocess.Popen(
        [_installed_command(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as process:
        yield process


def _installed_command() -> str:
    assert INSTALLED_DOTBOXD is not None, (
        f"no dotboxd command in {sysconfig.get_path('scripts')}: install the package"
    )
    return INSTALLED_DOTBOXD


def test_installed_command_exit_codes(files: dict[str, Path], tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\xff\xfe\x00garbage")
    cases = [
        (["parse", str(files["json"])], 0),
        (["hash", str(files["text"])], 0),
        (["fmt", str(files["text"]), "--to", "json"], 0),
        (["parse", str(garbage)], 1),
        (["parse", str(tmp_path / "missing.dbk")], 2),
        (["fmt", str(files["json"]), "--to", "nope"], 2),
    ]
    for argv, expected in cases:
        with _process(*argv) as process:
            _out, err = process.communicate(timeout=60)
        assert process.returncode == expected, (argv, err)
        assert b"Traceback" not in err


def test_installed_command_non_ascii_under_c_locale(tmp_path: Path) -> None:
    odd = tmp_path / "odd.dbk"
    odd.write_text('module "caf\xe9 \U0001f600" version "1.0.0";\nfn f( -> I32 {}\n', encoding="utf-8")
    with _process("parse", str(odd)) as process:
        _, err = process.communicate(timeout=60)
    assert process.returncode == 1 and b"Traceback" not in err and b"E-TEXT-SYNTAX" in err


class _ClosedPipe(io.TextIOWrapper):
    """A stdout whose reader has gone away."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_closed_stdout_pipe_ends_quietly(files: dict[str, Path]) -> None:
    err = io.StringIO()
    with contextlib.redirect_stdout(_ClosedPipe(io.BytesIO())), contextlib.redirect_stderr(err):
        code = main(["fmt", str(files["json"]), "--to", "text"])
    assert code == 2 and err.getvalue() == ""
