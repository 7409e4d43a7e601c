"""``dotboxd hash FILE``: the module hash (SHA-256 of the canonical form, ``dotboxd-canonicalizer-1``).

The hash comes from the AST, so the wire and text forms of one module, however they are spaced or
ordered, print the same hash.
"""

from __future__ import annotations

import argparse

from dotboxd.cli.output import Input, Reporter, module_command
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.canonical import CANONICALIZER_ID, module_hash


@module_command("hash", help="print the canonical module hash")
def run(args: argparse.Namespace, reporter: Reporter, loaded: Input) -> int:
    """Print the lowercase SHA-256 hex of FILE's canonical form."""
    try:
        digest = module_hash(loaded.module)
    except DotBoxDError as error:
        return reporter.rejected(error, loaded.source, loaded.filename, {"file": loaded.filename})
    payload = {
        "file": loaded.filename,
        "from": loaded.kind,
        "module": loaded.module.id,
        "canonicalizer": CANONICALIZER_ID,
        "hash": digest,
    }
    return reporter.accepted(payload, digest)


register = run.register
