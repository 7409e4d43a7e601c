"""Load ``examples/game_world_demo.py`` and other scripts by path (examples/ and tools/ are not packages)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

DEMO = Path(__file__).resolve().parents[2] / "examples" / "game_world_demo.py"


def load_script(path: Path) -> ModuleType:
    """A fresh module object for the script at ``path``, named after its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_demo() -> ModuleType:
    return load_script(DEMO)
