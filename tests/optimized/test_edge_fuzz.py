"""Differential runs of what the fast-form fuzz did not reach (issue 16): Bool, I32 and String keyed
maps with ``map.remove`` / ``map.keys``, ``list.slice``, the text and math built-ins, loop-free
predicates (the fast lane's small fuel starts), chains of nested calls under ``maxCallDepth``
around what they need, and the deadline and cancellation cadence made deterministic by a clock and
a cancel token that turn at a chosen read (``cadence_fuzz``).

The quick tests run a few derandomized kernels; the slow one (``tests/slow_tests.txt``) runs 150.
``python -m tests.optimized.chunk_fuzz --edge --cadence --seeds 0:2000`` is the long local run.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotboxd.host import SandboxHost
from dotboxd.runtime.meter import CancelToken
from dotboxd.runtime.optimized import small_fuel

from .cadence_fuzz import sweep_cadence
from .chunk_fuzz import ROOM, Tally, fuzz_policy, sweep_kernel
from .chunk_programs import DrawChooser, RandomChooser, build_kernel
from .differential import backend, observe
from .edge_programs import build_edge_kernel
from .kernels import prepare

_SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=8, **_SETTINGS)  # type: ignore[arg-type]
@given(st.data())
def test_edge_kernels_agree_under_swept_budgets_clocks_and_cancels(data: st.DataObject) -> None:
    chooser = DrawChooser(data.draw)
    sweep_kernel(build_edge_kernel(chooser), chooser, samples=1, cadence=True)


@settings(max_examples=150, **_SETTINGS)  # type: ignore[arg-type]
@given(st.data())
def test_edge_kernels_agree_under_swept_budgets_clocks_and_cancels_long(data: st.DataObject) -> None:
    chooser = DrawChooser(data.draw)
    sweep_kernel(build_edge_kernel(chooser), chooser, samples=3, cadence=True)


def test_the_edge_generator_holds_every_block() -> None:
    """Seeded kernels hold every block (else the sweeps above would miss what they are for), and
    each of them validates."""
    kinds: Counter[str] = Counter()
    for seed in range(60):
        kernel = build_edge_kernel(RandomChooser(seed))
        prepare(kernel.text, fuzz_policy())
        kinds.update(block.split("/")[0] for block in kernel.blocks)
    wanted = ("keyed", "list", "text", "math", "calls", "predicate", "branches")
    assert all(kinds[name] >= 2 for name in wanted), kinds


def test_the_edge_sweeps_refuse_at_the_call_depth_and_stop_on_both_fakes() -> None:
    """Seeded kernels, swept with the fakes (each agreeing), reach the outcomes the sweeps are for:
    the call-depth refusal, both stops and fuel exhaustion."""
    tally = Tally()
    for seed in range(40):
        chooser = RandomChooser(seed)
        sweep_kernel(build_edge_kernel(chooser), chooser, samples=1, tally=tally, cadence=True)
    for outcome in ("R-QUOTA-CALL-DEPTH", "clock: R-TIMEOUT", "cancel: R-CANCELLED", "R-QUOTA-FUEL"):
        assert tally.outcomes[outcome] >= 2, tally.outcomes


def test_loop_free_predicates_start_from_a_small_fuel_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The branch-only predicates take the fast lane's small fuel start (``small_fuel``) in some
    runs, so the sweeps compare it with the reference rather than only the full-budget start."""
    starts: list[tuple[int, int]] = []
    original = small_fuel.start_fuel

    def recording(plan: Any, fid: str, function: Any, max_fuel: int) -> int:
        start = original(plan, fid, function, max_fuel)
        starts.append((start, max_fuel))
        return start

    monkeypatch.setattr("dotboxd.runtime.optimized.fastlane.start_fuel", recording)
    host = SandboxHost(backends={"optimized": backend()})
    for seed in range(120):
        kernel = build_edge_kernel(RandomChooser(seed))
        if kernel.blocks == ["branches"]:
            plan = prepare(kernel.text, fuzz_policy())
            for _ in range(3):  # compile, bind the lane, run on it
                host.execute(plan, "main", kernel.vectors[0], backend="optimized")
    assert sum(start < budget for start, budget in starts) >= 5, starts


def test_a_fake_that_turns_at_the_first_read_stops_a_long_run_on_both_backends() -> None:
    """The cadence fakes really stop a run (a loop of 2,100 iterations reads both the clock and the
    token): at the first read each backend ends with the fake's code and counters within the run's."""
    text = """module "m" version "1.0.0";
entrypoint fn main(n I32, m I32, k I32) -> I32 {
    acc = 0;
    for i in 0 .. n { acc = (acc + i * m) % 1000; }
    return acc;
}
"""
    plan = prepare(text)
    host = SandboxHost(backends={"optimized": backend()})
    outcomes: Counter[str] = Counter()
    sweep_cadence(host, plan, [2100, 3, 0], RandomChooser(0), "a long loop", outcomes)
    assert outcomes["clock: R-TIMEOUT"] >= 2 and outcomes["cancel: R-CANCELLED"] >= 2, outcomes


def test_a_token_cancelled_before_the_run_and_a_zero_wall_budget_end_both_backends_alike() -> None:
    """The two stops that fall before the first statement are exact, counters included (unlike a
    stop part way, whose position the backends' cadences decide): three optimized runs in a row (the
    first compiles) answer as the reference, over generated kernels of both kinds."""
    host = SandboxHost(backends={"optimized": backend()})
    for seed in range(6):
        for build in (build_kernel, build_edge_kernel):
            kernel = build(RandomChooser(seed))
            plan = prepare(kernel.text, fuzz_policy(**ROOM))
            zero = dataclasses.replace(plan, policy=fuzz_policy(**{**ROOM, "max_wall_time_ms": 0}))
            runs = []
            for name in ("reference", "optimized", "optimized", "optimized"):
                token = CancelToken()
                token.cancel()
                cancelled = observe(host.execute(plan, "main", kernel.vectors[0], backend=name, cancel=token))
                late = observe(host.execute(zero, "main", kernel.vectors[0], backend=name))
                runs.append((cancelled, late))
            (cancelled, late), *optimized = runs
            assert cancelled["error"][1] == "R-CANCELLED" and cancelled["usage"]["fuelUsed"] == 0, cancelled
            assert late["error"][1] == "R-TIMEOUT" and late["usage"]["fuelUsed"] == 0, late
            assert all(run == runs[0] for run in optimized), (seed, build.__name__)
