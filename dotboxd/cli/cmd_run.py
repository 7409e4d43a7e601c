"""``dotboxd run MODULE --entry main --args JSON [--policy P] [--bindings M] [--backend B]``.

Imports MODULE, validates it against the policy (default: pure computation only) with the bindings
of the manifest M, and runs one entrypoint call metered. ``--args`` is a JSON array with one value
per parameter, in the conformance typed encoding. Manifest entries may carry a conformance
``behavior`` (``{"kind": "return", "value": true}``...) so declared bindings can actually run.

``--format json`` prints the run in the conformance ``expect`` shape (``stage``, ``outcome``,
``value`` or ``error``/``diagnostic``, ``fuelUsed``, ``usage``, ``bindingCalls``) plus the hashes.
Exit codes: 0 the run succeeded, 1 the module was rejected or the run failed, 2 usage or I/O error.
A run-time error raised by an operation (``runtime.locations``) is printed as ``file:line:col`` with
its JSON pointer and a caret excerpt of the source, like a static diagnostic.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from dotboxd.cli.host_inputs import add_host_options, rejected_document
from dotboxd.cli.output import Input, Reporter, module_command, write_text
from dotboxd.core.bindings import BindingCatalog, BindingRegistry, load_binding_manifest, standard_bindings
from dotboxd.core.diagnostics import DotBoxDError, caret_excerpt, reject
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_document_bytes, read_json
from dotboxd.grammar.spelling import spelled_for
from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.host.sandbox_host import BACKEND_NAMES
from dotboxd.runtime.fixtures import fixture_invokers
from dotboxd.validator.policy import Policy

EXIT_FAILED_RUN = 1


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--entry", default="main", help="the entrypoint to call (default: main)")
    parser.add_argument(
        "--args",
        dest="run_args",
        default="[]",
        help="a JSON array: one typed value per parameter (default [])",
    )
    add_host_options(
        parser, bindings_help="a JSON binding manifest (entries may carry a behavior)", now=False
    )
    parser.add_argument(
        "--backend",
        default="reference",
        choices=BACKEND_NAMES,
        help="the execution backend (default: reference)",
    )


def _catalog(path: str | None, standard: bool) -> BindingCatalog:
    """The standard bindings (their safe facades attach in SandboxHost) plus the manifest's, whose
    entries may carry a fixture ``behavior``. The manifest is read once, through the bounded JSON
    reader (a deep or huge file is ``E-BINDING-MANIFEST`` with its line:column)."""
    registry = BindingRegistry(standard_bindings() if standard else ())
    if path is None:
        return registry.build()
    raw = read_json(
        read_document_bytes(path, HOST_DOCUMENT_BUDGETS),
        HOST_DOCUMENT_BUDGETS,
        code="E-BINDING-MANIFEST",
        what="the manifest",
    )
    if not isinstance(raw, dict | list):
        raise reject("E-BINDING-MANIFEST", "a binding manifest is a JSON object or array", "")
    descriptors = load_binding_manifest(raw)
    entries = raw.get("bindings", []) if isinstance(raw, dict) else raw
    catalog = registry.extend(descriptors).build()
    invokers = fixture_invokers(
        [e for e in entries if isinstance(e, dict)], {d.id: d.return_type for d in descriptors}
    )
    return catalog.with_invokers(invokers) if invokers else catalog


def _run_args(text: str) -> list[Any] | str:
    """The ``--args`` array, or why it is unusable (one line with the code, position and hint)."""
    try:
        value = read_json(text, HOST_DOCUMENT_BUDGETS)
    except DotBoxDError as error:
        d = error.diagnostic
        where = f" at line {d.span.line}, column {d.span.column}" if d.span else ""
        pointer = f" ({d.pointer})" if d.pointer else ""
        hint = f"; hint: {d.hint}" if d.hint else ""
        return f"--args is not valid JSON: [{d.code}] {d.message}{where}{pointer}{hint}"
    if not isinstance(value, list):
        return "--args must be a JSON array with one value per parameter"
    return value


@module_command("run", help="validate a module and run one entrypoint, metered", options=_options)
def run(args: argparse.Namespace, reporter: Reporter, loaded: Input) -> int:
    """Import FILE, validate it against a policy and run one entrypoint call metered."""
    run_args = _run_args(args.run_args)
    if isinstance(run_args, str):
        return reporter.failed("usage", run_args)
    data: bytes | None = None
    where = args.policy or ""
    try:
        data = read_document_bytes(args.policy, HOST_DOCUMENT_BUDGETS) if args.policy else None
        policy = Policy.from_json(data) if data is not None else None
        data, where = None, args.bindings or ""
        catalog = _catalog(args.bindings, args.standard)
    except OSError as error:
        return reporter.failed("io", f"{error.filename}: {error.strerror or type(error).__name__}")
    except DotBoxDError as error:
        if data is None and args.bindings and where == args.bindings:
            data = read_document_bytes(args.bindings, HOST_DOCUMENT_BUDGETS)
        return rejected_document(reporter, error, data, where, {"file": loaded.filename})
    host = SandboxHost(catalog)
    try:
        plan = host.prepare(loaded.module, policy)
    except DotBoxDError as error:
        payload = {
            "file": loaded.filename,
            "stage": "validate",
            "outcome": "rejected",
            "diagnostic": error.code,
        }
        return reporter.rejected(spelled_for(error, loaded.kind), loaded.source, loaded.filename, payload)
    result = host.execute(plan, args.entry, run_args, backend=args.backend, encoding="json")
    return _report(reporter, result, loaded.filename, loaded.source)


register = run.register


def _report(reporter: Reporter, result: ExecutionResult, filename: str, source: str | None = None) -> int:
    payload = {"file": filename, **result.to_json()}
    if reporter.machine:
        reporter.emit({"ok": result.ok, "command": reporter.command, **payload})
        return 0 if result.ok else EXIT_FAILED_RUN
    usage = result.usage
    tail = f"fuel {usage.fuel_used}/{usage.max_fuel}, loops {usage.loop_iterations}, host calls {usage.host_calls}"
    if result.ok:
        write_text(reporter.out, f"{json.dumps(result.value_json(), ensure_ascii=False)}\n")
        write_text(reporter.err, f"{filename}: ok ({tail})\n")
        return 0
    assert result.error is not None
    error = result.error
    where = f"{filename}:{error.span}" if error.span is not None else filename
    lines = [f"{where}: {error.category} [{error.code}] {error.safe_message} ({tail})"]
    if error.pointer:  # a run-time error raised by an operation: show the node (runtime.locations)
        lines.append(f"  at {error.pointer}")
        if source is not None and error.span is not None:
            lines.extend(caret_excerpt(source, error.span))
    diagnostic = error.diagnostic
    if diagnostic is not None and diagnostic.hint:  # e.g. a refused input: what to pass instead
        lines.append(f"  hint: {diagnostic.hint}")
    write_text(reporter.err, "\n".join(lines) + "\n")
    return EXIT_FAILED_RUN
