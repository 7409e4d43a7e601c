"""Pre-checked owned-map chunks (issue 16, ``runtime.optimized.mapchunk``, spec/optimized.md 4.2.6).

A forRange chunk over an owned map also gets a copy of its checked body with no fuel or limit
test, run when ``_p_mcfit`` finds that the chunk's worst case (``core.costs.owned_map_chunk_fuel``
and ``owned_map_chunk_units``) fits. Here: the copy really runs (counted through a profile hook) and
agrees with the reference on every observable - at a value fault inside it (an overflow at an
exact iteration, a missing key), at every fuel budget around a failure, at every limit around its
refusal (which moves the chunk to the checked body), with ``break`` and ``continue``; the bounds are
checked against the per-operation charges of random operation sequences; and the verifier (rule
20) refuses every tampered part of the form.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.core import costs
from dotboxd.core.values import flat_map_shape
from dotboxd.host import SandboxHost
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.optimized import mapchunk_stubs

from .differential import assert_agree, assert_agree_at_every_fuel_budget, backend, observe, sweep_limit
from .kernels import policy, prepare
from .owned_harness import source_of
from .tampering import Tampering

COUNT = """module "mapcount" version "1.0.0";
entrypoint fn main(n I32, step I32) -> I32 {
    counts = map.empty[Map<I32, I32>]();
    for i in 0 .. n {
        k = i * 31 % 17;
        if map.containsKey(counts, k) { counts = map.set(counts, k, map.get(counts, k) + step); }
        else { counts = map.set(counts, k, 1); }
    }
    return map.get(counts, 3);
}"""
"""The benchmark's loop, with a step that makes the counts overflow at a chosen iteration."""

GROW = """module "mapgrow" version "1.0.0";
entrypoint fn main(n I32, wrap I32, stop I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    for i in 0 .. n {
        k = i % wrap;
        if k == 5 { continue; }
        if i == stop { break; }
        seen = map.set(seen, k, map.count(seen) + i % 1000);
    }
    return map.count(seen) * 1000 + map.get(seen, 0) % 1000;
}"""
"""A map that grows to ``wrap`` entries (unknown-key sets), with a ``continue`` and a ``break``."""

MISSING = """module "mapmiss" version "1.0.0";
entrypoint fn main(n I32, bad I32) -> I32 {
    m = map.empty[Map<I32, I32>]();
    total = 0;
    for i in 0 .. n {
        m = map.set(m, i % 50, i);
        if i == bad { total = total + map.get(m, 999); }
        else { total = (total + map.get(m, i % 50)) % 100000; }
    }
    return total;
}"""
"""A ``map.get`` of a key that is not there (R-MAP-KEY-MISSING) inside the pre-checked copy."""


@contextmanager
def fast_chunks() -> Iterator[list[bool]]:
    """Every answer ``_p_mcfit`` gives while the block runs (a profile hook on its function)."""
    answers: list[bool] = []
    code = mapchunk_stubs.chunk_fits.__code__

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code is code:
            answers.append(bool(arg))

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        yield answers
    finally:
        sys.setprofile(previous)


ROOMY = {
    "max_fuel": 10**12,
    "max_allocated_bytes": 10**12,
    "max_total_collection_elements": 10**11,
    "max_map_entries": 10**6,
    "max_loop_iterations": 10**7,
}
"""Limits under which the pre-checked copy's worst case fits: a chunk's bound grows with the square
of its iterations (every one could add a key), ~13M fuel for 2,048 iterations of ``COUNT``, past
the default policy's 100,000 (where chunks run checked, as ``test_a_policy_change...`` shows)."""


def _run_both(text: str, args: list[Any], **limits: int) -> tuple[dict[str, Any], dict[str, Any], list[bool]]:
    plan = prepare(text, policy(**{**ROOMY, **limits}))
    host = SandboxHost(backends={"optimized": backend()})
    reference = observe(host.execute(plan, "main", args))
    with fast_chunks() as answers:
        optimized = observe(host.execute(plan, "main", args, backend="optimized"))
    return reference, optimized, answers


