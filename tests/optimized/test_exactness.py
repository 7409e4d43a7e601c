"""Failure points are exact: for every budget, both backends stop at the same charge.

Each kernel is run with every fuel budget from 0 to one past what it needs (and every loop budget,
call-depth limit, allocation and string budget in a range), on both backends, and everything
observable is compared. This is where bulk reservations, fast-path accounting, segment replay and
loop refunds are held to the reference interpreter charge by charge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from dotboxd.core.values import Value
from dotboxd.host import SandboxHost
from dotboxd.runtime.context import RunContext
from dotboxd.runtime.optimized import Artifact, GenOptions, compile_plan
from dotboxd.runtime.optimized.stubs import CHUNK

from .differential import differences, observe
from .kernels import FEATURES, LOOPS_AND_FAULTS, double, policy

CALLS = """module "calls" version "1.0.0";
fn leaf(x I32) -> I32 { if x % 2 == 0 { return x / 2; } return 3 * x + 1; }
fn mid(x I32) -> I32 { return leaf(x) + leaf(x + 1); }
fn top(x I32) -> I32 { return mid(x) - mid(x - 1); }
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n { acc = acc + top(i) % 13; }
    k = 0;
    while k < n { k = k + 1; acc = acc + mid(k) % 7; }
    return acc + top(n);
}
"""

COLLECTIONS = """module "coll" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    m = map.empty[Map<String, I32>]();
    s = "";
    for i in 0 .. n {
        xs = list.add(xs, i);
        s = string.concatBudgeted(s, "ab");
        m = map.set(m, int32.toStringInvariant(i % 3), i);
    }
    r = record.new[Record<List<I32>, String>](xs, s);
    same = xs == list.add(list.empty[I32](), 0);
    total = 0;
    for j in 0 .. list.count(xs) { total = total + list.get(xs, j); }
    if map.containsKey(m, "1") { total = total + map.get(m, "1"); }
    return total + string.length(record.get(r, 1));
}
"""

STRAIGHT = """module "straight" version "1.0.0";
entrypoint fn main(a I32, b I32) -> I32 {
    x = a * b + (a - b) / 3;
    y = x % 7 + math.abs(a) - math.clamp(b, 0, 10);
    ok = x > y && (a != 0 || b / a > 1);
    if ok { return x / (y - 4) + math.max(a, b); }
    return -y % (a + 1);
}
"""


class _Pinned:
    """A backend running one precompiled artifact: limits live in the run's meter, not in the
    generated code, so one artifact serves every budget of a sweep."""

    name = "optimized"

    def __init__(self, artifact: Artifact) -> None:
        self.artifact = artifact

    def run(self, run: RunContext, function_id: str, args: tuple[Value, ...]) -> Value:
        return self.artifact.run(run, function_id, args)


def _all_budgets(text: str, args: Sequence[Any], limit: str, values: Sequence[int], **fixed: int) -> None:
    host = SandboxHost(bindings=[double])
    base = host.prepare(text, policy(**fixed))
    artifacts = [
        compile_plan(base, options) for options in (GenOptions(), GenOptions(bulk_loops=False, inline=False))
    ]
    for value in values:
        plan = dataclasses.replace(base, policy=policy(**{limit: value}, **fixed))
        for artifact in artifacts:
            pinned = SandboxHost(bindings=[double], backends={"optimized": _Pinned(artifact)})
            reference = observe(pinned.execute(plan, "main", list(args)))
            optimized = observe(pinned.execute(plan, "main", list(args), backend="optimized"))
            diff = differences(reference, optimized)
            assert not diff, f"{limit}={value} {artifact.key.options}:\n  " + "\n  ".join(diff)


def _fuel_needed(text: str, args: Sequence[Any], **fixed: int) -> int:
    host = SandboxHost(bindings=[double])
    result = host.execute(host.prepare(text, policy(**fixed)), "main", list(args))
    return result.usage.fuel_used


KERNELS: dict[str, tuple[str, list[Any]]] = {
    "loops and faults": (LOOPS_AND_FAULTS, [6, 2]),
    "loops ending in a fault": (LOOPS_AND_FAULTS, [4, 1]),
    "features": (FEATURES, [9, ["xy", "\U0001f600"]]),
    "inlined calls": (CALLS, [5]),
    "collections": (COLLECTIONS, [4]),
    "straight line": (STRAIGHT, [7, -3]),
    "straight line, other branch": (STRAIGHT, [-1, 5]),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_fuel_budget(name: str) -> None:
    text, args = KERNELS[name]
    needed = _fuel_needed(text, args)
    assert needed > 0
    _all_budgets(text, args, "max_fuel", range(needed + 2))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_loop_budget(name: str) -> None:
    text, args = KERNELS[name]
    host = SandboxHost(bindings=[double])
    loops = host.execute(host.prepare(text, policy()), "main", list(args)).usage.loop_iterations
    _all_budgets(text, args, "max_loop_iterations", range(loops + 2))


@pytest.mark.parametrize("name", ["inlined calls", "loops and faults", "features"])
def test_every_call_depth(name: str) -> None:
    text, args = KERNELS[name]
    _all_budgets(text, args, "max_call_depth", range(6))


@pytest.mark.parametrize(
    ("limit", "values"),
    [
        ("max_allocated_bytes", range(0, 400, 7)),
        ("max_total_string_bytes", range(0, 60, 2)),
        ("max_total_collection_elements", range(0, 40)),
        ("max_list_length", range(0, 6)),
        ("max_string_length", range(2, 12)),
    ],
)
def test_every_value_budget(limit: str, values: range) -> None:
    _all_budgets(COLLECTIONS, [4], limit, values)


def test_fuel_budgets_across_chunk_boundaries() -> None:
    """A loop long enough for several bulk chunks, with budgets that end inside and at the edges of
    chunks (the last iterations then run on the exact path)."""
    text = LOOPS_AND_FAULTS
    args = [3 * CHUNK + 17, -1]
    needed = _fuel_needed(text, args)
    near_end = range(needed - 40, needed + 2)
    spread = range(0, needed, needed // 30)
    _all_budgets(text, args, "max_fuel", [*spread, *near_end])


def test_loop_budgets_across_chunk_boundaries() -> None:
    args = [3 * CHUNK + 17, -1]
    budgets = [CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 16, 3 * CHUNK + 17, 3 * CHUNK + 18]
    _all_budgets(LOOPS_AND_FAULTS, args, "max_loop_iterations", budgets)
