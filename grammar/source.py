"""Load a module from a file or from source bytes, in either of its two forms.

One entry point for every tool (CLI, conformance runner, host API) so that they all agree on how a
form is chosen (``.json`` is the wire format, ``.dbk`` the readable text form, ``.py`` a kernel in
restricted Python that is lowered, never run) and on how far a file
is read: never more than ``MAX_SOURCE_BYTES + 1`` bytes, so a huge or endless input costs a bounded
read and then a clean rejection. Problems of *reading* (no such file, a directory, no permission)
raise ``SourceError``: the input was never seen, so there is no verdict about it. Problems of the
*content* raise ``DotBoxDError`` like every other rejection.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from dotboxd.core.ast import Module
from dotboxd.core.diagnostics import Span, reject
from dotboxd.grammar.jsonscan import MAX_DOCUMENT_BYTES

SourceKind = Literal["json", "text", "python"]

KINDS: tuple[SourceKind, ...] = ("json", "text", "python")
SUFFIXES: dict[str, SourceKind] = {".json": "json", ".dbk": "text", ".py": "python"}

MAX_SOURCE_BYTES = MAX_DOCUMENT_BYTES
"""The document budget of both forms (1 MiB); a file is never read beyond one byte more."""


class SourceError(Exception):
    """A source that could not be read at all (exit code 2 in the CLI, not a rejection)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def kind_for(name: str | os.PathLike[str], data: bytes | str = b"") -> SourceKind:
    """The form of a source: by file suffix when it is known, else by content (a document whose
    first non-blank character is ``{`` is JSON, anything else is text)."""
    suffix = Path(name).suffix.lower() if str(name) not in ("", "-") else ""
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    head = data[:4096].lstrip()
    if isinstance(head, bytes):
        head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
        return "json" if head.startswith(b"{") else "text"
    return "json" if head.removeprefix("\ufeff").lstrip().startswith("{") else "text"


def read_source(path: str | os.PathLike[str]) -> bytes:
    """The bytes of ``path``. Reads at most ``MAX_SOURCE_BYTES + 1`` bytes: a larger file (or an
    endless device) is rejected with ``E-JSON-LIMIT``, the code both parsers use for the budget,
    with the real size when the file system knows it. Raises ``SourceError`` if it cannot be read."""
    shown = os.fsdecode(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
            size = os.fstat(handle.fileno()).st_size if len(data) > MAX_SOURCE_BYTES else 0
    except FileNotFoundError:
        raise SourceError(shown, "no such file") from None
    except IsADirectoryError:
        raise SourceError(shown, "is a directory, not a module file") from None
    except PermissionError:
        raise SourceError(shown, "permission denied") from None
    except OSError as error:
        raise SourceError(shown, error.strerror or type(error).__name__) from None
    except ValueError as error:  # e.g. an embedded NUL in the path
        raise SourceError(shown, str(error)) from None
    return within_source_limit(data, size)


def within_source_limit(data: bytes, size: int = 0) -> bytes:
    """``data``, read as at most ``MAX_SOURCE_BYTES + 1`` bytes of a file or stream, unless that is
    more than a module may be: then ``E-JSON-LIMIT``, with the whole ``size`` when it is known (a
    file's; a stream's never is)."""
    if len(data) <= MAX_SOURCE_BYTES:
        return data
    known = size > MAX_SOURCE_BYTES
    raise reject(
        "E-JSON-LIMIT",
        f"the document is {f'{size} bytes' if known else f'more than {MAX_SOURCE_BYTES} bytes'}; "
        f"the limit is {MAX_SOURCE_BYTES}",
        "",
        Span(1, 1),
        "a module's source (either form) may not exceed 1 MiB",
        limit=MAX_SOURCE_BYTES,
        **({"actual": size} if known else {}),
    )


def display_text(data: bytes | str) -> str:
    """The source as text for caret excerpts (undecodable bytes shown as U+FFFD)."""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def parse_source(data: bytes | str, kind: SourceKind, filename: str = "<input>") -> Module:
    """Bytes or text of one form -> Module. Raises DotBoxDError for any bad content; both parsers
    enforce the 1 MiB document budget (``E-JSON-LIMIT``) and UTF-8 validity themselves."""
    if kind == "json":
        from dotboxd.grammar.wire import import_module

        return import_module(data)
    if kind == "python":  # parsed and lowered, never executed (dotboxd.grammar.pyfront)
        from dotboxd.grammar.pyfront import lower_python

        return lower_python(data, filename)
    from dotboxd.grammar.text import parse_text

    return parse_text(data, filename)


def load_module(
    path_or_text: str | bytes | os.PathLike[str], *, kind: SourceKind | None = None
) -> tuple[Module, str]:
    """Load a module and return it with its source text (for diagnostics).

    A ``PathLike`` (``pathlib.Path``) is a file to read; ``str`` and ``bytes`` are the source itself.
    ``kind`` forces the form; otherwise the file suffix decides (``.json``/``.dbk``) and, failing
    that, the content. Raises ``SourceError`` when a file cannot be read and ``DotBoxDError`` when
    its content is rejected; the source text is attached to neither, so callers render with it
    from ``read_source``/``display_text`` or use the CLI helpers in ``dotboxd.cli.output``.
    """
    if isinstance(path_or_text, os.PathLike):
        data: bytes | str = read_source(path_or_text)
        name = os.fsdecode(path_or_text)
    else:
        data, name = path_or_text, ""
    chosen = kind or kind_for(name, data)
    return parse_source(data, chosen, name or "<input>"), display_text(data)
