"""Iteration blocks (issue 16, spec/optimized.md 4.2.8): exact at every budget, and their verifier
rule (24) refuses tampered forms.

A block loop's iterations and its inner chunks draw from one pool of iterations reserved in the
meter; what a failed run reports depends on every way out giving the unstarted rest back. So the
Collatz walk and its relatives run on both backends at *every* fuel and loop budget up to what they
need (which puts the failure at each charge of the outer loop, of the inner loop, and at the refill
of a pool), with counters started at every distance from their limit (the overflow in the chunk,
cut by its room, then on the exact path), faults in the outer body at every iteration, a pool
boundary crossed (more than 2,048 iterations), a third loop around the block, and a clock and a
cancel token turning at every read. Then one spot at a time of a real generated module is rewritten
into each shape the rule must refuse.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.meter import Meter, MeterLimits
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.block_stubs import POOL
from dotboxd.runtime.optimized.codegen import GenOptions
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.runtime.optimized.stubs import STUBS, RunState
from dotboxd.validator.plan import ExecutionPlan
from tests.benchmarks.workloads import COLLATZ

from .cadence_fuzz import STOPS, faked
from .differential import backend, differences, observe
from .kernels import policy, prepare
from .tampering import Tampering

BLOCKS = GenOptions(block_loops=True)
NO_BLOCKS = GenOptions(block_loops=False)

FAULTY = """module "faulty" version "1.0.0";
entrypoint fn main(n I32, d I32, start I32) -> I32 {
    total = start;
    q = 1;
    for s in 1 .. n {
        q = q + 100 / (s - d);
        x = s;
        while x > 1 {
            if x == d + 40 { break; }
            if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }
            total = total + 1;
        }
        if s == d + 30 { break; }
    }
    return total + q % 7;
}"""
"""A fault in the outer body (``s == d``), a break of the inner and of the outer loop, and an I32
counter whose start puts its overflow anywhere (the chunk's room, then the exact path's check)."""

NESTED = """module "nested" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
    total = 0;
    for r in 0 .. m {
        for s in 1 .. n {
            x = s + r;
            while x > 1 {
                if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }
                total = total + 1;
            }
            x = s;
            while x > 1 { x = x / 2; total = total - 1; }
        }
    }
    return total;
}"""
"""Three loops deep, the middle one a block with two pool loops."""

I32_MAX = 2**31 - 1


def _host() -> SandboxHost:
    return SandboxHost(backends={"optimized": backend(BLOCKS)})


def _agree(host: SandboxHost, plan: ExecutionPlan, args: list[int]) -> dict[str, Any]:
    reference = observe(host.execute(plan, "main", list(args)))
    optimized = observe(host.execute(plan, "main", list(args), backend="optimized"))
    diff = differences(reference, optimized)
    assert not diff, f"{plan.policy} {args}:\n  " + "\n  ".join(diff)
    return reference


def _sweep(text: str, args: list[int], limit: str, counter: str, step: int = 1) -> set[str]:
    """Every budget of ``limit`` (every ``step``-th) from 0 to one past what the run needs."""
    base = prepare(text, policy(max_loop_iterations=10**6, max_fuel=10**9))
    assert "_s_bkit(" in compile_plan(base, BLOCKS, keep_module=True).source(), "not a block loop"
    host = _host()
    needed = _agree(host, base, args)["usage"][counter]
    codes = set()
    for budget in sorted({*range(0, needed + 2, step), needed - 1, needed, needed + 1}):
        limits = {"max_loop_iterations": 10**6, "max_fuel": 10**9, limit: max(0, budget)}
        seen = _agree(host, dataclasses.replace(base, policy=policy(**limits)), args)
        codes.add(seen["error"][1] if seen["error"] else "ok")
    return codes


@pytest.mark.parametrize("args", [[12], [3], [1]])
def test_collatz_at_every_fuel_budget(args: list[int]) -> None:
    codes = _sweep(COLLATZ, args, "max_fuel", "fuelUsed")
    assert codes == ({"ok", "R-QUOTA-FUEL"} if args != [1] else codes)


@pytest.mark.parametrize("args", [[12], [2]])
def test_collatz_at_every_loop_budget(args: list[int]) -> None:
    assert _sweep(COLLATZ, args, "max_loop_iterations", "loopIterations") == {"ok", "R-QUOTA-LOOP"}


def test_a_pool_boundary_at_every_loop_budget_around_it() -> None:
    """More iterations than one pool holds: budgets end in the first pool, at its last iteration,
    in the refill and in the second pool, and the fuel runs out around the same place."""
    base = prepare(COLLATZ, policy(max_loop_iterations=10**6, max_fuel=10**9))
    host = _host()
    whole = _agree(host, base, [150])["usage"]
    assert whole["loopIterations"] > 2 * POOL
    for loops in [*range(POOL - 12, POOL + 12), *range(2 * POOL - 5, 2 * POOL + 5)]:
        _agree(
            host, dataclasses.replace(base, policy=policy(max_loop_iterations=loops, max_fuel=10**9)), [150]
        )
    per = whole["fuelUsed"] // whole["loopIterations"]
    for fuel in range(POOL * per - 400, POOL * per + 400, 3):
        _agree(
            host, dataclasses.replace(base, policy=policy(max_loop_iterations=10**6, max_fuel=fuel)), [150]
        )


def test_counters_overflow_at_every_distance_from_their_limit() -> None:
    base = prepare(FAULTY, policy(max_loop_iterations=10**6, max_fuel=10**9))
    host = _host()
    steps = _agree(host, base, [20, -99, 0])["value"]
    codes = set()
    for distance in range(0, steps + 3):
        seen = _agree(host, base, [20, -99, I32_MAX - distance])
        codes.add(seen["error"][1] if seen["error"] else "ok")
    assert codes == {"ok", "R-ARITH-OVERFLOW"}


@pytest.mark.parametrize("d", range(-1, 25))
def test_outer_faults_and_breaks_at_every_iteration(d: int) -> None:
    host = _host()
    base = prepare(FAULTY, policy(max_loop_iterations=10**6, max_fuel=10**9))
    seen = _agree(host, base, [22, d, 0])
    assert (seen["error"] is not None) == (1 <= d < 22)


@pytest.mark.parametrize("limit", [("max_fuel", "fuelUsed", 1), ("max_loop_iterations", "loopIterations", 1)])
def test_a_fault_after_some_pools_at_every_budget(limit: tuple[str, str, int]) -> None:
    _sweep(FAULTY, [19, 15, I32_MAX - 90], *limit)


@pytest.mark.parametrize(
    ("limit", "counter"), [("max_fuel", "fuelUsed"), ("max_loop_iterations", "loopIterations")]
)
def test_three_deep_at_every_budget(limit: str, counter: str) -> None:
    _sweep(NESTED, [7, 3], limit, counter)


@pytest.mark.parametrize("kind", sorted(STOPS))
@pytest.mark.parametrize("text,args", [(COLLATZ, [400]), (NESTED, [40, 6]), (FAULTY, [400, 330, 0])])
def test_deadline_and_cancellation_at_every_read(kind: str, text: str, args: list[int]) -> None:
    """A fake clock or cancel token turning at each read of the optimized run: the run stops with
    that code (or ends as the whole run when the turn falls past its last read), never with more
    usage than the whole run's."""
    plan = prepare(text, policy(max_loop_iterations=10**6, max_fuel=10**9))
    host = _host()
    whole = observe(host.execute(plan, "main", list(args)))
    host.execute(plan, "main", list(args), backend="optimized")
    with faked(kind, 0) as counting:
        assert observe(host.execute(plan, "main", list(args), backend="optimized")) == whole
    reads = counting.reads
    assert reads >= 1
    for at in range(1, reads + 2):
        with faked(kind, at):
            seen = observe(host.execute(plan, "main", list(args), backend="optimized"))
        if at > reads:
            assert seen == whole
            continue
        assert seen["error"] is not None and seen["error"][1] == STOPS[kind], (at, seen["error"])
        over = {k: v for k, v in seen["usage"].items() if isinstance(v, int) and v > whole["usage"][k]}
        assert not over, (at, over)


