"""Per-call overhead of an installed kernel: ``SandboxHost.execute`` of a 2-parameter Bool predicate.

    pytest tests/benchmarks/test_bench_dispatch.py --benchmark-enable --benchmark-only

Group ``predicate_dispatch``: one benchmarked call is one ``host.execute(plan, "check", [hp, level])``
on the reference and on the optimized backend - gates, entry argument checks and charges, the run,
the ``RunSummary`` audit event and the ``ExecutionResult`` included - next to the same predicate as a
plain Python function call. The ``-audited`` variants also read the result's audit events and the
summary's fields, so a lazily built summary is paid for in the number that is reported.

Group ``dispatch_parts``: the per-call pieces on their own (the run context with its meter, the
entry's input checks, ``EntryCall.run_record`` without the host's result object), to see where the
time of one call goes.

With ``--benchmark-disable`` (the normal test run) each benchmark body runs once and its result is
still checked: the value against the plain predicate, the fuel against the cost table, and the two
backends against each other.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.core import costs
from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.execution import EntryCall

PREDICATE = """module "pred" version "1.0.0";
entrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }"""

_HOST = SandboxHost()
_PLAN = _HOST.prepare(PREDICATE)
_ARGS = (7, 12)

# return (1 statement) of `&&` (1) over `hp > 0` and `level >= 10` (1 + var 1 + literal 1 each):
# both operands run because the first one is true
_FUEL = costs.STATEMENT_FUEL + 7 * costs.EXPRESSION_FUEL


def predicate_py(hp: int, level: int) -> bool:
    return hp > 0 and level >= 10


def _dispatch(backend: str) -> ExecutionResult:
    return _HOST.execute(_PLAN, "check", list(_ARGS), backend=backend)


def _dispatch_audited(backend: str) -> ExecutionResult:
    result = _HOST.execute(_PLAN, "check", list(_ARGS), backend=backend)
    summary = result.audit_events[-1]
    assert summary.fields["fuelUsed"] == result.usage.fuel_used
    return result


def _check(result: ExecutionResult, backend: str) -> None:
    assert result.ok and result.value is predicate_py(*_ARGS)
    assert result.usage.fuel_used == _FUEL and result.usage.max_fuel == _PLAN.policy.limits.max_fuel
    assert [e.kind for e in result.audit_events] == ["RunSummary"]
    summary = result.audit_events[0]
    assert summary.run_id == result.run_id and summary.success
    assert summary.fields["executionMode"] == backend and summary.fields["planHash"] == _PLAN.plan_hash


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_bench_predicate_dispatch(benchmark: Any, backend: str) -> None:
    benchmark.group = "predicate_dispatch"
    _check(_dispatch(backend), backend)  # first call: compiles (optimized) and prepares the dispatch
    _check(benchmark(_dispatch, backend), backend)


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_bench_predicate_dispatch_audited(benchmark: Any, backend: str) -> None:
    benchmark.group = "predicate_dispatch"
    _check(_dispatch_audited(backend), backend)
    _check(benchmark(_dispatch_audited, backend), backend)


def test_bench_predicate_plain_python(benchmark: Any) -> None:
    benchmark.group = "predicate_dispatch"
    assert benchmark(predicate_py, *_ARGS) is True


def test_backends_agree_on_the_predicate() -> None:
    """Not a benchmark: the two backends observe the same run (everything but ids and timing)."""
    reference, optimized = _dispatch("reference"), _dispatch("optimized")
    assert reference.usage == optimized.usage and reference.value == optimized.value
    strip = ("executionMode",)
    assert [{k: v for k, v in e.fields.items() if k not in strip} for e in reference.audit_events] == [
        {k: v for k, v in e.fields.items() if k not in strip} for e in optimized.audit_events
    ]


# --- the parts of one call ------------------------------------------------------------------------


def _entry(backend: str) -> EntryCall:
    dispatch = _HOST._dispatch[(id(_PLAN), "check", backend, "python")]
    return dispatch.entry


def test_bench_part_run_context(benchmark: Any) -> None:
    """A fresh RunContext (run id, meter, deadline) with the entry's prepared facts."""
    benchmark.group = "dispatch_parts"
    _dispatch("optimized")
    facts = _entry("optimized").facts
    run = benchmark(RunContext, _PLAN, None, None, (), facts=facts)
    assert run.meter.fuel_used == 0 and run.meter.max_fuel == _PLAN.policy.limits.max_fuel
    assert len(run.run_id) == 32 and run.audit_log is None


def test_bench_part_entry_inputs(benchmark: Any) -> None:
    """The entry's arity and type checks of the two I32 inputs."""
    benchmark.group = "dispatch_parts"
    _dispatch("optimized")
    assert benchmark(_entry("optimized").read_inputs, list(_ARGS)) == _ARGS


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_bench_part_run_record(benchmark: Any, backend: str) -> None:
    """One whole run of the entry, without the host's dispatch lookup and result object."""
    benchmark.group = "dispatch_parts"
    _dispatch(backend)
    dispatch = _HOST._dispatch[(id(_PLAN), "check", backend, "python")]
    record = benchmark(dispatch.entry.run_record, list(_ARGS), dispatch.backend)
    run_id, value, error, usage, events = record[:5]
    assert error is None and value is True and usage.fuel_used == _FUEL
    assert events[-1].run_id == run_id and events[-1].fields["fuelUsed"] == _FUEL
