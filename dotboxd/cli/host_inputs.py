"""Loading what ``check`` and ``prove`` validate against: the policy file and the binding catalogue.

Both commands accept ``--policy P`` and ``--bindings M`` (plus the standard bindings unless told
otherwise) and must report a broken policy or manifest the same way: an I/O problem is exit 2, a
rejected policy or manifest is exit 1 with the diagnostic naming the file and the stage. Both files
are read through the bounded JSON reader (at most its byte budget is ever read into memory).
"""

from __future__ import annotations

import argparse

from dotboxd.cli.output import Input, Reporter
from dotboxd.core.bindings import BindingCatalog, BindingRegistry, load_binding_manifest, standard_bindings
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_document_bytes
from dotboxd.validator.policy import Policy


def build_catalog(manifest: str | None, standard: bool) -> BindingCatalog:
    """The standard host bindings (unless ``standard`` is False) plus those of ``manifest``."""
    registry = BindingRegistry(standard_bindings() if standard else ())
    if manifest is not None:
        registry.extend(load_binding_manifest(read_document_bytes(manifest, HOST_DOCUMENT_BUDGETS)))
    return registry.build()


def load_policy_and_catalog(
    reporter: Reporter, args: argparse.Namespace, loaded: Input
) -> tuple[Policy, BindingCatalog] | int:
    """The policy (default: pure only) and catalogue of ``args``, or the exit code already reported."""
    stage = "policy"
    try:
        policy = (
            Policy.from_json(read_document_bytes(args.policy, HOST_DOCUMENT_BUDGETS))
            if args.policy
            else Policy.default()
        )
        stage = "bindings"
        catalog = build_catalog(args.bindings, args.standard)
    except OSError as error:
        return reporter.failed(
            "io", f"{error.filename}: {error.strerror or type(error).__name__}", error.filename
        )
    except DotBoxDError as error:
        where = args.policy if stage == "policy" else args.bindings or "<standard bindings>"
        return reporter.rejected(error, None, where, {"file": loaded.filename, "stage": stage})
    return policy, catalog
