"""Every plan the generated path accepts, the disk cache's parsed path accepts too (issue 16).

Why: the disk cache stores an artifact's source (``ast.unparse``) and verifies the tree it parses
back (``fold_negative_literals(ast.parse(...))``) before it runs it. The printed source is not
always the tree the generator built - ``Constant(-951)`` prints as ``-951`` and ``-(951)`` does too -
so a rule that reads one spelling refused the other: rule 7 a loop bound ``while k0 < -1:`` parsed
without the fold, rule 27 a negation of a literal (``t0 = -951``) after it. Such a refusal fails
safe (quarantine, recompile) but costs a compile per process and hides real quarantines among
false ones. So each plan here goes through the real cache twice - compiled and stored, then read
back from disk by a fresh cache - and the read must be a disk hit with nothing quarantined and
nothing recompiled.

The quick run takes the plans that were refused before (the corpus's and the fingerprint tool's
generated programs with negative literals, loop bounds and negations of literals) and a few
block-shaped and fast-form kernels; the slow run takes the whole corpus, 300 generated programs,
40 kernels of each fast-form generator, and 100 generated programs under each switch a host may
turn off (blocks, bulk loops, inlining).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from dotboxd.conformance.generator import RandomSource, build_program
from dotboxd.conformance.loader import CORPUS_ROOT, load_cases
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.runtime.optimized import ArtifactCache, GenOptions
from dotboxd.runtime.optimized.errors import CompileFailure, VerifierFailure
from dotboxd.validator.plan import ExecutionPlan

from .block_programs import build_block_kernel
from .chunk_fuzz import fuzz_policy
from .chunk_programs import RandomChooser, build_kernel
from .edge_programs import build_edge_kernel
from .kernels import prepare
from .value_programs import build_value_kernel

REFUSED_BEFORE = ("gen-s1-0003", "gen-s1-0006", "gen-s1-0027", "gen-s1-0040", "gen-s1-0070")
"""Corpus cases whose parsed source was refused: negations of literals (rule 27) and negative loop
bounds (rule 7 without the fold)."""
SEED_1 = CORPUS_ROOT / "generated" / "generated-seed-1.json"
"""The corpus file that holds them (loading only it keeps the quick run quick)."""
GENERATED_BEFORE = (54, 183, 297)
"""Seeds of the fingerprint tool's generated programs (``fingerprint-<seed>``) refused likewise."""
GENERATED = 300
KERNELS = 40
OTHER_OPTIONS = {
    "blocks off": GenOptions(block_loops=False),
    "bulk off": GenOptions(bulk_loops=False),
    "inline off": GenOptions(inline=False),
}
"""The switches a host may turn off: each generates other forms (per-entry stubs, exact loops,
calls instead of inlined copies), and the cache keys and reads them back the same way."""

_BUILDERS = {
    "blocks": build_block_kernel,
    "chunks": build_kernel,
    "edge": build_edge_kernel,
    "values": build_value_kernel,
}


def corpus_plans(
    names: Iterable[str] | None = None, paths: list[Path] | None = None
) -> Iterator[tuple[str, ExecutionPlan]]:
    """The corpus cases that validate (all, or those named, of the files named), as plans."""
    wanted = None if names is None else set(names)
    for case in load_cases(paths):
        if wanted is not None and case.name not in wanted:
            continue
        try:
            plan = validate_case(import_stage(case.raw, case.origin), case.raw, None).plan
        except Exception:  # a case meant to be refused has no plan to compile
            continue
        yield case.name, plan


def generated_plans(seeds: Iterable[int]) -> Iterator[tuple[str, ExecutionPlan]]:
    """The fingerprint tool's generated programs (``tools/codegen_fingerprint.py``)."""
    for seed in seeds:
        program = build_program(RandomSource(f"fingerprint-{seed}"))
        raw = {"policy": program.policy_json, "bindings": program.bindings_json}
        yield f"generated:{seed}", validate_case(program.module, raw, None).plan


def kernel_plans(kind: str, seeds: Iterable[int]) -> Iterator[tuple[str, ExecutionPlan]]:
    """Kernels of one fast-form generator (``chunk_fuzz``'s), as their fuzz policy prepares them."""
    for seed in seeds:
        kernel = _BUILDERS[kind](RandomChooser(seed))
        yield f"{kind}:{seed}", prepare(kernel.text, fuzz_policy())


def assert_round_trips(
    plans: Iterable[tuple[str, ExecutionPlan]], directory: Path, options: GenOptions | None = None
) -> int:
    """Each plan the generated path accepts is read back from disk, verified, without quarantine or
    recompilation. Returns how many plans were compiled (a plan the backend refuses is skipped: the
    parsed path has nothing to read)."""
    stored = ArtifactCache(directory=directory)
    refused: list[str] = []
    compiled = 0
    for name, plan in plans:
        try:
            stored.get_or_compile(plan, options)
        except (CompileFailure, VerifierFailure):
            continue
        compiled += 1
        reread = ArtifactCache(directory=directory)
        try:
            reread.get_or_compile(plan, options)
        except VerifierFailure as failure:
            refused.append(f"{name}: {failure}")
            continue
        stats = reread.stats
        if (stats.disk_hits, stats.compiles, stats.quarantined) != (1, 0, 0):
            refused.append(f"{name}: read back as {stats}")
    assert not refused, "\n".join(refused)
    return compiled


def test_plans_refused_before_round_trip(tmp_path: Path) -> None:
    plans = [*corpus_plans(REFUSED_BEFORE, [SEED_1]), *generated_plans(GENERATED_BEFORE)]
    assert len(plans) == len(REFUSED_BEFORE) + len(GENERATED_BEFORE)
    assert assert_round_trips(plans, tmp_path) == len(plans)


@pytest.mark.parametrize("kind", sorted(_BUILDERS))
def test_fast_form_kernels_round_trip(kind: str, tmp_path: Path) -> None:
    assert assert_round_trips(kernel_plans(kind, range(3)), tmp_path) == 3


@pytest.mark.slow
def test_every_corpus_plan_round_trips(tmp_path: Path) -> None:
    assert assert_round_trips(corpus_plans(), tmp_path) > 1000


@pytest.mark.slow
def test_generated_programs_round_trip(tmp_path: Path) -> None:
    assert assert_round_trips(generated_plans(range(GENERATED)), tmp_path) == GENERATED


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(_BUILDERS))
def test_many_fast_form_kernels_round_trip(kind: str, tmp_path: Path) -> None:
    assert assert_round_trips(kernel_plans(kind, range(KERNELS)), tmp_path) == KERNELS


@pytest.mark.slow
@pytest.mark.parametrize("options", sorted(OTHER_OPTIONS))
def test_generated_programs_round_trip_under_other_options(options: str, tmp_path: Path) -> None:
    plans = generated_plans(range(100))
    assert assert_round_trips(plans, tmp_path, OTHER_OPTIONS[options]) == 100
