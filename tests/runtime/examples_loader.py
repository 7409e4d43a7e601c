"""Load ``examples/game_world_demo.py`` (examples/ is not a package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

DEMO = Path(__file__).resolve().parents[2] / "examples" / "game_world_demo.py"


def load_demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("game_world_demo", DEMO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
