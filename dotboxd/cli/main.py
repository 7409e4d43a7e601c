"""Entry point of the ``dotboxd`` command.

Each sub-command lives in its own module exposing ``register(subparsers)``; this module only wires
them together and guarantees the exit-code contract: 0 accepted, 1 rejected, 2 usage or I/O error,
and never a Python traceback for any input.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from dotboxd.cli.output import silence_stdout, write_text

# One line per sub-command module (``dotboxd.cli.<module>`` with ``register(subparsers)``).
COMMAND_MODULES: tuple[str, ...] = (
    "cmd_parse",
    "cmd_fmt",
    "cmd_lower",
    "cmd_hash",
    "cmd_conformance",
    "cmd_run",
    "cmd_check",
    "cmd_prove",
    "cmd_worker",
    "cmd_serve",
)

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3  # a bug in dotboxd itself (never a verdict); reported in one line, no traceback


class _Parser(argparse.ArgumentParser):
    """argparse that exits with 2 and a one-line message instead of printing usage noise twice."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        write_text(sys.stderr, f"dotboxd: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


class _Version(argparse.Action):
    """``--version``: one unwrapped line on stdout, exit 0 (argparse's own action re-wraps it)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        write_text(sys.stdout, version_text() + "\n")
        raise SystemExit(EXIT_OK)


def version_text() -> str:
    """``dotboxd --version``: the package version and every version a party checks against
    (CHANGELOG.md, versioning policy): language surfaces, cost table, canonicalizer, protocol, corpus."""
    from dotboxd import __version__
    from dotboxd.conformance.versions import CORPUS_VERSION, PROTOCOL_VERSION
    from dotboxd.core.builtins import SURFACES
    from dotboxd.core.costs import COST_TABLE_VERSION
    from dotboxd.grammar.canonical import CANONICALIZER_ID

    return (
        f"dotboxd {__version__} (language {' / '.join(SURFACES)}; cost table {COST_TABLE_VERSION}; "
        f"canonicalizer {CANONICALIZER_ID}; conformance protocol {PROTOCOL_VERSION}, corpus {CORPUS_VERSION})"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dotboxd", description="Validate, prove and run untrusted DotBoxD kernels.")
    parser.add_argument("--version", action=_Version, help="print the versions and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(f"dotboxd.cli.{module_name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code (argparse's own exits are returned, not raised)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        write_text(sys.stderr, "dotboxd: interrupted\n")
        return EXIT_USAGE
    except BrokenPipeError:
        silence_stdout()
        return EXIT_USAGE
    except Exception as error:  # the no-traceback contract covers our own bugs too
        if os.environ.get("DOTBOXD_DEBUG") == "1":
            raise
        message = str(error).splitlines()[0][:200] if str(error) else ""
        write_text(
            sys.stderr, f"dotboxd: internal error ({type(error).__name__}: {message}); please report it\n"
        )
        return EXIT_INTERNAL
    return code


if __name__ == "__main__":
    raise SystemExit(main())
