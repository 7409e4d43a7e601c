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

from dotboxd.conformance.errors import CaseFormatError


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
    neither files nor a policy, so nothing needs a root).

    A ``files`` value that is not an object of relative paths to texts, or a file that cannot be
    created (a path that is both a file and a directory, a name too long, a lone surrogate in the
    content), is a ``CaseFormatError`` whose message names the relative path only: the temporary
    root is a host path and never appears in an answer."""
    files = _files(raw.get("files"))
    if not files and "policy" not in raw:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="dotboxd-case-") as tmp:
        root = os.path.realpath(tmp)
        for relative, content in files.items():
            target = Path(root, *relative.split("/"))
            try:
                data = content.encode("utf-8")
            except UnicodeEncodeError:
                raise CaseFormatError("files", f"[{relative[:80]!r}] is not valid Unicode text") from None
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            except OSError as exc:
                reason = exc.strerror or "the file system refused it"
                raise CaseFormatError("files", f"[{relative[:80]!r}] cannot be created ({reason})") from None
        yield root


def _files(files: Any) -> dict[str, str]:
    """``files`` checked: absent or an object of safe relative POSIX paths to strings."""
    if files is None:
        return {}
    if not isinstance(files, dict):
        raise CaseFormatError("files", "must be an object of relative paths to texts")
    for relative, content in files.items():
        problem = unsafe_file_path(relative)
        if problem is not None:
            raise CaseFormatError("files", f"[{relative[:80]!r}] {problem}")
        if not isinstance(content, str):
            raise CaseFormatError("files", f"[{relative[:80]!r}] must be a string")
    return files
