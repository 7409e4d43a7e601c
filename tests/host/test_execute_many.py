"""``SandboxHost.execute_many``: every row is its own run, exactly as a separate ``execute`` of it.

Each row's result must equal what ``execute`` returns for the same arguments (everything but the run
id and timestamps), a failing row must be that row's result without stopping the others, and only
``stop_on_error`` ends a batch early - without taking later rows from the caller's iterator.
Checked on both backends, on the optimized fast lane (compact rows built into results when read)
and on plans that take the ordinary path (bindings with commands applied per row).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend

from ..optimized.differential import differences, observe
from ..runtime.kernels import appending_binding

PRED = 'module "p" version "1.0.0";\nentrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }\n'
LOOP = """module "l" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n { acc = acc + i % 7; }
    return 100 / (n - 3) + acc;
}"""
EVENT = """module "e" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> Bool { return map.get(ev, "hp") > 0; }"""
WRITE = """module "w" version "1.0.0";
entrypoint fn main(n I32) -> Bool { if n > 0 { return world.write(n); } return false; }"""

_CACHE = ArtifactCache(capacity=16)
BACKENDS = ("reference", "optimized")

# good rows, refused inputs (type, range, arity, not a sequence), one per kind
PRED_ROWS: list[Any] = [[7, 12], [0, 12], ["7", 1], [2**31, 1], [7], [7, 12, 1], "ab", [-3, 10], [True, 10]]
LOOP_ROWS: list[Any] = [[0], [5], [3], [100_000], [2000], [-1]]  # 3: division by zero; 100000: fuel
LOOP_ROWS += [(4,), [2**31], [True], [], [1, 2], ["5"]]  # a tuple row, then refused inputs


def _host(**options: Any) -> SandboxHost:
    return SandboxHost(backends={"optimized": OptimizedBackend(cache=_CACHE)}, **options)


def _agree(batch: ExecutionResult, single: ExecutionResult) -> None:
    diff = differences(observe(single), observe(batch))
    assert not diff, "\n".join(diff)
    assert batch.executed_by == single.executed_by and batch.return_type == single.return_type
    assert batch.audit_events[-1].run_id == batch.run_id != single.run_id


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("source", "entry", "rows"),
    [
        (PRED, "check", PRED_ROWS),
        (LOOP, "main", LOOP_ROWS),
        (EVENT, "check", [[{"hp": 1}], [{"hp": 0}], [{}]]),
    ],
    ids=["predicate", "loop", "event"],
)
def test_each_row_equals_a_separate_execute(backend: str, source: str, entry: str, rows: list[Any]) -> None:
    policy = (
        Policy.builder()
        .with_fuel(50_000)
        .with_max_loop_iterations(10**6)
        .with_max_wall_time_ms(60_000)
        .build()
    )
    host = _host()
    plan = host.prepare(source, policy)
    for _ in range(2):  # the first row compiles; the optimized fast lane takes the rest
        batch = host.execute_many(plan, entry, rows, backend=backend)
        assert (batch._defer is not None) == (backend == "optimized")
        singles = [host.execute(plan, entry, row, backend=backend) for row in rows]
        assert len(batch) == len(rows)
        for got, expected in zip(batch, singles, strict=True):
            _agree(got, expected)
        assert batch.values() == [r.value for r in singles]
        assert batch.errors() == [r.error for r in singles]
        assert len({r.run_id for r in batch}) == len(rows)
        assert any(not r.ok for r in singles) and any(r.ok for r in singles)


def test_a_failing_row_does_not_stop_the_batch_unless_asked() -> None:
    host = _host()
    plan = host.prepare(PRED)
    rows = [[1, 12], [1, 12], ["x", 1], [1, 12]]
    assert [r.ok for r in host.execute_many(plan, "check", rows, backend="optimized")] == [
        True,
        True,
        False,
        True,
    ]

    taken: list[int] = []

    def stream() -> Iterator[list[object]]:
        for index, row in enumerate(rows):
            taken.append(index)
            yield row

    for backend in BACKENDS:
        taken.clear()
        stopped = host.execute_many(plan, "check", stream(), backend=backend, stop_on_error=True)
        assert [r.ok for r in stopped] == [True, True, False]
        assert stopped[-1].error is not None and stopped[-1].error.code == "R-VALUE-TYPE"
        assert taken == [0, 1, 2]  # the row after the failure was never taken from the stream


def test_results_are_built_once_and_read_alike() -> None:
    host = _host()
    plan = host.prepare(PRED)
    host.execute(plan, "check", [1, 12], backend="optimized")
    batch = host.execute_many(plan, "check", [[i, 12] for i in range(-2, 3)], backend="optimized")
    assert batch[1] is batch[1] and batch[-1] is batch[4] and batch[1:3] == (batch[1], batch[2])
    assert [r.value for r in batch] == [False, False, False, True, True] == batch.values()
    with pytest.raises(IndexError):
        batch[5]
    assert host.execute_many(plan, "check", [], backend="optimized").values() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_row_applies_its_own_commands(backend: str) -> None:
    """A plan with bindings takes the ordinary path for every row; each successful row's commands
    are applied as that row's batch, a failed row applies nothing."""
    world: list[int] = []
    host = SandboxHost(
        [appending_binding("world.write", "write", "n", world)],
        backends={"optimized": OptimizedBackend(cache=_CACHE)},
    )
    plan = host.prepare(WRITE, Policy.builder().grant("world.write").build())
    batch = host.execute_many(plan, "main", [[1], [0], ["bad"], [2]], backend=backend)
    assert [r.ok for r in batch] == [True, True, False, True]
    assert [r.commands_applied for r in batch] == [1, 0, 0, 1] and world == [1, 2]
    assert host.execute_many(plan, "main", [[3]], backend=backend, apply_commands_on_success=False)[0].ok
    assert world == [1, 2]


def test_a_refused_plan_fails_every_row() -> None:
    host = _host()
    plan = host.prepare(PRED)
    batch = host.execute_many(plan, "check", [[1, 12], [2, 12]], backend="no-such-backend")
    assert [r.error.code if r.error else None for r in batch] == ["R-BACKEND-UNAVAILABLE"] * 2
