"""The event lane and inline reads at the edges the other event tests leave (issue 16, review7).

Why: the event lane (``event_lane``), the projected snapshot (rule 25) and the inline reads of it
(rule 29) were each tested alone. Here they run together, against the reference interpreter (the
oracle) and the same backend with its lanes off:

* where a deadline or a cancellation stops a projected run: the inline forms leave the 64th fuel
  charge (a deadline check) to the stub, which builds the meter there - every clock and token read
  of such a run must be a point between two operations where the reference checks too, with the
  reference's usage there (``stop_points``), for runs of 1 to 130 reads over events of 3 to 63 keys;
* a host's run id, its own cancel token (armed or already cancelled) and ``execute_many`` with
  failing rows between good ones (the pool's states after a failed run);
* a reader whose kept key sets are full (by count and by code points), so that new key sets are
  counted on every call and go through the general run, and one event dict changed between runs.

Review7 found no disagreement on any of them; the longer sweeps are slow-marked.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from dotboxd.core import event_maps
from dotboxd.host import CancelToken, Policy, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.validator.plan import ExecutionPlan

from .chunk_fuzz import ROOM, fuzz_policy
from .chunk_programs import RandomChooser
from .differential import backend, differences, observe
from .kernels import prepare
from .stop_points import sweep_stops
from .test_event_projection import EVENT, HAS, HOSTILE, _lane
from .test_inline_reads import MANY


def _reads(count: int, contains: bool) -> str:
    """A projected entry ``main`` of ``count`` reads outside loops (each an inline form): ``get`` of
    three keys, and with ``contains`` every other read a ``containsKey`` of five (two missing)."""
    lines = "\n".join(
        f'    if map.containsKey(ev, "k{i % 5}") {{ s = s + 1; }}'
        if contains and i % 2
        else f'    s = s + map.get(ev, "k{i % 3}");'
        for i in range(count)
    )
    return f"""module "m" version "1.0.0";
