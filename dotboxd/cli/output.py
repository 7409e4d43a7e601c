"""Shared rendering for every ``dotboxd`` sub-command (parse, fmt, hash, check, run, prove, ...).

Two audiences, one contract. Humans get readable diagnostics on stderr (``file:line:col``, a source
excerpt with a caret, evidence, hint) and results on stdout. Machines (``--format json``) get exactly
one JSON object on stdout per run, always with an ``ok`` flag; rejections carry ``diagnostics`` as
``Diagnostic.to_json()`` and I/O failures an ``error`` object. Exit codes are the same for both:
0 accepted, 1 rejected, 2 usage or I/O error.

Every write goes through ``write_text``, which never raises on characters the terminal encoding
cannot show (lone surrogates, non-UTF-8 locales): a hostile module must not be able to turn its
own diagnostic into a traceback. It also escapes every control, format (bidi, zero-width) and other
invisible character but the line break (``dotboxd.core.visible``), so no author-controlled text
drives the reader's terminal or hides itself; the escape is the JSON/text-form ``\\uXXXX`` one, so a
printed module or value still means the same thing.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from dotboxd.core.ast import Module
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError
from dotboxd.core.visible import visible
from dotboxd.grammar.source import (
    KINDS,
    MAX_SOURCE_BYTES,
    SourceError,
    SourceKind,
    display_text,
    kind_for,
    parse_source,
    read_source,
    within_source_limit,
)

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2

STDIN_NAME = "-"


# ---------------------------------------------------------------------------------------------
# Arguments


def add_input_argument(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """``FILE`` (``-`` for stdin; omissible when ``optional``) and ``--from json|text`` to force the form."""
    parser.add_argument(
        "file",
        metavar="FILE",
        nargs="?" if optional else None,
        help="a .json wire module, a .dbk text module or a .py Python kernel ('-' for stdin)",
    )
    parser.add_argument(
        "--from",
        dest="source_kind",
        choices=KINDS,
        default=None,
        help="the form of FILE (default: by suffix, else by content)",
    )


Handler = Callable[[argparse.Namespace], int]
"""A subcommand's entry point: the parsed arguments in, the exit code out."""

ModuleHandler = Callable[[argparse.Namespace, "Reporter", "Input"], int]
"""A module command's body: it starts with its reporter and FILE already loaded (``reads_module``)."""


def add_module_command(
    subparsers: Any, name: str, help: str, description: str, handler: Handler, *, optional: bool = False
) -> argparse.ArgumentParser:
    """A subcommand that reads one module: its parser with ``FILE``, ``--from``, ``--format`` and
    ``handler`` already set, so every such command offers the same input and output options (the
    command adds only its own options to the parser returned)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(name, help=help, description=description)
    add_input_argument(parser, optional=optional)
    add_format_option(parser)
    parser.set_defaults(handler=handler)
    return parser


def reads_module(kind: SourceKind | None = None) -> Callable[[ModuleHandler], Handler]:
    """Wrap a module command's body so it runs only once FILE is loaded (``open_input``, with
    ``kind`` or the ``--from`` option); an unreadable or rejected FILE is reported and its exit code
    returned without calling the body."""

    def wrap(body: ModuleHandler) -> Handler:
        @functools.wraps(body)
        def handler(args: argparse.Namespace) -> int:
            reporter, loaded = open_input(args, kind)
            if not isinstance(loaded, Input):
                return loaded
            return body(args, reporter, loaded)

        return handler

    return wrap


@dataclass(frozen=True)
class ModuleCommand:
    """A subcommand that reads one module, declared once, on its body (``module_command``): its
    name, its one-line help, its description (the body's docstring, so what the command does is
    written in one place), its own options, and the body, which runs once FILE is loaded."""

    name: str
    help: str
    body: ModuleHandler
    options: Callable[[argparse.ArgumentParser], None] | None = None

    def register(self, subparsers: Any) -> None:
        """Add the subcommand: ``FILE``, ``--from``, ``--format``, then its own options."""
        description = inspect.getdoc(self.body) or self.help
        parser = add_module_command(subparsers, self.name, self.help, description, reads_module()(self.body))
        if self.options is not None:
            self.options(parser)


def module_command(
    name: str, help: str, *, options: Callable[[argparse.ArgumentParser], None] | None = None
) -> Callable[[ModuleHandler], ModuleCommand]:
    """Declare a module command on its body (``register = run.register`` in the command's module)."""

    def declare(body: ModuleHandler) -> ModuleCommand:
        return ModuleCommand(name, help, body, options)

    return declare


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """``--format text|json``: readable output (default) or one stable JSON object for machines."""
    parser.add_argument(
        "--format",
        dest="output_format",
        choices=("text", "json"),
        default="text",
        help="output for humans (text, default) or machines (json)",
    )


# ---------------------------------------------------------------------------------------------
# Writing


def write_text(stream: TextIO, text: str) -> None:
    """Write ``text`` whatever the stream's encoding; invisible characters (but line breaks) and
    unencodable ones become escapes."""
    text = visible(text, keep="\n")
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding, "replace"))


