"""The authoring kit the case-writing scripts of this folder share (kept out of the installed package).

Each ``make_*_cases.py`` script builds its case files as exact text and hands them to
``write_or_check``; that one function gives every script the same interface: with no flag, write the
files (and delete the ones the script owns but no longer writes); with ``--check``, write nothing and
exit 1 naming every stale file, which is how the test suite proves the committed corpus is exactly
what the scripts produce. ``render`` is the one JSON layout of a case file and ``run_expect`` the
one spelling of a run stage's expectation.

The scripts run from a development checkout (``python conformance/tools/make_run_cases.py``), where
the editable install makes this folder importable as ``dotboxd.conformance.tools``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parents[1] / "cases"
"""The corpus folder; every output path is relative to it."""


def render(cases: Sequence[Mapping[str, Any]]) -> str:
    """A case file's exact text: ``{"cases": [...]}``, two-space indented, newline-ended, UTF-8 kept
    except lone surrogates (hostile inputs), which UTF-8 cannot hold and are written as escapes."""
    text = json.dumps({"cases": cases}, indent=2, ensure_ascii=False) + "\n"
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def kernel(body: str, sig: str = "main() -> I32", extra: str = "", header: str = "") -> str:
    """A one-entrypoint kernel in text form: module ``t``, then ``header`` (``requires`` lines) and
    ``extra`` (helper functions), then ``entrypoint fn <sig>`` whose body is ``body``."""
    return f'module "t" version "1.0.0";\n{header}{extra}entrypoint fn {sig} {{\n{body}\n}}\n'


def put_present(case: dict[str, Any], **fields: Any) -> None:
    """Set each of ``fields`` on ``case`` unless it is None, in the order given (the order is the
    case file's key order, which ``--check`` compares to the letter)."""
    for key, value in fields.items():
        if value is not None:
            case[key] = value


def build_files(files: dict[str, list[Any]], generators: Iterable[Callable[[], object]]) -> dict[str, str]:
    """Run ``generators`` (each appends its cases to ``files``, keyed by output path) on an emptied
    ``files``, then render every file: path -> exact text."""
    files.clear()
    for generate in generators:
        generate()
    return {path: render(cases) for path, cases in files.items()}


def generate_main(
    script: str,
    files: dict[str, list[Any]],
    generators: Iterable[Callable[[], object]],
    argv: Sequence[str] | None = None,
    noun: str = "cases",
) -> int:
    """The whole ``main`` of a script whose generators fill ``files``: build, then write or check."""
    return write_or_check(script, build_files(files, generators), argv, summary=count_summary(files, noun))


def single_file_main(
    script: str, target: Path, cases: Sequence[Mapping[str, Any]], argv: Sequence[str] | None
) -> int:
    """The whole ``main`` of a script that writes ``cases`` to the one file ``target`` (under CASES)."""
    files = {target.relative_to(CASES).as_posix(): render(cases)}
    return write_or_check(script, files, argv, summary=f"{len(cases)} cases in {target.name}")


def count_summary(files: Mapping[str, Sequence[Any]], noun: str = "cases") -> str:
    """``N <noun> in M files``: the line a script prints after writing."""
    return f"{sum(len(cases) for cases in files.values())} {noun} in {len(files)} files"


def run_expect(
    *,
    value: Any = None,
    error: str | None = None,
    code: str | None = None,
    fuel: int | None = None,
    usage: Mapping[str, int] | None = None,
    binding_calls: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The ``expect`` of a run case: ``ok`` with ``value``, or ``error`` (with its ``code`` when given),
    then the pinned ``fuelUsed``, ``usage`` (when not empty) and ``bindingCalls``."""
    expect: dict[str, Any] = {"stage": "run", "outcome": "error" if error else "ok"}
    if error:
        expect["error"] = error
        if code:
            expect["diagnostic"] = code
    else:
        expect["value"] = value
    if fuel is not None:
        expect["fuelUsed"] = fuel
    if usage:
        expect["usage"] = dict(usage)
    if binding_calls is not None:
        expect["bindingCalls"] = dict(binding_calls)
    return expect


def write_or_check(
    script: str,
    files: Mapping[str, str],
    argv: Sequence[str] | None = None,
    *,
    summary: str = "",
    owned: Iterable[str] = (),
) -> int:
    """Write ``files`` (path relative to ``cases/`` -> exact text) or, with ``--check``, compare them.

    ``owned`` names further files the script is responsible for: one it no longer produces is deleted
    (or, under ``--check``, reported stale). Returns the exit status: 1 when ``--check`` found a stale
    file, else 0 (printing ``summary`` when given)."""
    name = Path(script).name
    parser = argparse.ArgumentParser(prog=name, description=f"write the case files of {name}")
    parser.add_argument("--check", action="store_true", help="fail if the committed files differ")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for relative in sorted(set(files) | set(owned)):
        path = CASES / relative
        text = files.get(relative)
        if args.check:
            if text is None or not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(relative)
        elif text is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)} (run conformance/tools/{name})", file=sys.stderr)
        return 1
    if summary:
        print(summary)
    return 0