entrypoint fn main(ev Map<String, I32>) -> I32 {{
    s = 0;
{lines}
    return s;
}}"""


def _stops(counts: tuple[int, ...], extras: tuple[int, ...]) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    for count in counts:
        for contains in (False, True):
            plan = prepare(_reads(count, contains), fuzz_policy(**ROOM))
            host = SandboxHost(backends={"optimized": backend()})
            for extra in extras:
                event = {"k0": 1, "k1": 2, "k2": 3, **{f"x{j}": j for j in range(extra)}}
                what = f"{count} reads, containsKey {contains}, {extra} extra keys"
                sweep_stops(host, plan, [event], RandomChooser(count + extra), what, outcomes)
            assert _lane(host, plan, "main").projects, "not vacuous: the entry is projected"
    return outcomes


def test_stops_of_projected_runs_with_inline_reads_are_reference_points() -> None:
    outcomes = _stops((2, 64, 70), (0, 60))
    assert outcomes["clock: matched"] >= 6 and outcomes["cancel: matched"] >= 40, outcomes


@pytest.mark.slow
def test_stops_of_projected_runs_at_more_read_counts_and_event_sizes_are_reference_points() -> None:
    outcomes = _stops((1, 30, 63, 65, 130), (1, 20, 63))
    assert outcomes["clock: matched"] >= 20, outcomes


# --- the host's run id, cancel tokens, execute_many -------------------------------------------------


def _hosts(source: str, limits: dict[str, int]) -> tuple[SandboxHost, SandboxHost, ExecutionPlan]:
    shared = OptimizedBackend(cache=ArtifactCache())
    laned = SandboxHost(backends={"optimized": shared})
    plain = SandboxHost(backends={"optimized": shared}, fast_lanes=False)
    plan = laned.prepare(source, Policy.builder().with_limits(max_wall_time_ms=60_000, **limits).build())
    for _ in range(2):  # compiled, then the lane bound
        laned.execute(plan, "check", [{"hp": 1, "level": 1}], backend="optimized")
    return laned, plain, plan


def _same(tag: Any, reference: Any, *others: Any) -> None:
    for other in others:
        diff = differences(observe(reference), observe(other))
        assert not diff, f"{tag!r:.300}:\n  " + "\n  ".join(diff)


def _agree(
    tag: Any, laned: SandboxHost, plain: SandboxHost, plan: ExecutionPlan, event: Any, **how: Any
) -> None:
    """The lane's answer to ``event`` is the reference's and the lanes-off path's (``how``: the
    run id or cancel token of each of the three runs)."""
    _same(
        (tag, event),
        laned.execute(plan, "check", [event], backend="reference", **how),
        laned.execute(plan, "check", [event], backend="optimized", **how),
        plain.execute(plan, "check", [event], backend="optimized", **how),
    )


def _token(mode: str) -> dict[str, Any]:
    if mode == "run id":
        return {"run_id": "review7-run"}
    token = CancelToken()
    if mode == "cancelled":
        token.cancel()
    return {"cancel": token} if mode != "none" else {}


EVENTS: list[Any] = [*HOSTILE[:10], {"k0": 1, "k1": 2, "k2": 3}, {"hp": 5, "level": 10, "k1": 1}]
LIMITS: list[dict[str, int]] = [{}, {"max_fuel": 15}, {"max_fuel": 40}]


@pytest.mark.parametrize("source", [EVENT, HAS, MANY], ids=["get", "containsKey", "70 reads"])
def test_run_ids_cancel_tokens_and_batches_agree_with_the_reference(source: str) -> None:
    for limits in LIMITS:
        laned, plain, plan = _hosts(source, limits)
        assert _lane(laned, plan, "check").projects
        for event in EVENTS:
            for mode in ("none", "run id", "token", "cancelled"):
                _agree((limits, mode), laned, plain, plan, event, **_token(mode))
        rows = [[event] for event in EVENTS] * 2  # failing rows between good ones, the pool reused
        for stop in (False, True):
            batches = [
                list(host.execute_many(plan, "check", rows, backend=name, stop_on_error=stop))
                for host, name in ((laned, "reference"), (laned, "optimized"), (plain, "optimized"))
            ]
            assert len({len(batch) for batch in batches}) == 1, [len(batch) for batch in batches]
            for at, results in enumerate(zip(*batches, strict=True)):
                _same((limits, "row", at, stop), *results)


# --- a reader whose kept key sets are full; an event changed between runs ------------------------


@pytest.mark.parametrize("full", ["by count", "by code points"])
def test_events_past_the_readers_kept_key_sets_and_a_changing_event_agree(full: str) -> None:
    """Ever-new key sets fill the reader's kept key sets by count (``KEY_SETS_KEPT`` short ones)
    or by code points (``KEPT_UNITS``: long ones, then shorter ones); events after that - new key sets, kept ones,
    hostile ones - and one dict changed between runs answer as the reference."""
    count = event_maps.KEY_SETS_KEPT + 10
    repeats = [8] * count if full == "by count" else [600] * 20 + [60] * 20 + [6] * 20 + [1] * 20
    for limits in ({}, {"max_fuel": 12}):
        laned, plain, plan = _hosts(HAS, limits)
        assert _lane(laned, plan, "check").projects

        for event in HOSTILE[:4]:
            _agree(("kept", limits), laned, plain, plan, event)
        for i, repeat in enumerate(repeats):  # the last fit within a few code points of the bound
            event = {"hp": 1, "level": 11, f"q{i:05d}" * repeat: i}
            if i % 25 == 0:
                _agree(("filling", limits), laned, plain, plan, event)
            else:
                laned.execute(plan, "check", [event], backend="optimized")
        for event in [*HOSTILE, {"hp": 2, "level": 10, "new": 1}, {"gone": 1, "hp": 0}]:
            _agree(("full", limits), laned, plain, plan, event)
        changing: dict[str, Any] = {"hp": 1, "level": 10}
        for step in range(18):
            _agree(("changing", limits), laned, plain, plan, changing)
            if step % 3 == 0:
                changing["hp"] = changing.get("hp", 1) * -3 + 1
            elif step % 3 == 1:
                changing[f"x{step}"] = step
            elif step % 2:
                changing.pop("level", None)
            else:
                changing["level"] = 2**31 - step