def write_bytes(stream: TextIO, data: bytes) -> None:
    """Write raw bytes to a text stream's buffer when it has one (exact bytes, e.g. canonical text,
    for a pipe or a file). A terminal gets the escaped text instead, like every other output."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None and not _is_terminal(stream):
        stream.flush()
        buffer.write(data)
        buffer.flush()
    else:
        write_text(stream, data.decode("utf-8", "replace"))


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def dumps_json(payload: Mapping[str, Any]) -> str:
    """Stable machine JSON: one line, keys in the order the payload built them, ASCII only."""
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def render_diagnostics(diagnostics: Sequence[Diagnostic], source: str | None, filename: str) -> str:
    """All diagnostics in their human form, separated by blank lines."""
    return "\n\n".join(d.render(source, filename) for d in diagnostics)


def diagnostics_json(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    return [d.to_json() for d in diagnostics]


# ---------------------------------------------------------------------------------------------
# Reporting


@dataclass
class Reporter:
    """Prints one command's outcome in the chosen format and returns its exit code."""

    machine: bool
    command: str
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Reporter:
        return cls(machine=getattr(args, "output_format", "text") == "json", command=str(args.command))

    def emit(self, payload: Mapping[str, Any]) -> None:
        write_text(self.out, dumps_json(payload) + "\n")

    def accepted(self, payload: Mapping[str, Any], human: str | None = None) -> int:
        """Success: ``{"ok": true, "command": ..., **payload}`` or ``human`` on stdout; exit 0."""
        if self.machine:
            self.emit({"ok": True, "command": self.command, **payload})
        elif human is not None:
            write_text(self.out, human if human.endswith("\n") else human + "\n")
        return EXIT_OK

    def rejected(
        self,
        error: DotBoxDError,
        source: str | None,
        filename: str,
        payload: Mapping[str, Any] | None = None,
    ) -> int:
        """A verdict against the input: diagnostics (JSON on stdout, or text on stderr); exit 1."""
        diagnostics = error.diagnostics
        if self.machine:
            self.emit(
                {
                    "ok": False,
                    "command": self.command,
                    **(payload or {}),
                    "diagnostics": diagnostics_json(diagnostics),
                }
            )
        else:
            count = len(diagnostics)
            summary = f"{filename}: rejected ({count} diagnostic{'s' if count != 1 else ''})"
            write_text(self.err, render_diagnostics(diagnostics, source, filename) + "\n" + summary + "\n")
        return EXIT_REJECTED

    def failed(self, kind: str, message: str, path: str | None = None) -> int:
        """No verdict (unreadable input, bad usage): an ``error`` object or a one-line message; exit 2."""
        if self.machine:
            error: dict[str, Any] = {"kind": kind, "message": message}
            if path is not None:
                error["path"] = path
            self.emit({"ok": False, "command": self.command, "error": error})
        else:
            write_text(self.err, f"dotboxd {self.command}: error: {message}\n")
        return EXIT_USAGE


# ---------------------------------------------------------------------------------------------
# Loading


@dataclass(frozen=True)
class Input:
    """A module read from FILE, with what diagnostics need to point into it."""

    module: Module
    source: str
    filename: str
    kind: SourceKind


def _read_input(file: str) -> bytes:
    if file != STDIN_NAME:
        return read_source(Path(file))
    stdin = getattr(sys.stdin, "buffer", None)
    if stdin is None:  # a text-only replacement stream (tests)
        data = sys.stdin.read(MAX_SOURCE_BYTES + 1).encode("utf-8", "surrogateescape")
    else:
        data = stdin.read(MAX_SOURCE_BYTES + 1)
    return within_source_limit(bytes(data))


def open_input(args: argparse.Namespace, kind: SourceKind | None = None) -> tuple[Reporter, Input | int]:
    """A module command's start: its reporter, and its FILE loaded (``load_input``, with ``kind``
    or the ``--from`` option), or the exit code already reported."""
    reporter = Reporter.from_args(args)
    return reporter, load_input(reporter, args.file, kind or args.source_kind)


def load_input(reporter: Reporter, file: str, kind: SourceKind | None) -> Input | int:
    """Read and parse FILE. Returns the ``Input``, or the exit code after reporting why not
    (2 when FILE cannot be read, 1 when its content is rejected)."""
    filename = "<stdin>" if file == STDIN_NAME else file
    try:
        data = _read_input(file)
    except SourceError as error:
        return reporter.failed("io", f"{filename}: {error.reason}", path=filename)
    except OSError as error:
        return reporter.failed("io", f"{filename}: {error.strerror or type(error).__name__}", path=filename)
    except DotBoxDError as error:  # larger than any module may be; nothing was parsed
        return reporter.rejected(error, None, filename, {"file": filename})
    chosen = kind or kind_for(file, data)
    source = display_text(data)
    try:
        module = parse_source(data, chosen, filename)
    except DotBoxDError as error:
        return reporter.rejected(error, source, filename, {"file": filename, "from": chosen})
    return Input(module, source, filename, chosen)


def module_summary(module: Module) -> dict[str, Any]:
    """A short, stable description of an accepted module for JSON output."""
    return {
        "id": module.id,
        "version": module.version,
        "targetSandboxVersion": module.target_sandbox_version,
        "functions": [fn.id for fn in module.functions],
        "entrypoints": [fn.id for fn in module.functions if fn.visibility.value == "entrypoint"],
        "capabilityRequests": [r.id for r in module.capability_requests],
    }


def silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so interpreter shutdown cannot complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both of the first two
        pass
