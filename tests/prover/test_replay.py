"""``dotboxd prove --emit-smt`` evidence replays to the same verdicts with Z3 alone.

Each obligation is written as a standalone SMT-LIB2 script; the ``z3`` executable (shipped by the
z3-solver wheel next to the interpreter, or on PATH) must answer exactly what the prover recorded
in ``index.json``. If no executable can be found, the scripts are replayed in a *separate* Python
process through ``z3.Solver().from_file`` (no dotboxd code imported), which still shows that the
evidence stands on its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from dotboxd.cli.main import main
from dotboxd.conformance.generator import RandomSource, build_program
from dotboxd.grammar.wire import dumps_wire

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

REPLAY_IN_PYTHON = """
import sys, z3
for path in sys.argv[1:]:
    s = z3.Solver()
    for line in open(path, encoding="utf-8"):
        if line.startswith("(set-option :rlimit "):
            s.set("rlimit", int(line.split()[2].rstrip(")")))
    s.from_file(path)
    print(s.check())
"""


def z3_executable() -> str | None:
    """The ``z3`` binary: on PATH, next to this interpreter, in the scripts directory, or in the
    z3 package's own ``bin`` directory (where some wheels put it)."""
    candidates: list[Path] = []
    found = shutil.which("z3")
    if found:
        candidates.append(Path(found))
    candidates.append(Path(sys.executable).parent / "z3")
    candidates.append(Path(sysconfig.get_path("scripts")) / "z3")
    try:
        import z3  # type: ignore[import-untyped]

        package = Path(z3.__file__).resolve().parent
        candidates += [package / "bin" / "z3", package.parent / "bin" / "z3", package / "lib" / "z3"]
    except ImportError:  # pragma: no cover - z3-solver is a dependency
        pass
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def _replay(files: list[Path]) -> list[str]:
    binary = z3_executable()
    if binary is not None:
        answers = []
        for path in files:
            out = subprocess.run(
                [binary, str(path)], capture_output=True, text=True, timeout=120, check=False
            )
            answers.append(out.stdout.strip().splitlines()[0] if out.stdout.strip() else out.stderr.strip())
        return answers
    out = subprocess.run(
        [sys.executable, "-c", REPLAY_IN_PYTHON, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return out.stdout.split()


def _emit(module_path: Path, out: Path, extra: list[str] | None = None) -> dict[str, dict[str, str]]:
    code = main(["prove", str(module_path), "--emit-smt", str(out), "--format", "json", *(extra or [])])
    assert code in (0, 1)
    index: dict[str, dict[str, str]] = json.loads((out / "index.json").read_text(encoding="utf-8"))
    return index


def _modules(tmp: Path) -> list[Path]:
    paths = [EXAMPLES / "over-budget.json", EXAMPLES / "loot-score.json"]
    for i in range(6):
        program = build_program(RandomSource(f"replay-{i}"))
        if program.bindings_json:
            continue
        path = tmp / f"gen{i}.json"
        path.write_text(dumps_wire(program.module), encoding="utf-8")
        paths.append(path)
    return paths


def test_emitted_obligations_replay_to_the_recorded_answers(tmp_path: Path) -> None:
    checked = 0
    kinds: set[str] = set()
    for module in _modules(tmp_path):
        out = tmp_path / f"smt-{module.stem}"
        index = _emit(module, out)
        files = sorted(out / name for name in index)
        answers = _replay(files)
        for path, answer in zip(files, answers, strict=True):
            assert answer == index[path.name]["status"], path.name
            kinds.add(index[path.name]["kind"])
            checked += 1
    assert checked >= 20
    assert {"budget", "refute", "ranking", "safety"} <= kinds


def test_scripts_are_standalone_and_deterministic(tmp_path: Path) -> None:
    first = _emit(EXAMPLES / "over-budget.json", tmp_path / "a")
    second = _emit(EXAMPLES / "over-budget.json", tmp_path / "b")
    assert first == second
    for name in first:
        text = (tmp_path / "a" / name).read_text(encoding="utf-8")
        assert text == (tmp_path / "b" / name).read_text(encoding="utf-8")
        assert "(set-option :rlimit " in text and "(check-sat)" in text
        assert "declare-fun" not in text.replace("declare-const", "")  # only constants: quantifier-free


def test_the_z3_executable_is_found_for_this_environment() -> None:
    """The wheel ships one; if this ever fails the replay above silently uses the fallback."""
    assert z3_executable() is not None