def test_the_loop_has_a_pre_checked_copy_without_tests() -> None:
    """The copy charges a tally and tests neither the fuel nor a room; the checked chunk follows."""
    source = source_of(COUNT)
    fast = source[source.index("_p_mcfit(") : source.index("_s_mcover(")]
    assert "mc0 = mc0 + " in fast, fast
    for test in ("f >=", "f -=", "f < 0", "<= t0", "<= t1", "u0[0] = t1"):
        assert test not in fast.split("else:\n                f = f - mc0")[0], (test, fast)
    checked = source[source.index("_s_mcover(") :]
    assert "f >= " in checked and "_s_fx(" in checked, checked


@pytest.mark.parametrize("n", [1, 17, 2048, 2049, 5000])
def test_the_copy_runs_and_agrees(n: int) -> None:
    reference, optimized, answers = _run_both(COUNT, [n, 1])
    assert reference == optimized
    assert True in answers, answers  # the pre-checked copy ran


@pytest.mark.parametrize("at", [0, 1, 16, 17, 500, 2047, 2048, 2049, 3000])
def test_an_overflow_at_an_exact_iteration_inside_the_copy(at: int) -> None:
    """Key 0 is counted at iterations 0, 17, 34...: a step that overflows at its ``at // 17``-th
    recount faults there, in the copy, with the reference's fuel and usage."""
    recounts = at // 17
    step = 2**31 - 1 if recounts <= 1 else (2**31 - 1) // recounts + 1
    n = at + 40
    reference, optimized, answers = _run_both(COUNT, [n, step])
    assert reference["error"] is not None and reference["error"][1] == "R-ARITH-OVERFLOW", reference
    assert reference == optimized
    assert True in answers


