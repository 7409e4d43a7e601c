"""Fast-lane eligibility is decided per entrypoint from what the entry can reach, not per plan.

A plan whose other entrypoint calls a binding used to lose the lane for every entrypoint, so a pure
predicate in such a plan paid the full ordinary path on every event. Now an entrypoint gets the lane
exactly when no binding is reachable from it through any chain of module functions
(``validator.purity.reached_bindings``); one that can reach a binding, directly or behind helpers,
never does. Either way a host sees what the ordinary path gives.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.execution import EntryCall
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized.fastlane import FastLane
from dotboxd.validator.purity import reached_bindings
from tests.distributed.worker_setup import bindings

from ..optimized.differential import differences, observe

MIXED = """module "mix" version "1.0.0";
fn twice(x I32) -> I32 { return x * 2; }
fn scaled(x I32) -> I32 { return test.scale(x); }
fn via(x I32) -> I32 { return twice(scaled(x)) + 1; }
entrypoint fn keep(level I32) -> Bool { return twice(level) > 5; }
entrypoint fn deep(level I32) -> I32 { return via(level); }
entrypoint fn direct(level I32) -> I32 { return test.scale(level); }
entrypoint fn dead(level I32) -> I32 { return level; return test.scale(level); }
"""

PURE_ENTRIES = ("keep", "dead")
BINDING_ENTRIES = ("deep", "direct")
_CACHE = ArtifactCache(capacity=8)


def _hosts() -> tuple[SandboxHost, SandboxHost, Any]:
    backend = OptimizedBackend(cache=_CACHE)
    laned = SandboxHost(bindings(), backends={"optimized": backend})
    ordinary = SandboxHost(laned.catalog, backends={"optimized": backend}, fast_lanes=False)
    return laned, ordinary, laned.prepare(MIXED)


def _same(lane: ExecutionResult, plain: ExecutionResult) -> None:
    diff = differences(observe(plain), observe(lane))
    assert not diff, "\n".join(diff)
    strip = ("runId",)
    assert {k: v for k, v in lane.to_json().items() if k not in strip} == {
        k: v for k, v in plain.to_json().items() if k not in strip
    }
    assert [e.kind for e in lane.audit_events] == [e.kind for e in plain.audit_events]


def test_reached_bindings_follows_every_helper_of_the_entry() -> None:
    _, _, plan = _hosts()
    assert plan.bindings, "the plan has a binding (another entrypoint uses it)"
    assert reached_bindings(plan, "keep") == frozenset()
    assert reached_bindings(plan, "dead") == frozenset()  # only dead code calls it: never runs
    assert reached_bindings(plan, "deep") == {"test.scale"}  # deep -> via -> scaled -> binding
    assert reached_bindings(plan, "direct") == {"test.scale"}
    assert reached_bindings(plan, "missing") is None  # unknown: the caller must assume any


@pytest.mark.parametrize("entry", PURE_ENTRIES)
def test_fast_lane_taken_for_pure_entry_of_a_plan_whose_other_entry_calls_a_binding(entry: str) -> None:
    laned, ordinary, plan = _hosts()
    assert FastLane.eligible(EntryCall(plan, entry))
    laned.execute(plan, entry, [1], backend="optimized")  # compiles the plan
    lane = laned._dispatch[(id(plan), entry, "optimized", "python")].fast
    assert lane is not None
    taken = 0
    for level in (-3, 2, 3, 9, 2**30):
        record = lane([level])
        taken += record is not None
        _same(
            laned.execute(plan, entry, [level], backend="optimized"),
            ordinary.execute(plan, entry, [level], backend="optimized"),
        )
    assert taken == 5
    rows = [[level] for level in range(-5, 20)]
    many = laned.execute_many(plan, entry, rows, backend="optimized")
    plain = ordinary.execute_many(plan, entry, rows, backend="optimized")
    for got, want in zip(many, plain, strict=True):
        _same(got, want)


@pytest.mark.parametrize("entry", BINDING_ENTRIES)
def test_fast_lane_never_offered_to_an_entry_that_reaches_a_binding(entry: str) -> None:
    """A binding queues commands, writes audit events and counts host calls: an entry that can
    reach one, even behind two helpers, must keep the ordinary path (binding audit, call counts)."""
    laned, ordinary, plan = _hosts()
    assert not FastLane.eligible(EntryCall(plan, entry))
    for level in (1, 4, 100):
        got = laned.execute(plan, entry, [level], backend="optimized")
        want = ordinary.execute(plan, entry, [level], backend="optimized")
        assert got.ok and got.value == (6 * level + 1 if entry == "deep" else 3 * level)
        _same(got, want)
        assert got.usage.host_calls == want.usage.host_calls >= 1
    assert laned._dispatch[(id(plan), entry, "optimized", "python")].fast is None
    rows = [[level] for level in range(5)]
    for got, want in zip(
        laned.execute_many(plan, entry, rows, backend="optimized"),
        ordinary.execute_many(plan, entry, rows, backend="optimized"),
        strict=True,
    ):
        _same(got, want)
