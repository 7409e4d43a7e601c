"""``dotboxd fmt FILE --to text|json|canonical``: print a module in another form.

``text`` is the readable form, ``json`` the wire form (two-space indent), ``canonical`` the exact
canonical text whose SHA-256 is the module hash (written as raw UTF-8 bytes, so
``dotboxd fmt F --to canonical | sha256sum`` equals ``dotboxd hash F``).
"""

from __future__ import annotations

import argparse

from dotboxd.cli.output import Input, Reporter, module_command, write_bytes
from dotboxd.core.ast import Module
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.canonical import canonical_bytes, canonical_text

TARGETS = ("text", "json", "canonical")


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", dest="target", choices=TARGETS, required=True, help="the output form")


def render(module: Module, target: str) -> str:
    """``module`` in the ``target`` form (the CLI's output without the trailing newline rules)."""
    if target == "json":
        from dotboxd.grammar.wire import dumps_wire

        return dumps_wire(module) + "\n"
    if target == "canonical":
        return canonical_text(module)
    from dotboxd.grammar.formatter import format_module

    text = format_module(module)
    return text if text.endswith("\n") else text + "\n"


@module_command("fmt", help="print a module as text, wire JSON or canonical form", options=_options)
def run(args: argparse.Namespace, reporter: Reporter, loaded: Input) -> int:
    """Import FILE and print it in the form chosen by --to."""
    try:
        output = render(loaded.module, args.target)
    except DotBoxDError as error:
        return reporter.rejected(
            error, loaded.source, loaded.filename, {"file": loaded.filename, "to": args.target}
        )
    if reporter.machine:
        return reporter.accepted(
            {"file": loaded.filename, "from": loaded.kind, "to": args.target, "output": output}
        )
    if args.target == "canonical":
        write_bytes(reporter.out, canonical_bytes(output))
    else:
        reporter.accepted({}, output)
    return 0


register = run.register