# --- the stubs ---------------------------------------------------------------------------------


def _state(max_loops: int = 10**6) -> RunState:
    meter = Meter(MeterLimits(max_fuel=10**6, max_loop_iterations=max_loops, max_wall_time_ms=60_000))
    from types import SimpleNamespace

    return RunState(SimpleNamespace(meter=meter), (), (), (), ())  # type: ignore[arg-type]


def test_a_refill_gives_the_pool_back_before_it_charges() -> None:
    state = _state(max_loops=10)
    f, pool = STUBS["_s_bkit"](state, 1000, 0, 0, 30)
    assert (f, pool, state.meter.loop_iterations) == (995, 9, 10)  # the iteration, then the rest
    assert state.work == 9 * 30
    f, pool = STUBS["_s_bkit"](state, f, 0, 4, 30)  # 4 left unstarted: back, then one charged
    assert (f, pool, state.meter.loop_iterations) == (990, 3, 10)  # what the budget leaves
    STUBS["_s_bkend"](state, pool, 30)
    # what ran; the work of the 5 drawn from pools (the 2 the stub charged tick the meter's cadence)
    assert (state.meter.loop_iterations, state.work) == (7, 5 * 30)


def test_an_inner_draw_the_pool_cannot_pay_returns_everything_when_it_draws_nothing() -> None:
    state = _state()
    assert STUBS["_s_bkcap"](state, 1000, 0, 7, 24, 30, 0) == (0, 0)  # no room: the exact path
    assert state.meter.loop_iterations == -7  # the 7 it was given back (as if reserved before)
    state = _state()
    assert STUBS["_s_bkcap"](state, 23, 0, 0, 24, 30) == (0, 0)  # the fuel of no iteration
    assert (state.meter.loop_iterations, state.work) == (0, 0)
    state = _state()
    assert STUBS["_s_bkcap"](state, 24 * 5, 0, 0, 24, 30, 3) == (3, POOL)
    assert state.meter.loop_iterations == POOL


