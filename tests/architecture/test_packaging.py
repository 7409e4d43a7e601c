"""The package as tools see it: what the wheel lists, and mypy against the editable install.

``dotboxd.*`` is assembled from several top-level folders. An editable install must put a tree on
``sys.path`` that static tools follow (``tools/packaging/dotboxd_backend.py``), or a host author's
``mypy --strict`` fails with ``import-not-found``; and every folder that holds package files must be
listed in ``[tool.setuptools] packages``, or the wheel silently misses it (and setuptools warns at each
install about data folders it mistakes for packages).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]

NOT_INSTALLED = {"dotboxd.conformance.tools": "case-authoring scripts stay out of the installed package"}
"""Folders with importable names under the package folders that are deliberately not installed."""


def _package_folders() -> dict[str, Path]:
    """Every folder under the mapped package folders that holds a file, by its dotted package name."""
    found: dict[str, Path] = {}
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for directory in [base, *(d for d in base.rglob("*") if d.is_dir())]:
            relative = directory.relative_to(base).parts
            if "__pycache__" in relative or not any(p.is_file() for p in directory.iterdir()):
                continue
            dotted = ".".join([name, *relative])
            if name == "dotboxd" and relative and f"dotboxd.{relative[0]}" in SETUPTOOLS["package-dir"]:
                continue  # a mapped subpackage is found under its own folder
            found[dotted] = directory
    return found


def test_every_folder_with_package_files_is_listed_in_packages() -> None:
    listed = set(SETUPTOOLS["packages"])
    importable = {
        name
        for name in _package_folders()
        if all(part.isidentifier() for part in name.split(".")) and name not in NOT_INSTALLED
    }
    assert sorted(importable - listed) == []
    assert [name for name in sorted(listed) if not _folder_of(name).is_dir()] == []


def _folder_of(name: str) -> Path:
    """The source folder of a dotted package name, through the longest ``package-dir`` prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        folder = SETUPTOOLS["package-dir"].get(".".join(parts[:cut]))
        if folder is not None:
            return ROOT.joinpath(folder, *parts[cut:])
    return ROOT.joinpath(*parts)


def test_license_is_an_spdx_string_not_the_deprecated_table() -> None:
    assert isinstance(PYPROJECT["project"]["license"], str)


HOST_PROGRAM = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.DOTALL)
SHARED_POLICY_HOST = next(block for block in HOST_PROGRAM if "shared = Policy" in block)


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on one host program, from a directory outside the repository (as a host
    author would run it), resolving ``dotboxd`` only through what the install put on ``sys.path``."""
    program = tmp_path / "host_program.py"
    program.write_text(source, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--no-incremental",
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    return subprocess.run(
        [*command, "--config-file", str(tmp_path / "none.ini"), program.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_mypy_strict_follows_the_installed_package(tmp_path: Path) -> None:
    (tmp_path / "none.ini").write_text("[mypy]\n", encoding="utf-8")
    clean = _mypy(tmp_path, SHARED_POLICY_HOST)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # The same program with one wrong annotation must fail: mypy saw dotboxd's real types, not Any.
    wrong = _mypy(tmp_path, SHARED_POLICY_HOST + "\nmistyped: int = Policy.builder()\n")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "host_program.py:" in wrong.stdout and "[assignment]" in wrong.stdout
    assert "import-not-found" not in wrong.stdout
