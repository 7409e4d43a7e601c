"""The conformance corpus's run-stage cases through ``isolation="worker"``, compared with in process.

Everything a host observes must be the same whether the kernel's body ran in this process or in an
isolated worker: the value, the error (category, code, safe message, pointer and line:column),
every usage counter, the per-binding call counts, the queued and applied host commands and the
audit events (``tests/optimized/differential.observe``). Each case runs twice, in process and in a
pooled strict-profile worker, each with its own fresh case root and fixtures.

Cost: a round trip to the worker costs milliseconds, and the corpus has about 900 run cases, so the
whole corpus takes minutes on a loaded 2-core machine: it is ``slow`` (``make test-slow``, which CI
runs). A deterministic sample (every ``SAMPLE_EVERY``-th case by name, on both backends, plus every
``HARD_EVERY``-th case of the area that exercises the worker's relay hardest, bindings: about 180
runs, under a minute) is the check to run by hand while changing the worker (``-k sample``); it is
slow too (``tests/slow_tests.txt``). No case is excluded: the only differences ``differences`` tolerates are the
usage and audit of a run stopped by its wall-clock deadline, which differ between two in-process
runs too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
from dotboxd.host import SandboxHost
from dotboxd.isolation.pool import WorkerPool
from tests.corpus_cases import corpus_cases

from ..optimized.differential import Observation, _without_root, differences, observe, reset_fixtures

pytestmark = pytest.mark.skipif(not Path("/proc/self/ns/net").exists(), reason="needs Linux namespaces")

RUN_CASES = sorted((c for c in corpus_cases() if c.expect.stage == "run"), key=lambda c: c.name)
SAMPLE_EVERY = 16
HARD_AREAS = ("bindings",)
HARD_EVERY = 3
SAMPLE = [
    c
    for index, c in enumerate(RUN_CASES)
    if index % SAMPLE_EVERY == 0 or (c.area in HARD_AREAS and index % HARD_EVERY == 0)
]


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, recycle_after=100_000) as shared:
        yield shared


def _observe(case: Case, backend: str, pool: WorkerPool | None) -> Observation:
    module = import_stage(case.raw, case.origin)
    assert isinstance(module, Module)
    with case_root(case.raw) as root:
        validated = validate_case(module, case.raw, root)
        host = SandboxHost(bindings=validated.catalog)
        reset_fixtures(validated.plan)
        options = {} if pool is None else {"isolation": "worker", "worker_pool": pool}
        result = host.execute(
            validated.plan,
            case.entrypoint,
            list(case.raw.get("args", [])),
            backend=backend,
            encoding="json",
            **options,  # type: ignore[arg-type]
        )
        if pool is not None:
            assert result.isolation_layers, "an isolated run names its layers"
        observation = observe(result)
        if root is not None:
            plan = validated.plan
            observation = _without_root(
                observation, {root: "$ROOT", plan.policy_hash: "$POLICY_HASH", plan.plan_hash: "$PLAN_HASH"}
            )
        return observation


def _agree(case: Case, backend: str, pool: WorkerPool) -> None:
    in_process = _observe(case, backend, None)
    isolated = _observe(case, backend, pool)
    diff = differences(in_process, isolated)
    assert not diff, "\n".join(diff)


def test_the_sample_covers_the_corpus_broadly() -> None:
    assert len(RUN_CASES) >= 300 and len(SAMPLE) >= len(RUN_CASES) // SAMPLE_EVERY
    assert sum(c.area in HARD_AREAS for c in SAMPLE) >= 20
    assert len({c.area for c in SAMPLE}) >= 8


@pytest.mark.parametrize("backend", ["reference", "optimized"])
@pytest.mark.parametrize("case", SAMPLE, ids=[c.name for c in SAMPLE])
def test_worker_run_agrees_with_in_process_sample(case: Case, backend: str, pool: WorkerPool) -> None:
    _agree(case, backend, pool)


@pytest.mark.slow  # the whole corpus takes minutes: make test-slow runs it
@pytest.mark.parametrize("backend", ["reference", "optimized"])
@pytest.mark.parametrize("case", RUN_CASES, ids=[c.name for c in RUN_CASES])
def test_worker_run_agrees_with_in_process_whole_corpus(case: Case, backend: str, pool: WorkerPool) -> None:
    _agree(case, backend, pool)