# --- rule 24: tampered forms ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def collatz() -> Tampering:
    return Tampering(COLLATZ, BLOCKS)


def test_the_generated_block_passes(collatz: Tampering) -> None:
    collatz.bind()


@pytest.mark.parametrize(
    ("rewrite", "replacement", "match"),
    [
        ("bk0 = bk0 - 1\n", "bk0 = bk0 - 0\n", "takes one from the pool"),
        ("f = f - 5\n", "f = f - 4\n", "takes one from the pool"),
        ("if bk0 > 0 and f >= 5:", "if bk0 > -1 and f >= 5:", "starts with its iteration's draw"),
        ("_s_bkit(R, f, lr, bk0, 28)", "_s_bkit(R, f, lr, bk0, 27)", "work units"),
        ("_s_bkend(R, bk0, 28)", "_s_bkend(R, bk0, 280)", "work units"),
        ("_s_bkend(R, bk0, 28)", "_s_fx(R, f, lr, 1)", "followed by _s_bkend"),
        ("    _s_bkend(R, bk0, 28)\n", "", "followed by"),
        ("_s_fx(R, f, lr + bk0, 2)", "_s_fx(R, f, lr, 2)", "lr plus the pool"),
        ("_s_fx(R, f, lr + bk0, 2)", "_s_fx(R, f, lr + bk0 + 1, 2)", "lr plus the pool"),
        ("_x0(R, f, d, lr + bk0, v3, v1)", "_x0(R, f, d, lr, v3, v1)", "lr plus the pool"),
        ("lr + bk0, 3, 3, v3)", "lr + bk0 + 1, 3, 3, v3)", "pool"),
        ("_s_bk2(R, f - 2 * t3, j0, lr + bk0, 3,", "_s_c2(R, f - 2 * t3, j0, 3,", "_s_c2 in a pool loop"),
        ("_s_bk2(R, f - 2 * t3, j0, lr + bk0, 3,", "_s_bk2(R, f - 2 * t3, v1, lr + bk0, 3,", "iteration"),
        ("bk0 = bk0 - j0\n", "bk0 = bk0 - j0 + 1\n", "taking what it started"),
        ("                    bk0 = bk0 - j0\n", "", "taking what it started"),
        ("bk0 = bk0 - j0\n", "_s_lback(R, n0 - j0)\n", "in a pool loop's chunk"),
        ("bk0 = bk0 - n0\n", "t3 = 0\n", "bk = bk - n"),
        ("            if bk0 < n0:\n                n0 = bk0\n", "", "cut to the pool"),
        ("n0 * 24", "n0 * 23", "worst-case fuel"),
        ("f // 24", "f // 12", "worst-case fuel"),
        ("_s_bkcap(R, f, lr, bk0, 24,", "_s_bkcap(R, f, lr, bk0, 12,", "worst fuel"),
        ("2147483647 - v1)\n", "2147483646 - v1)\n", "room"),
        ("            n0 = 2147483647 - v1\n", "            n0 = 2147483647 - v1 + 5\n", "room"),
        ("v3 = v2\n", "v3 = bk0\n", "pool is read only"),
        ("t3 = 0\n        while", "bk0 = 5\n        while", "pool is stored only"),
        ("v1 = v1 + 1\n", "v1 = v1 + 1\n                j0 = 0\n", "assigns 'j0'"),
        ("v1 = v1 + 1\n", "v1 = v1 + 1\n                n0 = 9\n", "assigns 'n0'"),
        ("v3 = v2\n", "v3 = v2\n        return (v1, f)\n", "left only at its end"),
        ("f -= 3\n", "f = _s_liter(R, f, lr + bk0)\n        f -= 3\n", "_s_liter in a block body"),
    ],
)
def test_a_tampered_block_is_refused(collatz: Tampering, rewrite: str, replacement: str, match: str) -> None:
    collatz.assert_rejected(rewrite, replacement, match)


def test_a_block_needs_the_options_that_ask_for_it() -> None:
    """A block module under a key without blocks, and a key with blocks whose module has none."""
    with_blocks = Tampering(COLLATZ, BLOCKS)
    without = Tampering(COLLATZ, NO_BLOCKS)
    mixed = Tampering(COLLATZ, NO_BLOCKS)
    mixed.generated = with_blocks.generated
    with pytest.raises(VerifierFailure, match="no block loop for"):
        mixed.bind()
    mixed = Tampering(COLLATZ, BLOCKS)
    mixed.generated = without.generated
    with pytest.raises(VerifierFailure, match="not generated as a block"):
        mixed.bind()


def test_blocks_are_on_by_default_and_off_keeps_the_stubs() -> None:
    plan = prepare(COLLATZ)
    assert "_s_bkit(" in compile_plan(plan, keep_module=True).source()
    assert "blocks=1" in GenOptions().key()
    source = compile_plan(plan, NO_BLOCKS, keep_module=True).source()
    assert "_s_bkit(" not in source and "_s_capm(" in source
