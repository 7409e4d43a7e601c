"""Read a Python kernel file as hostile input: bounded, strictly UTF-8, parsed (never run) by ``ast``.

The file is only ever handed to ``ast.parse``; nothing here imports, compiles or executes it. Each
way that step can fail on hostile text becomes a located ``DotBoxDError``:

- more than 1 MiB (the document budget of both other forms) is ``E-JSON-LIMIT`` before parsing;
- bytes that are not UTF-8 are ``E-PY-SYNTAX`` at the first bad byte; the text is decoded here, so
  a PEP 263 ``coding:`` line can never switch the parser to another codec;
- a parse failure (``SyntaxError``, NUL bytes, and the parser's own ``RecursionError`` or
  ``MemoryError`` on deeply nested text) is ``E-PY-SYNTAX`` at the line the parser names;
- a tree deeper than ``MAX_AST_DEPTH`` is ``E-JSON-LIMIT``, measured iteratively *before* the
  recursive lowering walks it.

Python's ``col_offset`` counts UTF-8 bytes; ``PySource.span`` turns it into the code-point column
every other DotBoxD diagnostic uses.
"""

from __future__ import annotations

import ast as pyast
import warnings
from dataclasses import dataclass

from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.grammar.jsonscan import MAX_DOCUMENT_BYTES

MAX_SOURCE_BYTES = MAX_DOCUMENT_BYTES
"""A kernel file may not exceed 1 MiB, like the wire and text forms."""

MAX_AST_DEPTH = 200
"""Nesting guard on the Python syntax tree (every node counts, contexts included). A kernel within
the wire's 64 nested JSON levels needs far fewer; anything deeper stops before the recursive walk."""


@dataclass(frozen=True)
class PySource:
    """The decoded text of a kernel file, with its lines kept for byte-to-column conversion."""

    text: str
    lines: tuple[str, ...]

    def span(self, node: pyast.AST) -> Span:
        """The 1-based line and code-point column where ``node`` starts."""
        line = getattr(node, "lineno", 1) or 1
        byte_col = getattr(node, "col_offset", 0) or 0
        return Span(line, self.column(line, byte_col))

    def column(self, line: int, byte_col: int) -> int:
        if not 1 <= line <= len(self.lines):
            return byte_col + 1
        prefix = self.lines[line - 1].encode("utf-8", "surrogatepass")[:byte_col]
        return len(prefix.decode("utf-8", "replace")) + 1


def decode(source: str | bytes) -> PySource:
    """Strict UTF-8 text of ``source`` (one leading BOM allowed), within the size budget."""
    size = len(source.encode("utf-8", "surrogatepass")) if isinstance(source, str) else len(source)
    if size > MAX_SOURCE_BYTES:
        raise reject(
            "E-JSON-LIMIT",
            f"the kernel file is {size} bytes; the limit is {MAX_SOURCE_BYTES}",
            "",
            Span(1, 1),
            "a module's source (any form) may not exceed 1 MiB; split the kernel",
            limit=MAX_SOURCE_BYTES,
            actual=size,
        )
    if isinstance(source, bytes):
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            head = source[: exc.start]
            line = head.count(b"\n") + 1
            column = len(head[head.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
            raise reject(
                "E-PY-SYNTAX",
                f"the kernel file is not UTF-8 (byte 0x{source[exc.start]:02x} at offset {exc.start})",
                "",
                Span(line, column),
                "save the file as UTF-8; coding declarations are ignored",
            ) from None
    else:
        text = source
    text = text.removeprefix("\ufeff")
    return PySource(text, tuple(text.split("\n")))


def parse(src: PySource, filename: str) -> pyast.Module:
    """``ast.parse`` of the decoded text, every failure a located E-PY-SYNTAX; depth-checked."""
    try:
        with warnings.catch_warnings():
            # Python only *warns* about "\\d" (an invalid escape) or "1if": a kernel must not print
            # to the host's stderr, and the text form refuses bad escapes, so these are errors here.
            warnings.simplefilter("error", SyntaxWarning)
            warnings.simplefilter("error", DeprecationWarning)
            tree = pyast.parse(src.text, filename=filename, mode="exec", type_comments=False)
    except SyntaxError as exc:  # IndentationError and promoted SyntaxWarnings too; NUL bytes on 3.12+
        line = exc.lineno or 1
        column = exc.offset or 1
        raise reject(
            "E-PY-SYNTAX",
            f"the kernel file does not parse as Python: {exc.msg}",
            "",
            Span(line, max(column, 1)),
            "kernels use a small, ordinary Python subset: functions, assignments, if/while/for-range, return and calls",
        ) from None
    except (RecursionError, MemoryError):
        raise reject(
            "E-JSON-LIMIT",
            "the kernel file nests too deeply for the Python parser",
            "",
            Span(1, 1),
            "split long expressions into locals; nesting is limited",
            limit=MAX_AST_DEPTH,
        ) from None
    except ValueError as exc:  # NUL bytes on 3.11 and other source-level refusals
        raise reject(
            "E-PY-SYNTAX",
            f"the kernel file does not parse as Python: {exc}",
            "",
            Span(1, 1),
            "remove NUL and other control bytes from the file",
        ) from None
    check_depth(src, tree)
    return tree


def check_depth(src: PySource, root: pyast.AST) -> None:
    """Iteratively reject trees deeper than MAX_AST_DEPTH (before any recursive walk)."""
    # Each entry carries the nearest node with a position (contexts like Load have none).
    stack: list[tuple[pyast.AST, int, pyast.AST]] = [(root, 1, root)]
    while stack:
        node, depth, located = stack.pop()
        if hasattr(node, "lineno"):
            located = node
        if depth > MAX_AST_DEPTH:
            raise reject(
                "E-JSON-LIMIT",
                f"the kernel nests deeper than {MAX_AST_DEPTH} syntax levels",
                "",
                src.span(located),
                "split long expressions and deep blocks with locals and functions",
                limit=MAX_AST_DEPTH,
            )
        stack.extend((child, depth + 1, located) for child in pyast.iter_child_nodes(node))


__all__ = ["MAX_AST_DEPTH", "MAX_SOURCE_BYTES", "DotBoxDError", "PySource", "check_depth", "decode", "parse"]
