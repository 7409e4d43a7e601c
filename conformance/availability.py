"""Which backends this tree can run in process.

The runner must never pass a case because a backend is missing, so presence is probed here, in one
place, and a missing backend becomes an explicit ``unsupported`` result further up. (The stages
themselves - import, validate, run - are imported plainly: the package cannot load without them.)
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dotboxd.conformance.model import BACKENDS

# backend name -> the module whose presence makes it exist in this tree
_BACKEND_MODULES: dict[str, str | None] = {"reference": None, "optimized": "dotboxd.runtime.optimized"}


def optional_module(name: str) -> ModuleType | None:
    """Import ``name`` if it exists; None only when *that* module (or a parent) is missing, so an
    import error inside an existing module still surfaces as a crash."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if name == missing or name.startswith(missing + "."):
            return None
        raise


def in_process_unavailable(backend: str) -> str | None:
    """None when this tree has ``backend``; otherwise the reason it cannot run here."""
    if backend not in _BACKEND_MODULES:
        return f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})"
    module = _BACKEND_MODULES[backend]
    if module is not None and optional_module(module) is None:
        return f"backend {backend!r} is not available in this build ({module} does not exist yet)"
    return None


def available_backends() -> tuple[str, ...]:
    """The backends ``--backend all`` means in process: every one this tree has."""
    return tuple(name for name in BACKENDS if in_process_unavailable(name) is None)
