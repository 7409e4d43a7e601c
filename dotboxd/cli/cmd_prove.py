"""``dotboxd prove MODULE [--policy P] [--bindings M] [--emit-smt DIR] [--format json]``.

Validates MODULE against the policy (default: pure computation only, default limits) and runs the
prover: per function it prints how each loop was shown to terminate, the symbolic bound of every
budget (fuel, loop iterations, host calls, allocation, per-binding calls, call depth), its maximum
under the preconditions, the limit and the verdict - PROVED, REFUTED (with a counterexample input,
the cost it reaches and the overshoot) or UNKNOWN (runtime metering decides) - and the arithmetic
operations not proved safe.

``--emit-smt DIR`` writes every obligation as a standalone SMT-LIB2 script (``DIR/index.json``
lists the answer each must give); ``z3 DIR/<name>.smt2`` replays it without dotboxd.
``--self-check`` first checks the prover's own soundness lemmas. Bindings are as for ``check``
(DotBoxD's standard bindings plus a manifest); ``requireStaticBound`` in the policy is reported, not
enforced, so that the evidence is printed either way.

Exit codes: 0 no budget of an entrypoint is REFUTED (and, under ``requireStaticBound``, every one
is PROVED); 1 a budget is REFUTED, a strict policy is not met, a lemma fails, or the module is
rejected; 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from dotboxd.cli.host_inputs import add_host_options, load_policy_and_catalog, validated_plan
from dotboxd.cli.output import Input, Reporter, add_module_command, load_input, write_text
from dotboxd.cli.progress import progress_for
from dotboxd.validator.prover import FunctionProof, ProofReport, Verdict, prove_plan

PROGRESS_FROM = 8
"""Modules with at least this many functions show progress on a terminal (a small one is quick)."""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    parser = add_module_command(
        subparsers,
        "prove",
        help="prove termination, budget bounds and arithmetic safety with Z3; print the evidence",
        description="Validate FILE and prove, per function, its budgets (PROVED / REFUTED / UNKNOWN).",
        handler=run,
        optional=True,
    )
    add_host_options(parser, now=False)
    parser.add_argument(
        "--emit-smt", dest="emit_smt", default=None, metavar="DIR", help="write obligations here"
    )
    parser.add_argument(
        "--self-check", dest="self_check", action="store_true", help="check the prover's lemmas"
    )
    parser.add_argument(
        "--now", dest="now_ms", type=int, default=None, help="the instant (Unix ms) for grants"
    )


def run(args: argparse.Namespace) -> int:
    reporter = Reporter.from_args(args)
    lemma_lines: list[str] = []
    lemma_json: list[dict[str, str]] = []
    lemmas_ok = True
    if args.self_check:
        from dotboxd.validator.prover.lemmas import check_lemmas

        for result in check_lemmas():
            lemmas_ok = lemmas_ok and result.proved
            lemma_lines.append(f"  {'ok ' if result.proved else 'FAIL'} {result.name}: {result.statement}")
            lemma_json.append({"name": result.name, "status": result.status, "statement": result.statement})
        if args.file is None:
            head = f"prover self-check: {sum(r['status'] == 'unsat' for r in lemma_json)}/{len(lemma_json)} lemmas proved"
            code = reporter.accepted({"lemmas": lemma_json}, "\n".join([head, *lemma_lines]))
            return code if lemmas_ok else EXIT_FAILED
    if args.file is None:
        return reporter.failed("usage", "FILE is required (or give --self-check alone)")
    loaded = load_input(reporter, args.file, args.source_kind)
    if not isinstance(loaded, Input):
        return loaded
    inputs = load_policy_and_catalog(reporter, args, loaded)
    if isinstance(inputs, int):
        return inputs
    policy, catalog = inputs
    strict = policy.require_static_bound
    plan = validated_plan(reporter, loaded, replace(policy, require_static_bound=False), catalog, args.now_ms)
    if isinstance(plan, int):
        return plan
    progress = progress_for(sys.stderr, "prove", machine=reporter.machine)
    try:
        report = prove_plan(plan, progress=progress if len(plan.module.functions) >= PROGRESS_FROM else None)
    finally:
        progress.close()
    written: list[Path] = []
    if args.emit_smt:
        try:
            written = report.write_smt(args.emit_smt)
        except OSError as error:
            return reporter.failed(
                "io", f"{args.emit_smt}: {error.strerror or type(error).__name__}", args.emit_smt
            )
    refuted = any(f.verdict is Verdict.REFUTED for f in report.entrypoints())
    strict_failed = strict and not report.all_proved()
    failed = refuted or strict_failed or not lemmas_ok
    payload: dict[str, Any] = {"file": loaded.filename, "requireStaticBound": strict, **report.to_json()}
    payload["solver"] = report.resources_json()
    if args.emit_smt:
        payload["smtDirectory"] = args.emit_smt
        payload["smtFiles"] = len(written)
    if lemma_json:
        payload["lemmas"] = lemma_json
    if reporter.machine:
        reporter.emit({"ok": not failed, "command": reporter.command, **payload})
    else:
        text = human_report(report, loaded.filename, plan.policy.policy_id, strict, args.emit_smt)
        if lemma_lines:
            text = "\n".join(["prover self-check:", *lemma_lines, text])
        write_text(reporter.out, text + "\n")
    return EXIT_FAILED if failed else EXIT_OK


def human_report(
    report: ProofReport, filename: str, policy_id: str, strict: bool, smt_dir: str | None
) -> str:
    """The readable proof report (golden-tested)."""
    lines = [f"{filename}: module {report.module} (policy {policy_id}; z3 {report.z3_version})"]
    for proof in report.functions:
        lines.extend(_function_lines(proof))
    counts = report.counts()
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    lines.append(
        f"summary: budgets of {len(report.functions)} function(s): {summary}; "
        f"{len(report.obligations)} obligation(s)"
    )
    if smt_dir:
        lines.append(
            f"evidence: SMT-LIB2 obligations written to {smt_dir} (replay with: z3 {smt_dir}/<name>.smt2)"
        )
    if strict:
        state = "met" if report.all_proved() else "NOT met: the host would refuse to install this kernel"
        lines.append(f"requireStaticBound: {state}")
    return "\n".join(lines)


_BUDGET_WORDS = {
    Verdict.PROVED: "every resource limit holds for every allowed input",
    Verdict.REFUTED: "an input is proved to exceed a resource limit",
    Verdict.UNKNOWN: "some resource limit is neither proved nor refuted; the meter decides at run time",
}
"""What the per-function verdict claims: it covers the budgets only (arithmetic safety is listed
separately, per operation), so the line says so in words."""


def _function_lines(proof: FunctionProof) -> list[str]:
    role = "entrypoint" if proof.entrypoint else "private: any arguments"
    lines = [f"fn {proof.function} ({role}): budgets {proof.verdict.value} - {_BUDGET_WORDS[proof.verdict]}"]
    if proof.note:
        lines.append(f"  note: {proof.note}")
    own = [loop for loop in proof.loops if loop.function == proof.function]
    if own:
        lines.append("  termination:")
        for loop in own:
            lines.append(
                f"    {loop.kind} at {loop.pointer}: {loop.verdict.value} - {loop.method}; "
                f"iterations per entry <= {loop.iterations}"
            )
    lines.append("  budgets:")
    for b in proof.budgets:
        limit = "none" if b.limit is None else f"{b.limit:,}"
        worst = "unbounded" if b.bound_max is None else f"{b.bound_max:,}"
        lines.append(f"    {b.resource}: {b.verdict.value} (max {worst}, limit {limit})")
        lines.append(f"      bound: {b.bound}")
        if b.verdict is Verdict.REFUTED and b.witness is not None and b.reached is not None:
            over = (
                ""
                if b.limit is None
                else f", over the limit of {b.limit:,} ({b.reached / max(b.limit, 1):,.2f}x)"
            )
            lines.append(
                f"      counterexample (proved): {b.witness.text()} needs at least {b.reached:,}{over}; "
                "a run on it is stopped by the quota"
            )
        elif b.verdict is Verdict.UNKNOWN:
            lines.append(f"      not proved: {b.reason}; runtime metering decides")
        if b.verdict is not Verdict.PROVED and b.estimated_factor is not None and b.estimated_factor > 1:
            lines.append(
                f"      estimate only (proves nothing): the worst case may reach {b.estimated_factor:,.1f}x the limit"
            )
        if b.hint and b.verdict is not Verdict.PROVED:
            lines.append(f"      hint: {b.hint}")
    safe = [s for s in proof.safety if s.verdict is Verdict.PROVED]
    other = [s for s in proof.safety if s.verdict is not Verdict.PROVED]
    if proof.safety:
        refuted = sum(1 for s in other if s.verdict is Verdict.REFUTED)
        lines.append(
            f"  arithmetic: {len(safe)} operation(s) proved never to fail, {refuted} refuted "
            f"(an input that makes it fail is shown), {len(other) - refuted} unknown (checked at run time)"
        )
        for s in other:
            extra = f"; e.g. {s.witness.text()}" if s.witness is not None else ""
            lines.append(f"    {s.op} at {s.pointer}: {s.verdict.value} - {s.reason}{extra}")
    return lines
