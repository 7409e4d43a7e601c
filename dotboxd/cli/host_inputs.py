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
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, located, read_document_bytes
from dotboxd.grammar.source import display_text
from dotboxd.grammar.spelling import spelled_for
from dotboxd.validator.api import validate
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy


def add_host_options(
    parser: argparse.ArgumentParser,
    *,
    bindings_help: str = "a JSON binding manifest to register",
    now: bool = True,
) -> None:
    """``--policy``, ``--bindings`` and ``--no-standard-bindings`` (and ``--now`` unless told not
    to): what a command that validates against a host reads (``load_policy_and_catalog``)."""
    parser.add_argument("--policy", default=None, help="a JSON policy file (default: pure computation only)")
    parser.add_argument("--bindings", default=None, help=bindings_help)
    parser.add_argument(
        "--no-standard-bindings",
        dest="standard",
        action="store_false",
        help="do not register DotBoxD's standard effectful bindings (file, time, random, log, http)",
    )
    if now:
        parser.add_argument(
            "--now",
            dest="now_ms",
            type=int,
            default=None,
            help="the instant (Unix ms) for grant expiry (default: now)",
        )


def build_catalog(manifest: str | None, standard: bool) -> BindingCatalog:
    """The standard host bindings (unless ``standard`` is False) plus those of ``manifest``."""
    return catalog_from(read_document_bytes(manifest, HOST_DOCUMENT_BUDGETS) if manifest else None, standard)


def catalog_from(manifest: bytes | None, standard: bool) -> BindingCatalog:
    """The standard host bindings (unless ``standard`` is False) plus those of the manifest bytes."""
    registry = BindingRegistry(standard_bindings() if standard else ())
    if manifest is not None:
        registry.extend(load_binding_manifest(manifest))
    return registry.build()


def rejected_document(
    reporter: Reporter, error: DotBoxDError, data: bytes | None, where: str, payload: dict[str, str]
) -> int:
    """Report a rejected policy or manifest like a module: each diagnostic placed at line:column
    of the file (from its pointer) and shown with a caret under the offending key or value."""
    if data is None:
        return reporter.rejected(error, None, where, payload)
    located_error = located(error, data, HOST_DOCUMENT_BUDGETS)
    return reporter.rejected(located_error, display_text(data), where, payload)


def load_policy_and_catalog(
    reporter: Reporter, args: argparse.Namespace, loaded: Input
) -> tuple[Policy, BindingCatalog] | int:
    """The policy (default: pure only) and catalogue of ``args``, or the exit code already reported."""
    stage = "policy"
    data: bytes | None = None
    try:
        data = read_document_bytes(args.policy, HOST_DOCUMENT_BUDGETS) if args.policy else None
        policy = Policy.from_json(data) if data is not None else Policy.default()
        stage = "bindings"
        data = read_document_bytes(args.bindings, HOST_DOCUMENT_BUDGETS) if args.bindings else None
        catalog = catalog_from(data, args.standard)
    except OSError as error:
        return reporter.failed(
            "io", f"{error.filename}: {error.strerror or type(error).__name__}", error.filename
        )
    except DotBoxDError as error:
        where = args.policy if stage == "policy" else args.bindings or "<standard bindings>"
        return rejected_document(reporter, error, data, where, {"file": loaded.filename, "stage": stage})
    return policy, catalog


def validated_plan(
    reporter: Reporter, loaded: Input, policy: Policy, catalog: BindingCatalog, now_ms: int | None
) -> ExecutionPlan | int:
    """``loaded``'s module validated against ``policy`` and ``catalog``, or the exit code after
    reporting the rejection (in the module's own spelling, stage ``validate``)."""
    try:
        return validate(loaded.module, policy, catalog, now_unix_ms=now_ms)
    except DotBoxDError as error:
        return reporter.rejected(
            spelled_for(error, loaded.kind),
            loaded.source,
            loaded.filename,
            {"file": loaded.filename, "stage": "validate"},
        )
