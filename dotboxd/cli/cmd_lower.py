"""``dotboxd lower FILE.py [--to json|text]``: lower a kernel written in restricted Python to the IR.

The file is parsed with Python's ``ast`` module and lowered (``dotboxd.grammar.pyfront``); it is
never imported or executed. Exit 0 prints the module (wire JSON by default, or the text form), exit
1 prints diagnostics at the Python line:column, exit 2 is a usage or I/O error. ``lower`` only
imports: ``dotboxd check`` (which also accepts ``.py`` files) validates the result as usual.
"""

from __future__ import annotations

import argparse
from typing import Any

from dotboxd.cli.cmd_fmt import render
from dotboxd.cli.output import Input, Reporter, add_format_option, reads_module

TARGETS = ("json", "text")


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "lower",
        help="lower a Python kernel (.py) to wire JSON or text",
        description="Parse FILE as a restricted-Python kernel (never run it) and print the lowered module.",
    )
    parser.add_argument("file", metavar="FILE", help="a .py kernel file ('-' for stdin)")
    parser.add_argument(
        "--to", dest="target", choices=TARGETS, default="json", help="the output form (default: json)"
    )
    add_format_option(parser)
    parser.set_defaults(handler=run)


@reads_module("python")
def run(args: argparse.Namespace, reporter: Reporter, loaded: Input) -> int:
    output = render(loaded.module, args.target)
    return reporter.accepted({"file": loaded.filename, "to": args.target, "output": output}, output)
