"""``dotboxd worker run FILE.py``: run a third party's Python behind the OS boundary (posture 3).

Prints ``{ok, value, error, layers, usage: {cpuMs, wallMs, maxRssKb}}`` (JSON with ``--format json``,
a short report otherwise; the layers really in force are always printed). Exit 0 when the job
returned a value, 1 when it failed or was killed, 2 for a usage error or when a layer the profile
requires is unavailable on this machine (``E-ISOLATION-UNAVAILABLE``: nothing ran).
"""

from __future__ import annotations

import argparse
from typing import Any

from dotboxd.cli.output import EXIT_OK, EXIT_REJECTED, Reporter, add_format_option, write_text
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_json
from dotboxd.isolation import PROFILE_NAMES, IsolationUnavailable, Limits, named, run_python

MAX_SOURCE_BYTES = 512 << 10


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "worker",
        help="run untrusted Python in an isolated worker process",
        description="Untrusted Python behind an OS boundary (namespaces, rlimits, seccomp, watchdog).",
    )
    actions = parser.add_subparsers(dest="worker_action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    run_parser = actions.add_parser("run", help="run FILE.py's main(input) and print its JSON result")
    run_parser.add_argument("file", metavar="FILE.py")
    run_parser.add_argument("--timeout-ms", type=int, default=5_000, help="wall-time limit (default 5000)")
    run_parser.add_argument("--memory-mb", type=int, default=256, help="address-space limit (default 256)")
    run_parser.add_argument(
        "--profile", choices=PROFILE_NAMES, default="strict", help="required layers (default strict: all)"
    )
    run_parser.add_argument("--input", default="null", help="the JSON value passed to main(input)")
    add_format_option(run_parser)
    run_parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    reporter = Reporter.from_args(args)
    try:
        with open(args.file, "rb") as handle:
            raw = handle.read(MAX_SOURCE_BYTES + 1)
    except OSError as error:
        return reporter.failed("io", f"cannot read {args.file}: {error.strerror}", args.file)
    if len(raw) > MAX_SOURCE_BYTES:
        return reporter.failed("usage", f"{args.file} is over {MAX_SOURCE_BYTES} bytes")
    try:
        source = raw.decode("utf-8")
        job_input = read_json(args.input, HOST_DOCUMENT_BUDGETS, code="E-JSON-INVALID", what="--input")
        profile = named(args.profile).with_limits(
            Limits(timeout_ms=args.timeout_ms, memory_mb=args.memory_mb)
        )
    except UnicodeDecodeError:
        return reporter.failed("usage", f"{args.file} is not UTF-8 text")
    except DotBoxDError as error:
        return reporter.failed("usage", f"[{error.code}] {error.diagnostic.message}")
    try:
        result = run_python(source, job_input, profile=profile)
    except IsolationUnavailable as error:
        return reporter.failed("isolation-unavailable", f"[{error.code}] {error.diagnostic.message}")
    payload = result.to_json()
    if reporter.machine:
        reporter.emit(payload)
    else:
        usage = payload["usage"]
        outcome = f"value: {payload['value']!r}" if result.ok else f"error: {payload['error']}"
        write_text(
            reporter.out,
            f"{'ok' if result.ok else 'failed'} {outcome}\nlayers: {', '.join(result.layers)}\n"
            f"usage: cpu {usage['cpuMs']} ms, wall {usage['wallMs']} ms, max rss {usage['maxRssKb']} KiB\n",
        )
    return EXIT_OK if result.ok else EXIT_REJECTED
