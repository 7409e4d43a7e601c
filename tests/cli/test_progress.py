"""Progress for ``conformance run``, ``conformance generate`` and ``prove``: on a terminal only.

The rule (``dotboxd/cli/progress.py``): a progress line goes to stderr when stderr is a terminal and
the output is not ``--format json``; piped, or in JSON mode, stderr stays silent and stdout is the
same either way. The terminal path is checked with a real pseudo-terminal and with an injected
``isatty``.
"""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from dotboxd.cli.main import main
from dotboxd.cli.progress import Progress, progress_for

ROOT = Path(__file__).resolve().parents[2]
CASES = str(ROOT / "conformance" / "cases" / "strings" / "ext-text-builtins.json")


class _Terminal(io.StringIO):
    """A stderr stand-in that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_draws_in_place_and_erases_itself() -> None:
    stream = _Terminal()
    progress = Progress(stream, "work", enabled=True)
    progress(1, 4)
    progress(4, 4)  # the last step is always drawn, however soon
    progress.close()
    text = stream.getvalue()
    assert "\rwork: 1/4 (25%)" in text and "\rwork: 4/4 (100%)" in text
    assert text.endswith("\r" + " " * len("work: 4/4 (100%)") + "\r")


def test_progress_is_only_for_a_terminal_and_never_for_json() -> None:
    assert progress_for(_Terminal(), "x", machine=False).enabled
    assert not progress_for(_Terminal(), "x", machine=True).enabled
    assert not progress_for(io.StringIO(), "x", machine=False).enabled
    disabled = Progress(io.StringIO(), "x", enabled=False)
    disabled(1, 2)
    disabled.close()
    assert disabled.stream.getvalue() == ""  # type: ignore[attr-defined]


def _cli(*argv: str, stderr: int | None) -> tuple[int, bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "dotboxd.cli.main", *argv],
        stdout=subprocess.PIPE,
        stderr=stderr,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout


def _with_pty_stderr(*argv: str) -> tuple[int, bytes, str]:
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dotboxd.cli.main", *argv], stdout=subprocess.PIPE, stderr=slave
        )
        os.close(slave)
        out = proc.stdout.read() if proc.stdout is not None else b""
        code = proc.wait(timeout=300)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
        return code, out, b"".join(chunks).decode("utf-8", "replace")
    finally:
        os.close(master)


def test_conformance_run_shows_progress_on_a_terminal_and_the_same_result() -> None:
    code, out, err = _with_pty_stderr("conformance", "run", CASES, "--backend", "reference")
    assert code == 0
    assert "conformance run: " in err and "(100%)" in err
    piped_code, piped_out = _cli(
        "conformance", "run", CASES, "--backend", "reference", stderr=subprocess.PIPE
    )
    assert (piped_code, piped_out) == (code, out)  # stdout does not depend on who watches


def test_conformance_run_is_quiet_when_piped_and_with_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dotboxd.cli.main", "conformance", "run", CASES, "--backend", "reference"],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == b""
    code, _, err = _with_pty_stderr("conformance", "run", CASES, "--backend", "reference", "--format", "json")
    assert code == 0 and "conformance run:" not in err


def test_generate_and_prove_show_progress_only_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["conformance", "generate", str(tmp_path), "--count", "2", "--seed", "5"]) == 0
    assert "conformance generate: 2/2 (100%)" in terminal.getvalue()

    helpers = "".join(f"fn f{i}(x I32) -> I32 {{ return x + {i}; }}\n" for i in range(10))
    kernel = tmp_path / "many.dbk"
    kernel.write_text(
        'module "m" version "1.0.0";\n' + helpers + "entrypoint fn main() -> I32 { return f3(1); }\n",
        encoding="utf-8",
    )
    terminal.seek(0)
    terminal.truncate()
    main(["prove", str(kernel)])
    assert "prove: 11/11 (100%)" in terminal.getvalue()
    terminal.seek(0)
    terminal.truncate()
    main(["prove", str(kernel), "--format", "json"])
    assert "prove:" not in terminal.getvalue()
    capsys.readouterr()

    monkeypatch.setattr(sys, "stderr", io.StringIO())  # piped: nothing drawn
    main(["prove", str(kernel)])
    assert "prove:" not in sys.stderr.getvalue()  # type: ignore[attr-defined]
