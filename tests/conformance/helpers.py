"""Small builders shared by the runner tests: valid case objects and case files on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOOD_MODULE = '{"id":"m","version":"1.0.0","functions":[]}'

ACTUAL_KEYS = frozenset(
    {"stage", "outcome", "value", "error", "diagnostic", "pointer", "usage", "bindingCalls"}
)
"""The keys every observed result carries, in a JSON report and on the serve protocol alike: the
contract an outside runner relies on, so both surfaces are checked against this one set."""


def case(name: str = "a-case", **overrides: Any) -> dict[str, Any]:
    """A valid import-stage case (accepted module) with ``overrides`` applied; a value of None
    removes the key."""
    raw: dict[str, Any] = {
        "name": name,
        "moduleText": GOOD_MODULE,
        "expect": {"stage": "import", "outcome": "ok"},
    }
    for key, value in overrides.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


def write_cases(directory: Path, filename: str, *cases: dict[str, Any]) -> Path:
    """A case file under ``directory/cases/<area>/`` style paths (``filename`` may hold a folder)."""
    path = directory / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    content: Any = cases[0] if len(cases) == 1 else {"cases": list(cases)}
    path.write_text(json.dumps(content), encoding="utf-8")
    return path
