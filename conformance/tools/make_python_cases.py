"""Write ``cases/import/python-form.json``: kernels in restricted Python (``kernelPython``).

Two kinds of case, all at the import stage (the directory's rule): the examples in Python form
import, and a hostile-input suite of Python constructs that must be refused, each with the code
and the Python line and column where the construct starts. The position is computed here from a
marker in the case's own source, never from the front end, so the cases pin the front end's answer.

Run ``python conformance/tools/make_python_cases.py`` to rewrite the file (``--check`` compares).
"""

from __future__ import annotations

from pathlib import Path

from dotboxd.conformance.tools.kit import render, write_or_check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kernels"
HEADER = 'from dotboxd.lang import I32, List, entrypoint, module\nmodule("k", version="1.0.0")\n\n'
MAIN = "@entrypoint\ndef main(x: I32, xs: List[I32]) -> I32:\n"

# (name, lines of main's body before `return x`, marker where the refused construct starts, code)
REFUSED: list[tuple[str, list[str], str, str]] = [
    ("lambda", ["y = lambda q: q"], "lambda", "E-PY-UNSUPPORTED"),
    ("list-comprehension", ["y = [i for i in range(3)]"], "[i for", "E-PY-UNSUPPORTED"),
    ("generator-expression", ["y = f(i for i in range(3))"], "(i for", "E-PY-UNSUPPORTED"),
    ("global", ["global x"], "global", "E-PY-UNSUPPORTED"),
    ("exec", ['exec("x = 1")'], "exec", "E-PY-UNSUPPORTED"),
    ("open", ['y = open("/etc/passwd")'], "open", "E-PY-UNSUPPORTED"),
    ("dunder-import", ['y = __import__("os")'], "__import__", "E-PY-UNSUPPORTED"),
    ("dunder-attribute", ["y = x.__class__.mro()"], "x.__class__", "E-PY-UNSUPPORTED"),
    ("attribute-outside-call", ["y = x.real"], "x.real", "E-PY-UNSUPPORTED"),
    ("try", ["try:", "    y = 1", "except ValueError:", "    y = 2"], "try", "E-PY-UNSUPPORTED"),
    ("with", ["with f() as g:", "    y = 1"], "with", "E-PY-UNSUPPORTED"),
    ("yield", ["yield x"], "yield", "E-PY-UNSUPPORTED"),
    ("await", ["y = await f()"], "await", "E-PY-UNSUPPORTED"),
    ("star-args", ["y = f(*xs)"], "*xs", "E-PY-UNSUPPORTED"),
    ("walrus", ["if (y := x) > 0:", "    x = y"], "y :=", "E-PY-UNSUPPORTED"),
    ("f-string", ['s = f"{x}"'], 'f"', "E-PY-UNSUPPORTED"),
    ("for-over-list", ["for m in xs:", "    x = m"], "xs:", "E-PY-UNSUPPORTED"),
    ("nested-def", ["def f() -> I32:", "    return 1"], "def f", "E-PY-UNSUPPORTED"),
    ("invalid-escape", ["s = '\\d'"], "'\\d'", "E-PY-SYNTAX"),
    ("i32-out-of-range", ["y = 2147483648"], "2147483648", "E-JSON-TYPE"),
]
TOP_LEVEL: list[tuple[str, str, str, str]] = [
    ("import", "import os", "import os", "E-PY-UNSUPPORTED"),
    ("class", "class A:\n    pass", "class A", "E-PY-UNSUPPORTED"),
    ("decorator", "@staticmethod\ndef f() -> I32:\n    return 1", "staticmethod", "E-PY-UNSUPPORTED"),
    ("second-module-header", 'module("k2", version="1.0.0")', 'module("k2"', "E-PY-MODULE"),
]


def _position(source: str, marker: str) -> tuple[int, int]:
    start = len(HEADER + MAIN)
    offset = source.find(marker, start)
    line = source.count("\n", 0, offset) + 1
    return line, offset - (source.rfind("\n", 0, offset) + 1) + 1


def _refused_case(name: str, source: str, marker: str, code: str) -> dict[str, object]:
    line, column = _position(source, marker)
    return {
        "name": f"python-refuses-{name}",
        "description": f"The Python front end refuses {name.replace('-', ' ')} at the line and column "
        "where it starts, with a stable code.",
        "tags": ["python-form", "hostile-input"],
        "kernelPython": source,
        "expect": {
            "stage": "import",
            "outcome": "rejected",
            "diagnostic": code,
            "error": "ValidationError",
            "line": line,
            "column": column,
        },
    }


def cases() -> list[dict[str, object]]:
    out: list[dict[str, object]] = [
        {
            "name": "python-loot-score-imports",
            "description": "The loot-score example written in restricted Python lowers and imports "
            "(tests/pyfront runs every Python twin on both backends).",
            "tags": ["python-form", "example"],
            "kernelPython": (EXAMPLES / "loot_score.py").read_text("utf-8"),
            "expect": {"stage": "import", "outcome": "ok"},
        },
        {
            "name": "python-game-world-imports",
            "description": "The README's game-world kernel written in restricted Python imports.",
            "tags": ["python-form", "example"],
            "kernelPython": (EXAMPLES / "game_world.py").read_text("utf-8"),
            "expect": {"stage": "import", "outcome": "ok"},
        },
    ]
    for name, lines, marker, code in REFUSED:
        source = HEADER + MAIN + "".join(f"    {line}\n" for line in lines) + "    return x\n"
        out.append(_refused_case(name, source, marker, code))
    for name, text, marker, code in TOP_LEVEL:
        source = HEADER + MAIN + "    return x\n\n" + text + "\n"
        out.append(_refused_case(name, source, marker, code))
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the file, or with ``--check`` only compare it (exit 1 when it is stale)."""
    return write_or_check(
        __file__, {"import/python-form.json": render(cases())}, argv, summary="wrote import/python-form.json"
    )


if __name__ == "__main__":
    raise SystemExit(main())
