"""A fresh temporary root per case: the case's ``files`` are written there and ``$ROOT`` names it.

File grants must point at a real, canonical directory, so every case that mentions files or a
policy gets its own directory (removed afterwards); nothing a case does can touch another case's
files. Paths in ``files`` must stay inside the root.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any


def unsafe_file_path(relative: str) -> str | None:
    """Why ``relative`` cannot be created under the root, or None if it can."""
    path = PurePosixPath(relative)
    if not relative or path.is_absolute() or "\\" in relative or ":" in relative:
        return "must be a relative POSIX path"
    if any(part in ("", ".", "..") for part in relative.split("/")):
        return "must not contain empty, '.' or '..' segments"
    return None


@contextmanager
def case_root(raw: Mapping[str, Any]) -> Iterator[str | None]:
    """The canonical path of a fresh directory holding the case's files (None when the case has
    neither files nor a policy, so nothing needs a root)."""
    files = raw.get("files") or {}
    if not files and "policy" not in raw:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="dotboxd-case-") as tmp:
        root = os.path.realpath(tmp)
        for relative, content in dict(files).items():
            problem = unsafe_file_path(str(relative))
            if problem is not None:
                raise ValueError(f"files[{relative!r}] {problem}")
            target = Path(root, *str(relative).split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(str(content), encoding="utf-8")
        yield root
