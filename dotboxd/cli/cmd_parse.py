"""``dotboxd parse FILE``: accept or reject a module (wire JSON or text form) at the import stage.

Only import runs here: strict JSON/text parsing and the literal, identifier and budget rules.
Types, effects and policy are the business of ``dotboxd check``.
"""

from __future__ import annotations

import argparse

from dotboxd.cli.output import Input, Reporter, module_command, module_summary


@module_command("parse", help="import a module and report whether it is accepted")
def run(args: argparse.Namespace, reporter: Reporter, loaded: Input) -> int:
    """Import FILE strictly; exit 0 if accepted, 1 if rejected, 2 if it cannot be read."""
    module = loaded.module
    count = len(module.functions)
    human = (
        f"{loaded.filename}: accepted (module {module.id} {module.version}, "
        f"{count} function{'s' if count != 1 else ''})"
    )
    return reporter.accepted(
        {"file": loaded.filename, "from": loaded.kind, "module": module_summary(module)}, human
    )


register = run.register
