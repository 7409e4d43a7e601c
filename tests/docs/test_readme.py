"""The README's code and commands are true: its Python example runs and the Makefile has its targets."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


def test_first_screen_has_exactly_two_setup_commands() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.DOTALL)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text("utf-8")
    assert re.search(r"^demo:", makefile, re.MULTILINE) and re.search(r"^test:", makefile, re.MULTILINE)
    assert "make test" in (ROOT / ".ci" / "run").read_text("utf-8")


def test_python_example_runs() -> None:
    block = re.search(r"```python\n(.*?)```", README, re.DOTALL)
    assert block is not None
    namespace: dict[str, object] = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(block.group(1), "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    result = namespace["result"]
    assert result.ok and result.value == 2  # type: ignore[attr-defined]
    assert namespace["world"] == {7}


def test_shared_policy_example_runs_two_kernels_on_different_subsets() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    block = next(b for b in blocks if "shared = Policy" in b)
    namespace: dict[str, object] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    medic, scout, host = namespace["medic"], namespace["scout"], namespace["host"]
    assert medic.required_capabilities == ("game.world.read",)  # type: ignore[attr-defined]
    assert scout.required_capabilities == ("game.world.levels.read",)  # type: ignore[attr-defined]
    assert [w.code for w in medic.warnings] == ["W-POLICY-UNUSED-GRANT"] * 2  # type: ignore[attr-defined]
    assert host.execute(medic, "main", [1]).value == 70  # type: ignore[attr-defined]
    assert host.execute(scout, "main", [2]).value == 90  # type: ignore[attr-defined]


def test_asyncio_example_runs() -> None:
    """The asyncio host example: 100 concurrent runs on one loop."""
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    block = next(b for b in blocks if "execute_async" in b)
    namespace: dict[str, object] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["prices"] == [i * 100 + 1 for i in range(100)]
