"""Data flows one way: core <- grammar <- validator <- runtime <- host/plugins <- conformance/distributed/events <- testing/server/client <- cli.

A layer may import itself and anything below it, never anything above. The check reads every
module's import statements (including function-local imports) with ``ast``, so a lazy upward import
is caught too.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Folder on disk -> the dotboxd layer it implements, ordered bottom (0) to top.
LAYER_OF_FOLDER: dict[str, tuple[str, int]] = {
    "dotboxd/core": ("dotboxd.core", 0),
    "grammar": ("dotboxd.grammar", 1),
    "validator": ("dotboxd.validator", 2),
    "runtime": ("dotboxd.runtime", 3),
    "dotboxd/host": ("dotboxd.host", 4),
    "dotboxd/plugins": ("dotboxd.plugins", 4),
    "dotboxd/isolation": ("dotboxd.isolation", 4),
    "conformance": ("dotboxd.conformance", 5),
    "dotboxd/distributed": ("dotboxd.distributed", 5),
    "dotboxd/events": ("dotboxd.events", 5),
    "dotboxd/testing": ("dotboxd.testing", 6),
    "dotboxd/server": ("dotboxd.server", 6),
    "dotboxd/client": ("dotboxd.client", 6),
    "dotboxd/cli": ("dotboxd.cli", 7),
}
RANK = {package: rank for package, rank in LAYER_OF_FOLDER.values()}
# Optional integrations a lower layer may load lazily by name (never by import statement) are not listed.


def _layer_of_import(name: str) -> int | None:
    best: tuple[int, int] | None = None
    for package, rank in RANK.items():
        if (name == package or name.startswith(package + ".")) and (best is None or len(package) > best[0]):
            best = (len(package), rank)
    return None if best is None else best[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def _library_files() -> list[tuple[Path, int]]:
    files: list[tuple[Path, int]] = []
    for folder, (_, rank) in LAYER_OF_FOLDER.items():
        base = ROOT / folder
        if base.is_dir():
            files.extend((path, rank) for path in sorted(base.rglob("*.py")))
    return files


def test_layer_table_covers_every_library_folder() -> None:
    top = {p.name for p in (ROOT / "dotboxd").iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert top <= {
        "core",
        "host",
        "plugins",
        "isolation",
        "testing",
        "distributed",
        "events",
        "cli",
        "server",
        "client",
    }, f"new sub-package needs a layer: {top}"


@pytest.mark.parametrize(
    ("path", "rank"), _library_files(), ids=lambda v: str(v) if isinstance(v, Path) else ""
)
def test_no_upward_imports(path: Path, rank: int) -> None:
    for line, name in _imports(path):
        target = _layer_of_import(name)
        if target is not None:
            assert target <= rank, f"{path.relative_to(ROOT)}:{line} imports {name} from a higher layer"


# Imports a folder may not make although the layering alone would allow them. The runtime executes
# validated plans: it needs no source-form code, and the literal rules it checks run arguments and
# binding results with live in core (``dotboxd.core.literal_rules``), once for every layer.
FORBIDDEN_SKIPS: dict[str, tuple[str, ...]] = {"runtime": ("dotboxd.grammar",)}


@pytest.mark.parametrize(
    ("path", "banned"),
    [
        (path, banned)
        for folder, banned in FORBIDDEN_SKIPS.items()
        for path in sorted((ROOT / folder).rglob("*.py"))
    ],
    ids=lambda v: str(v.relative_to(ROOT)) if isinstance(v, Path) else "",
)
def test_no_forbidden_layer_skips(path: Path, banned: tuple[str, ...]) -> None:
    for line, name in _imports(path):
        for package in banned:
            assert name != package and not name.startswith(package + "."), (
                f"{path.relative_to(ROOT)}:{line} imports {name}"
            )


def test_no_bare_top_level_packages_are_installed() -> None:
    names = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["packages"]
    assert names and all(name == "dotboxd" or name.startswith("dotboxd.") for name in names)