def test_an_overflow_at_every_fuel_budget_around_it() -> None:
    """Below what the fault needs the chunk falls back to the checked body, which stops at the
    reference's charge; from there on the copy runs into the fault."""
    plan = prepare(COUNT)
    assert_agree_at_every_fuel_budget(plan, "main", [300, (2**31 - 1) // 10 + 1], below=120)


def test_exhaustion_at_every_fuel_budget_of_a_full_run() -> None:
    assert_agree_at_every_fuel_budget(prepare(COUNT), "main", [2100, 1], below=200)
    assert_agree_at_every_fuel_budget(prepare(GROW), "main", [2100, 300, 5000], below=200)


def test_exhaustion_after_pre_checked_chunks() -> None:
    """A budget where the first chunks fit their worst case (~12.9M fuel each at 17 keys) and the
    later ones do not: the copy runs, then the checked body exhausts at the reference's charge."""
    host = SandboxHost(backends={"optimized": backend()})
    for fuel in (13_500_000, 13_500_001, 13_500_083):
        plan = prepare(COUNT, policy(**{**ROOMY, "max_fuel": fuel}))
        reference = observe(host.execute(plan, "main", [200_000, 1]))
        with fast_chunks() as answers:
            optimized = observe(host.execute(plan, "main", [200_000, 1], backend="optimized"))
        assert reference["error"] is not None and reference["error"][1] == "R-QUOTA-FUEL", reference
        assert reference == optimized, fuel
        assert answers[0] and not answers[-1], answers


def test_a_missing_key_inside_the_copy() -> None:
    for bad in (0, 1, 49, 50, 2047, 2048, 2500):
        reference, optimized, answers = _run_both(MISSING, [3000, bad])
        assert reference["error"] is not None and reference["error"][1] == "R-MAP-KEY-MISSING", reference
        assert reference == optimized, bad
        assert True in answers or bad == 0


@pytest.mark.parametrize("stop", [0, 5, 6, 2047, 2048, 4000, 9000])
def test_break_and_continue_leave_the_copy_exactly(stop: int) -> None:
    reference, optimized, answers = _run_both(GROW, [6000, 300, stop])
    assert reference == optimized, stop
    assert stop < 6 or True in answers


def test_every_limit_around_its_refusal() -> None:
    """A limit reached mid-loop: the chunks before run pre-checked, the one that would cross it runs
    checked and fails at the reference's update."""
    args = [5000, 3000, 9000]
    usage = SandboxHost().execute(prepare(GROW, policy(**ROOMY)), "main", args).usage.to_json()
    sweep_limit(prepare(GROW), args, "max_map_entries", [*range(2990, 3001), 2000, 2500, 100, 0], **ROOMY)
    for limit, field in (
        ("max_total_collection_elements", "collectionElements"),
        ("max_allocated_bytes", "allocatedBytes"),
    ):
        needed = usage[field]
        values = [*range(0, needed, max(1, needed // 30)), *range(needed - 20, needed + 2)]
        sweep_limit(prepare(GROW), args, limit, values, **ROOMY)
    sweep_limit(prepare(GROW), args, "max_collection_depth", range(0, 3), **ROOMY)
    iterations = [*range(0, 40), 2047, 2048, 2049, 3999, 4000]
    sweep_limit(prepare(COUNT), [4000, 1], "max_loop_iterations", iterations, **ROOMY)


def test_a_limit_inside_a_late_chunk_after_pre_checked_ones() -> None:
    args = [6000, 5000, 9000]
    usage = SandboxHost().execute(prepare(GROW, policy(**ROOMY)), "main", args).usage.to_json()
    needed = usage["collectionElements"]
    limit = needed - 1
    reference, optimized, answers = _run_both(GROW, args, max_total_collection_elements=limit)
    assert reference["error"] is not None, reference
    assert reference == optimized
    assert True in answers and False in answers, answers  # early chunks pre-checked, the last one not


def test_both_backends_agree_on_random_runs() -> None:
    plan = prepare(GROW)
    host = SandboxHost(backends={"optimized": backend()})
    pairs = []
    for n, wrap, stop in ((0, 1, 0), (1, 1, 9), (3000, 7, 2999), (2500, 2600, 2400), (4100, 4000, 9999)):
        pairs.append(
            (
                observe(host.execute(plan, "main", [n, wrap, stop])),
                observe(host.execute(plan, "main", [n, wrap, stop], backend="optimized")),
            )
        )
    assert_agree(pairs, "grow")


# --- the bounds -----------------------------------------------------------------------------------

_OPS = st.lists(
    st.lists(st.sampled_from(["read", "set_new", "set_old"]), max_size=6), min_size=1, max_size=40
)


@settings(max_examples=200, deadline=None)
@given(_OPS, st.integers(0, 5000))
def test_the_chunk_bounds_cover_the_per_operation_charges(body: list[list[str]], size: int) -> None:
    """Any sequence of iterations, each a sequence of reads and sets, charges at most
    ``owned_map_chunk_fuel`` and counts at most ``owned_map_chunk_units``, with the worst iteration's
    per-size, fixed and walk counts and its number of sets."""
    per_size = max(len(ops) for ops in body)
    fixed = max(sum(costs.COLLECTION_BASE_FUEL + (op != "read") for op in ops) for ops in body)
    walks = max(sum(op != "read" for op in ops) for ops in body)
    sets = walks
    s, fuel, units = size, 0, 0
    for ops in body:
        for op in ops:
            if op == "read":
                fuel += costs.read_fuel(s)
                continue
            c = s + 1 if op == "set_new" else max(s, 1)
            fuel += costs.copy_fuel(s, 1) + costs.shape_walk_fuel(flat_map_shape(c).nodes)
            units += c
            s = c
    assert fuel <= costs.owned_map_chunk_fuel(len(body), size, per_size, fixed, walks, sets)
    assert units <= costs.owned_map_chunk_units(len(body), size, sets)


def test_the_fuel_bound_is_the_per_operation_sum_when_every_set_adds() -> None:
    """One new key per iteration and the size at its largest: the bound is reached (it is tight)."""
    n, size = 64, 0
    top = size + n
    exact = n * (
        costs.read_fuel(top) + costs.copy_fuel(top, 1) + costs.shape_walk_fuel(flat_map_shape(top).nodes)
    )
    assert costs.owned_map_chunk_fuel(n, size, 2, 2 * costs.COLLECTION_BASE_FUEL + 1, 1, 1) == exact


def test_the_guard_refuses_what_does_not_fit() -> None:
    fits = mapchunk_stubs.chunk_fits
    need = costs.owned_map_chunk_fuel(10, 5, 3, 31, 1, 1)
    assert fits(need, 10, 5, 0, 10**9, 10**6, 3, 31, 1, 1)
    assert not fits(need - 1, 10, 5, 0, 10**9, 10**6, 3, 31, 1, 1)
    assert not fits(10**9, 0, 5, 0, 10**9, 10**6, 3, 31, 1, 1)  # nothing reserved: never fast
    assert fits(10**9, 10, 5, 0, 10**9, 15, 3, 31, 1, 1) and not fits(10**9, 10, 5, 0, 10**9, 14, 3, 31, 1, 1)
    units = costs.owned_map_chunk_units(10, 5, 1)
    assert fits(10**9, 10, 5, 7, units + 7, 10**6, 3, 31, 1, 1)
    assert not fits(10**9, 10, 5, 8, units + 7, 10**6, 3, 31, 1, 1)
    assert not fits(10**9, 10, 5, 0, 10**9, -1, 3, 31, 1, 1)  # maxCollectionDepth 0: never fast


def test_the_exits_fail_closed() -> None:
    with pytest.raises(SandboxError) as raised:
        mapchunk_stubs.overshot(None)
    assert raised.value.code == "R-HOST-INTERNAL"


def test_a_policy_change_does_not_change_the_copy() -> None:
    """The bound is data of the chunk, the rooms are read at run time: the same artifact serves
    every policy (a tight one just runs the checked body)."""
    plan = prepare(COUNT)
    tight = dataclasses.replace(plan, policy=policy(max_fuel=5000))
    assert source_of(COUNT) == source_of(COUNT)
    host = SandboxHost(backends={"optimized": backend()})
    with fast_chunks() as answers:
        optimized = observe(host.execute(tight, "main", [3000, 1], backend="optimized"))
    assert optimized == observe(host.execute(tight, "main", [3000, 1]))
    assert answers and not any(answers)


# --- rule 20: tampered forms ----------------------------------------------------------------------

_TAMPERING = Tampering(COUNT)
_GUARD = "_p_mcfit(f, n0, t2, t3, t0, t1, 3, 31, 1, 1)"
_PAY = "if f < 0 or t3 > t0 or t2 > t1:"
TAMPERED = {
    "fixed fuel understated": (_GUARD, _GUARD.replace("31, 1, 1", "30, 1, 1")),
    "per-size fuel understated": (_GUARD, _GUARD.replace("3, 31", "2, 31")),
    "walk terms understated": (_GUARD, _GUARD.replace("31, 1, 1", "31, 0, 1")),
    "sets understated": (_GUARD, _GUARD.replace("31, 1, 1", "31, 1, 0")),
    "a negative bound": (_GUARD, _GUARD.replace("3, 31", "-3, 31")),
    "guard on other slots": (_GUARD, _GUARD.replace("t2, t3, t0, t1", "t3, t2, t0, t1")),
    "guard on another fuel": (_GUARD, _GUARD.replace("(f, n0", "(f + 1000, n0")),
    "guard on another count": (_GUARD, _GUARD.replace("n0, t2", "k0, t2")),
    "guard elsewhere": ("v4 = t4 % 17", "v4 = _p_mcfit(f, n0, t2, t3, t0, t1, 3, 31, 1, 1)"),
    "tally decreased": ("mc0 = mc0 + (t2 * 3", "mc0 = mc0 - (t2 * 3"),
    "tally reset": ("mc0 = mc0 + (t2 * 3 + 31 + t2 // 32)", "mc0 = 0"),
    "tally starts high": ("mc0 = 0", "mc0 = 1"),
    "tally from another name": ("mc0 = mc0 + (t2 * 3", "mc0 = t3 + (t2 * 3"),
    "a charge on a non-size slot": ("mc0 = mc0 + (t2 * 3", "mc0 = mc0 + (t3 * 3"),
    "a walk on a non-count": ("t2 * 2 + 25 + t18 // 32", "t2 * 2 + 25 + t4 // 32"),
    "a fault stub without the exact fuel": ("f - (mc0 + 10)", "f"),
    "a fault stub without the tally": ("f - (mc0 + 10)", "f - 10"),
    "pay without the overshoot test": (_PAY + "\n                    _s_mcover(R)", "pass"),
    "overshoot test on the wrong room": (_PAY, _PAY.replace("t3 > t0", "t3 > t1")),
    "overshoot test on the fuel loosened": (_PAY, _PAY.replace("f < 0", "f < -5")),
    "pay skipped": ("f = f - mc0", "f = f - 0"),
    "fast loop runs more": ("for v3 in _range(k0, k0 + n0):", "for v3 in _range(k0, k0 + n0 + 1):"),
    "fast loop counts in another name": (
        "for v3 in _range(k0, k0 + n0):\n                t4",
        "for v9 in _range(k0, k0 + n0):\n                t4",
    ),
    "size stored a non-count": (
        "                    t2 = t18\n            else",
        "                    t2 = v3\n            else",
    ),
    "units grow by another slot": ("t3 = t3 + t18", "t3 = t3 + v3"),
    "room stored in the body": ("m0[v4] = 1", "t0 = 99999999999"),
    "a syncing stub in the body": (
        "t5 = v4 in m0",
        "t5, f = _s_i_map_containsKey(R, f, lr + (n0 - (v3 - k0) - 1), 5, v2, v4)",
    ),
    "a tuple store of the tally": ("mc0 = mc0 + (t2 * 3 + 31 + t2 // 32)", "mc0, t3 = (0, t3)"),
    "overshoot stub elsewhere": ("v4 = t4 % 17", "v4 = _s_mcover(R)"),
    "guard with no checked chunk after it": (
        "            break\n        for v3",
        "            break\n        while False:\n            pass\n        for v3",
    ),
}


def test_the_untampered_module_passes() -> None:
    _TAMPERING.bind()


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_a_tampered_pre_checked_chunk_is_rejected(name: str) -> None:
    rewrite, replacement = TAMPERED[name]
    _TAMPERING.assert_rejected(rewrite, replacement)


SHAPES = {
    "two updates and a count": """
        m = map.set(m, i % 37, map.count(m));
        m = map.set(m, i % 11 + 100, i % 1000);""",
    "an arm with no map work": """
        if i % 3 == 0 { x = x + 1; }
        if map.containsKey(m, i % 9) { x = x + map.get(m, i % 9) % 7; } else { m = map.set(m, i % 9, i % 100); }""",
    "a count in a condition": """
        if map.count(m) > 5 { m = map.set(m, i % 50, 1); } else { m = map.set(m, i % 6, 2); }""",
    "nested branches": """
        k = i % 23;
        if k > 10 {
            if map.containsKey(m, k) { m = map.set(m, k, map.get(m, k) + 1); }
            else { if k > 20 { continue; } m = map.set(m, k, 0); }
        } else { x = (x + k) % 1000; }""",
    "an assignment that keeps the value": """
        if i > x { x = x; }
        m = map.set(m, i % 13, x % 100);""",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_other_body_shapes_get_a_copy_and_agree(name: str) -> None:
    text = f"""module "shapes" version "1.0.0";
entrypoint fn main(n I32) -> I32 {{
    m = map.empty[Map<I32, I32>]();
    x = 0;
    for i in 0 .. n {{{SHAPES[name]}
    }}
    return map.count(m) * 1000 + x % 1000;
}}"""
    assert "_p_mcfit(" in source_of(text), source_of(text)
    for n in (0, 1, 30, 2049, 4500):
        reference, optimized, answers = _run_both(text, [n])
        assert reference == optimized, (name, n)
        assert n == 0 or True in answers
    assert_agree_at_every_fuel_budget(prepare(text), "main", [60], below=80)
