"""Entry point of the ``dotboxd`` command.

Each sub-command lives in its own module exposing ``register(subparsers)``; this module only wires
them together and guarantees the exit-code contract: 0 accepted, 1 rejected, 2 usage or I/O error,
and never a Python traceback for any input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

# One line per sub-command module (``dotboxd.cli.<module>`` with ``register(subparsers)``).
COMMAND_MODULES: tuple[str, ...] = ()

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that exits with 2 and a one-line message instead of printing usage noise twice."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"dotboxd: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dotboxd", description="Validate, prove and run untrusted DotBoxD kernels.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(f"dotboxd.cli.{module_name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        sys.stderr.write("dotboxd: interrupted\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_USAGE
    return code


if __name__ == "__main__":
    raise SystemExit(main())
