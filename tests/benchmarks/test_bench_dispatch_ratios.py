"""Issue 16's dispatch and arithmetic targets, each next to its plain-CPython twin in one run.

    pytest tests/benchmarks/test_bench_dispatch_ratios.py --benchmark-enable -s

Workloads (optimized backend, ``SandboxHost``): a two-integer predicate per ``execute``; the same
predicate over a dict event with two fields (``Map<String, I32>``) per ``execute``; the same with an
``I32`` limit as a second parameter, the event first and then last (an entry whose parameters are
not just the event takes another lane path than the one-parameter event); the two-integer
predicate per row of ``execute_many`` (values read, and every row's ``ExecutionResult`` read); the
arithmetic loop at 1.5M iterations and Collatz to 20k. Each has a plain Python twin measured in the
same run; the last test prints the ratio table (best round, the most stable statistic on a shared
machine) and records it in ``extra_info``.

With ``--benchmark-disable`` (the normal test run) each body runs once at a small size and its
result is checked against the twin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend

from .test_bench_backends import ARITH, _policy, arith_py
from .workloads import COLLATZ, collatz_py
from .workloads import frozen_heap as frozen_heap

PREDICATE = """module "pred" version "1.0.0";
entrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }"""
EVENT = """module "event" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> Bool { return map.get(ev, "hp") > 0 && map.get(ev, "level") >= 10; }"""
EVENT_FIRST = """module "event2" version "1.0.0";
entrypoint fn check(ev Map<String, I32>, lim I32) -> Bool { return map.get(ev, "hp") > lim && map.get(ev, "level") >= 10; }"""
EVENT_LAST = """module "event2l" version "1.0.0";
entrypoint fn check(lim I32, ev Map<String, I32>) -> Bool { return map.get(ev, "hp") > lim && map.get(ev, "level") >= 10; }"""

_HOST = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
_PRED = _HOST.prepare(PREDICATE)
_EVENT = _HOST.prepare(EVENT)
_EVENT_FIRST = _HOST.prepare(EVENT_FIRST)
_EVENT_LAST = _HOST.prepare(EVENT_LAST)
_LIMIT = 0  # the other parameter of the event entries: ``hp > 0`` as in ``EVENT``
CALLS = 1000  # calls (or rows) per benchmarked round
_ROWS = [[hp % 40 - 5, 12] for hp in range(CALLS)]
_EVENTS = [{"hp": hp % 40 - 5, "level": 12} for hp in range(CALLS)]
_EXPECTED_HITS = sum(1 for hp, level in _ROWS if hp > 0 and level >= 10)
_BEST: dict[str, float] = {}


def predicate_py(hp: int, level: int) -> bool:
    return hp > 0 and level >= 10


def event_py(ev: dict[str, int]) -> bool:
    return ev["hp"] > 0 and ev["level"] >= 10


def event_limit_py(ev: dict[str, int], lim: int) -> bool:
    return ev["hp"] > lim and ev["level"] >= 10


def _record(benchmark: Any, key: str, per: int = 1) -> None:
    if benchmark.stats is not None:
        _BEST[key] = benchmark.stats.stats.min / per


def _rounds(benchmark: Any, rounds: int) -> int:
    return 1 if getattr(benchmark, "disabled", False) else rounds


# --- per-call dispatch --------------------------------------------------------------------------


def _pred_execute() -> int:
    execute = _HOST.execute
    return sum(bool(execute(_PRED, "check", row, backend="optimized").value) for row in _ROWS)


def _pred_plain() -> int:
    return sum(predicate_py(hp, level) for hp, level in _ROWS)


def _event_execute() -> int:
    execute = _HOST.execute
    return sum(bool(execute(_EVENT, "check", [ev], backend="optimized").value) for ev in _EVENTS)


def _event_plain() -> int:
    return sum(event_py(ev) for ev in _EVENTS)


def _event_first_execute() -> int:
    execute = _HOST.execute
    return sum(
        bool(execute(_EVENT_FIRST, "check", [ev, _LIMIT], backend="optimized").value) for ev in _EVENTS
    )


def _event_last_execute() -> int:
    execute = _HOST.execute
    return sum(bool(execute(_EVENT_LAST, "check", [_LIMIT, ev], backend="optimized").value) for ev in _EVENTS)


def _event_limit_plain() -> int:
    return sum(event_limit_py(ev, _LIMIT) for ev in _EVENTS)


def _many_values() -> int:
    return sum(bool(v) for v in _HOST.execute_many(_PRED, "check", _ROWS, backend="optimized").values())


def _many_results() -> int:
    return sum(bool(r.value) for r in _HOST.execute_many(_PRED, "check", _ROWS, backend="optimized"))


DISPATCH: dict[str, Callable[[], int]] = {
    "predicate 2 ints, execute": _pred_execute,
    "predicate 2 ints, plain": _pred_plain,
    "dict event, execute": _event_execute,
    "dict event, plain": _event_plain,
    "dict event + limit, execute": _event_first_execute,
    "limit + dict event, execute": _event_last_execute,
    "dict event + limit, plain": _event_limit_plain,
    "execute_many per row, values": _many_values,
    "execute_many per row, results read": _many_results,
}


@pytest.mark.parametrize("name", list(DISPATCH))
def test_bench_dispatch_ratio(benchmark: Any, name: str) -> None:
    benchmark.group = "dispatch_ratio"
    body = DISPATCH[name]
    assert body() == _EXPECTED_HITS  # warm: compiles, prepares the dispatch record and the lane
    assert benchmark.pedantic(body, rounds=_rounds(benchmark, 30), iterations=1) == _EXPECTED_HITS
    _record(benchmark, name, CALLS)


# --- arithmetic loops at full size ---------------------------------------------------------------

LOOPS: dict[str, tuple[str, Callable[[int], int], int, int, str]] = {
    "arith": (ARITH, arith_py, 1_500_000, 3_000, "arith_loop"),
    "collatz": (COLLATZ, collatz_py, 20_000, 100, "branchy_while"),
}


@pytest.mark.parametrize("runner", ["optimized", "plain"])
@pytest.mark.parametrize("name", list(LOOPS))
def test_bench_loop_ratio(benchmark: Any, name: str, runner: str) -> None:
    benchmark.group = f"loop_{name}"
    source, twin, full, small, policy_name = LOOPS[name]
    n = small if getattr(benchmark, "disabled", False) else full
    expected = twin(n)
    if runner == "plain":
        assert benchmark.pedantic(twin, args=(n,), rounds=_rounds(benchmark, 5), iterations=1) == expected
    else:
        plan = _HOST.prepare(source, _policy(policy_name, False))
        _HOST.execute(plan, "main", [n], backend="optimized")  # compile outside the timing
        result = benchmark.pedantic(
            _HOST.execute,
            args=(plan, "main", [n]),
            kwargs={"backend": "optimized"},
            rounds=_rounds(benchmark, 5),
            iterations=1,
        )
        assert result.ok and result.value == expected, result.error
    _record(benchmark, f"{name}, {runner}")


def test_bench_dispatch_report(benchmark: Any) -> None:
    """Print (and record) the ratio table; runs last in this file."""
    benchmark.group = "report"
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    if benchmark.disabled or not _BEST:
        return
    rows = [
        ("predicate, 2 ints, per `execute`", "predicate 2 ints, execute", "predicate 2 ints, plain"),
        ("predicate, dict event (2 fields), per `execute`", "dict event, execute", "dict event, plain"),
        (
            "predicate, dict event then an I32 limit, per `execute`",
            "dict event + limit, execute",
            "dict event + limit, plain",
        ),
        (
            "predicate, an I32 limit then a dict event, per `execute`",
            "limit + dict event, execute",
            "dict event + limit, plain",
        ),
        (
            "`execute_many`, 2-int predicate, per row (values read)",
            "execute_many per row, values",
            "predicate 2 ints, plain",
        ),
        (
            "`execute_many`, 2-int predicate, per row (every result read)",
            "execute_many per row, results read",
            "predicate 2 ints, plain",
        ),
        ("arithmetic loop, 1.5M iterations", "arith, optimized", "arith, plain"),
        ("Collatz to 20k", "collatz, optimized", "collatz, plain"),
    ]
    lines = ["| workload | optimized | plain CPython | ratio |", "|---|---|---|---|"]
    for label, ours, plain in rows:
        if ours in _BEST and plain in _BEST:
            unit, scale = ("us", 1e6) if _BEST[ours] < 1e-3 else ("ms", 1e3)
            lines.append(
                f"| {label} | {_BEST[ours] * scale:.2f} {unit} | {_BEST[plain] * scale:.3f} {unit} | "
                f"{_BEST[ours] / _BEST[plain]:.1f}x |"
            )
    table = "\n".join(lines)
    benchmark.extra_info["table"] = table
    print("\n" + table)
