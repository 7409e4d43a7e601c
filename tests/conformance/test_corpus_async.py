"""The whole corpus through ``SandboxHost.execute_async`` on both backends.

Every case must meet the same expectations when its run stage is awaited on an event loop (async
fixture bindings awaited on that loop) as through the synchronous ``execute``: a case cannot tell
the two entry points apart. The whole corpus is run, not a subset: through the async path it costs
about what the synchronous run does (about 13 s of CPU per backend on this project's machines).
"""

from __future__ import annotations

import pytest

from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.report import failure_line
from dotboxd.conformance.runner import run_cases
from dotboxd.conformance.stage_run import VIA_ASYNC
from tests.corpus_cases import corpus_cases

CASES = list(corpus_cases())


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_every_case_passes_through_execute_async(backend: str) -> None:
    report = run_cases(
        CASES, {backend: InProcessBackend(backend, VIA_ASYNC)}, [backend], frozenset({backend})
    )
    failures = [failure_line(result) for result in report.results if not result.passed]
    assert failures == []
    assert report.passed == len(report.results) > 1000
    async_cases = [r for r in report.results if "async" in r.case.tags and r.case.expect.stage == "run"]
    assert len(async_cases) >= 3


def test_the_async_mode_really_runs_through_execute_async(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard for the test above: in the async mode the synchronous entry point is never used."""
    from dotboxd.host import SandboxHost

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the synchronous execute was called")

    monkeypatch.setattr(SandboxHost, "execute", refuse)
    chosen = [case for case in CASES if "async" in case.tags and case.expect.stage == "run"]
    assert chosen
    backend = InProcessBackend("reference", VIA_ASYNC)
    for case in chosen:
        actual = backend.evaluate(case)
        assert actual.outcome != "crash", actual.message
    assert InProcessBackend("reference").evaluate(chosen[0]).outcome == "crash"
