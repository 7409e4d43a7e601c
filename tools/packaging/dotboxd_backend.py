"""PEP 517 build backend: setuptools, with an editable install that static tools can read.

The ``dotboxd.*`` namespace is assembled from several top-level folders (``dotboxd/``, ``grammar/``,
``validator/``, ``runtime/``, ``conformance/``; see ``[tool.setuptools] package-dir``), because the
repository layout is a requirement of its own. Setuptools' default editable install serves that mapping
through an import hook, which only a running interpreter understands: mypy, IDEs and other static tools
look for ``dotboxd/grammar/`` on disk, find nothing and report ``import-not-found``.

So editable installs here are setuptools' *strict* mode (a ``.pth`` file naming a link tree under
``build/``), with one change: where setuptools links every file, we link each mapped folder once. The
tree is then ``build/__editable__.../dotboxd/`` holding a symlink per subpackage and module, which every
tool can follow, and which shows new files and edits at once (a file-by-file tree would need a reinstall
for each new module or conformance case). Only a new *subpackage* needs a reinstall, and that already
means editing ``pyproject.toml``, which the Makefile's install stamp depends on.

Regular wheels and sdists are setuptools' own, unchanged. Where the file system has no symlinks, the
file-by-file tree setuptools built is kept (correct, but new files need a reinstall).
"""

from __future__ import annotations

import shutil
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401  (re-exported: the rest of the PEP 517 interface)
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

PACKAGE = "dotboxd"


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Build setuptools' strict editable wheel, then turn its link tree into one link per folder."""
    settings = dict(config_settings or {})
    settings.pop("editable-mode", None)
    settings["editable_mode"] = "strict"
    wheel_name: str = _setuptools.build_editable(wheel_directory, settings, metadata_directory)
    tree = _link_tree(Path(wheel_directory, wheel_name))
    if tree is not None and _can_symlink(tree):
        _link_folders(Path.cwd(), tree)
    return wheel_name


def _link_tree(wheel: Path) -> Path | None:
    """The directory the editable wheel's ``.pth`` file puts on ``sys.path`` (setuptools' link tree)."""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if "/" not in name and name.endswith(".pth"):
                for line in archive.read(name).decode("utf-8").splitlines():
                    entry = Path(line.strip())
                    if line.strip() and not line.startswith("import") and (entry / PACKAGE).is_dir():
                        return entry
    return None


def _can_symlink(directory: Path) -> bool:
    probe = directory / ".symlink-probe"
    try:
        probe.symlink_to(directory, target_is_directory=True)
    except OSError:
        return False
    probe.unlink()
    return True


def _package_dirs(project: Path) -> dict[str, Path]:
    """``[tool.setuptools] package-dir`` as absolute folders, keyed by dotted package name."""
    with open(project / "pyproject.toml", "rb") as handle:
        config = tomllib.load(handle)
    mapping: dict[str, str] = config["tool"]["setuptools"].get("package-dir", {})
    return {name: (project / folder).resolve() for name, folder in mapping.items()}


def _link_folders(project: Path, tree: Path) -> None:
    """Rebuild ``tree/dotboxd`` as links: each entry of the root folder, then each mapped subpackage."""
    folders = _package_dirs(project)
    root = folders.get(PACKAGE, (project / PACKAGE).resolve())
    target = tree / PACKAGE
    shutil.rmtree(target)
    target.mkdir()
    for entry in sorted(root.iterdir()):
        if entry.name != "__pycache__":
            (target / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    for name, folder in sorted(folders.items()):
        parts = name.split(".")
        if parts[0] != PACKAGE or len(parts) == 1:
            continue
        if len(parts) != 2:
            sys.exit(f"{name}: the editable backend links only direct subpackages of {PACKAGE}")
        link = target / parts[1]
        if link.is_symlink():
            link.unlink()
        link.symlink_to(folder, target_is_directory=True)
    print(f"editable install: {target} links to the source folders", file=sys.stderr)
