"""The README's three-postures examples are true: the plugin example runs and prints what it says,
and the worker command prints the value and layers the README shows."""

from __future__ import annotations

import json
import os
import re
import shlex
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dotboxd.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


def test_readme_plugin_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    block = textwrap.dedent(next(b for b in blocks if "PluginManager(host)" in b))
    namespace: dict[str, Any] = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(block, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert namespace["host"].execute(namespace["plan"], "main", [21]).error.code == "E-PLAN-BINDINGS"
    assert [r.action for r in namespace["plugins"].audit_trail] == ["load", "unload"]


def test_readme_worker_example_prints_what_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    block = textwrap.dedent(
        next(b for b in re.findall(r"```bash\n(.*?)```", README, re.DOTALL) if "worker run" in b)
    )
    lines = block.strip().splitlines()
    argv = shlex.split(lines[0])
    assert argv[:3] == ["dotboxd", "worker", "run"]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert main([*argv[1:], "--format", "json"]) == 0
    finally:
        os.chdir(cwd)
    out = json.loads(capsys.readouterr().out)
    shown_value = lines[1].split("ok value: ", 1)[1]
    assert repr(out["value"]) == shown_value
    assert ", ".join(out["layers"]) == lines[2].split("layers: ", 1)[1]


def test_readme_kernel_worker_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    block = textwrap.dedent(next(b for b in blocks if 'isolation="worker"' in b))
    namespace: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    result = namespace["result"]
    assert result.ok and result.value == 43 and result.fuel_used == 6
    assert "seccomp" in result.isolation_layers and result.isolation_layers[-1] == "watchdog"
    assert namespace["pool"].pids() == []  # the with block closed the pool
    printed = capsys.readouterr().out.split(" ", 2)
    assert printed[:2] == ["43", "6"]
