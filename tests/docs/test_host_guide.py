"""docs/host-guide.md is true: every ``python`` block runs, in order, in one namespace (a block may use
names an earlier one defined), and the README links to the guide."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "host-guide.md"


def _blocks() -> list[tuple[int, str]]:
    text = GUIDE.read_text("utf-8")
    return [
        (text.count("\n", 0, m.start(1)), m.group(1))
        for m in re.finditer(r"```python\n(.*?)```", text, re.DOTALL)
    ]


def test_every_python_block_of_the_host_guide_runs() -> None:
    blocks = _blocks()
    assert len(blocks) >= 10
    namespace: dict[str, object] = {"__name__": "host_guide"}
    for first_line, code in blocks:
        # pad so a failure's traceback names the guide's own line numbers
        exec(compile("\n" * first_line + code, str(GUIDE), "exec"), namespace)


def test_the_readme_links_the_host_guide() -> None:
    assert "(docs/host-guide.md)" in (ROOT / "README.md").read_text("utf-8")
