"""``dotboxd conformance run|serve|coverage|generate``: the conformance corpus and its tools.

``run`` loads cases (default: the whole corpus), evaluates each on the selected backends (this
project's pipeline, or an external implementation behind ``--impl``), prints one line per failure
and a summary by area, and exits 0 only if every result passed. ``serve`` answers the ``--impl``
protocol on stdin/stdout with this project's pipeline. ``coverage`` prints which codes, operators,
built-ins, limits, error categories and fixture behaviours the corpus exercises and which it misses
(exit 1 when something required is missing). ``generate`` writes new run cases drawn by the
type-directed generator, with expectations recorded from the reference interpreter.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from dotboxd.cli.main import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from dotboxd.cli.output import write_text
from dotboxd.cli.progress import progress_for

BACKEND_CHOICES = ("reference", "optimized", "all")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("conformance", help="run the conformance corpus or serve its protocol")
    commands = parser.add_subparsers(dest="conformance_command", metavar="SUBCOMMAND")
    commands.required = True

    run = commands.add_parser("run", help="run conformance cases and compare with their expectations")
    run.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="case files or directories")
    run.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default=None,
        help="backend(s) to check (default: all in process, reference with --impl)",
    )
    run.add_argument(
        "--impl", metavar="COMMAND", help="check an external implementation speaking the protocol"
    )
    run.add_argument(
        "--wire",
        action="store_true",
        help="send every module as wire JSON (text-form cases converted; for implementations without the text form)",
    )
    run.add_argument("--format", choices=("text", "json"), default="text")
    run.add_argument(
        "--name", action="append", default=[], metavar="GLOB", help="only cases whose name matches"
    )
    run.add_argument("--tag", action="append", default=[], metavar="TAG", help="only cases carrying the tag")
    run.add_argument("--area", action="append", default=[], metavar="AREA", help="only cases of the area")
    run.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each --impl response")
    run.add_argument(
        "--via",
        choices=("execute", "execute_async"),
        default="execute",
        help="host entry point of the run stage (in process only; default: execute)",
    )
    run.set_defaults(handler=_run)

    serve = commands.add_parser("serve", help="answer the line-delimited JSON protocol on stdin/stdout")
    serve.add_argument(
        "--wire-only",
        action="store_true",
        help="behave like an implementation without the text form: refuse 'kernelText' requests",
    )
    serve.set_defaults(handler=_serve)

    coverage = commands.add_parser("coverage", help="what the corpus exercises, and what it misses")
    coverage.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="case files or directories")
    coverage.add_argument("--format", choices=("text", "json"), default="text")
    coverage.add_argument("--verbose", "-v", action="store_true", help="one line per exercised item")
    coverage.set_defaults(handler=_coverage)

    generate = commands.add_parser(
        "generate", help="write generated run cases (expectations from the reference interpreter)"
    )
    generate.add_argument("out", type=Path, metavar="OUT", help="directory for generated-seed-<S>.json")
    generate.add_argument("--count", type=int, required=True, metavar="N", help="number of cases")
    generate.add_argument("--seed", type=int, required=True, metavar="S", help="seed (same seed, same cases)")
    generate.set_defaults(handler=_generate)


def _run(args: argparse.Namespace) -> int:
    from dotboxd.conformance.availability import available_backends, in_process_unavailable
    from dotboxd.conformance.backends import Backend, ImplBackend, InProcessBackend
    from dotboxd.conformance.errors import CaseFormatError
    from dotboxd.conformance.loader import load_cases
    from dotboxd.conformance.model import BACKENDS
    from dotboxd.conformance.protocol import HandshakeError, ImplClient
    from dotboxd.conformance.report import render_json, render_text
    from dotboxd.conformance.runner import run_cases, select_cases

    try:
        cases = select_cases(load_cases(args.paths), args.name, args.tag, args.area)
    except CaseFormatError as exc:
        write_text(sys.stderr, f"dotboxd conformance: the case corpus is malformed:\n{exc}\n")
        return EXIT_USAGE
    if not cases:
        write_text(sys.stderr, "dotboxd conformance: no cases match the given paths and filters\n")
        return EXIT_USAGE

    text_only: dict[str, str] = {}
    if args.wire:
        from dotboxd.conformance.wire_form import wire_cases

        selection = wire_cases(cases)
        cases, text_only = selection.cases, selection.text_only
    choice = args.backend or ("reference" if args.impl else "all")
    requested = frozenset(BACKENDS) if choice == "all" else frozenset({choice})
    unavailable: dict[str, str] = {}
    with ExitStack() as stack:
        backends: dict[str, Backend] = {}
        if args.impl:
            try:
                client = stack.enter_context(ImplClient(args.impl, timeout=args.timeout))
            except ValueError as exc:
                write_text(sys.stderr, f"dotboxd conformance: {exc}\n")
                return EXIT_USAGE
            try:
                client.connect()
            except HandshakeError as exc:
                write_text(sys.stderr, f"dotboxd conformance: {exc}\n")
                return EXIT_USAGE
            except OSError as exc:
                write_text(sys.stderr, f"dotboxd conformance: cannot start the implementation: {exc}\n")
                return EXIT_USAGE
            default = sorted(requested, key=BACKENDS.index)
            backends = {name: ImplBackend(client, name) for name in default}
        else:
            for name in sorted(requested, key=BACKENDS.index):
                reason = in_process_unavailable(name)
                if reason is not None:
                    unavailable[name] = reason
                backends[name] = InProcessBackend(name, args.via)
            default = list(available_backends()) if choice == "all" else [choice]
        progress = progress_for(sys.stderr, "conformance run", machine=args.format == "json")
        try:
            report = run_cases(cases, backends, default, requested, unavailable, progress)
        finally:
            progress.close()
    report.text_only = text_only
    if args.format == "json":
        write_text(sys.stdout, json.dumps(render_json(report), ensure_ascii=False, indent=2) + "\n")
    else:
        write_text(sys.stdout, render_text(report) + "\n")
    if not report.results:
        return EXIT_USAGE
    return EXIT_OK if report.ok else EXIT_REJECTED


def _serve(args: argparse.Namespace) -> int:
    from dotboxd.conformance.pipeline import evaluate
    from dotboxd.conformance.protocol import Evaluator, serve

    evaluator: Evaluator = lambda case, backend, stage: evaluate(case, backend, stage)  # noqa: E731
    if args.wire_only:
        from dotboxd.conformance.wire_form import wire_only

        evaluator = wire_only(evaluator)
    from dotboxd import __version__

    name = f"dotboxd {__version__}" + (" (wire only)" if args.wire_only else "")
    serve(sys.stdin.buffer, sys.stdout.buffer, evaluator, name)
    return EXIT_OK


def _coverage(args: argparse.Namespace) -> int:
    from dotboxd.conformance.coverage import measure, render_text
    from dotboxd.conformance.errors import CaseFormatError
    from dotboxd.conformance.loader import load_cases

    try:
        cases = load_cases(args.paths)
    except CaseFormatError as exc:
        write_text(sys.stderr, f"dotboxd conformance: the case corpus is malformed:\n{exc}\n")
        return EXIT_USAGE
    report = measure(cases)
    if args.format == "json":
        write_text(sys.stdout, json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        write_text(sys.stdout, render_text(report, verbose=args.verbose) + "\n")
    return EXIT_REJECTED if report.missing() else EXIT_OK


def _generate(args: argparse.Namespace) -> int:
    if args.count < 0:
        write_text(sys.stderr, "dotboxd conformance generate: --count must be >= 0\n")
        return EXIT_USAGE
    from dotboxd.conformance.generator import write_cases

    progress = progress_for(sys.stderr, "conformance generate", machine=False)
    try:
        path = write_cases(args.out, args.count, args.seed, progress)
    except OSError as exc:
        write_text(sys.stderr, f"dotboxd conformance generate: cannot write to {args.out}: {exc}\n")
        return EXIT_USAGE
    finally:
        progress.close()
    write_text(sys.stdout, f"wrote {args.count} generated case(s) to {path}\n")
    return EXIT_OK
