"""Fast list chunks (``runtime.optimized.list_chunks``, verifier rule 22): a checked forRange chunk
whose size-dependent charges are owned adds and list-read views runs with its fuel paid once per
chunk, when the whole chunk fits; otherwise the checked chunk runs.

Here every observable (value, error and its location, fuel, usage) is compared with the reference:
with overflows at exact iterations inside fast chunks (so the fault sites' recomputed fuel is
checked), under every fuel budget around each failure and around the point where a chunk stops
fitting, and with the list's limits and the loop budget hit part way through a chunk. The verifier
refuses tampered fast chunks.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterable

import pytest

from dotboxd.host import SandboxHost
from dotboxd.validator.plan import ExecutionPlan

from .differential import assert_agree, backend, differences, observe, run_plan_both, sweep_limit
from .kernels import policy, prepare
from .owned_harness import CHUNK_ROOM, source_of
from .tampering import Tampering

CHUNKS = """module "chunks" version "1.0.0";
entrypoint fn main(n I32, m I32, w I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i * m % 100); }
    total = 0;
    for i in 0 .. list.count(xs) { total = total + list.get(xs, i) * w; }
    return total;
}"""

FAST = re.compile(r"if n[0-9]+ and f >= c[0-9]+ and")

_ROOMY = {**CHUNK_ROOM, "max_list_length": 10**7}


def test_both_loops_run_fast_chunks() -> None:
    """The build and the sum loop both take the fast form (else the tests below prove nothing new)."""
    source = source_of(CHUNKS)
    assert len(FAST.findall(source)) == 2, source
    assert source.count("_p_lcadds(") >= 2, source


@pytest.mark.parametrize(
    "args",
    [
        [0, 1, 1],
        [1, 1, 1],
        [62, 3, 1],
        [63, 3, 1],
        [64, 3, 1],
        [2047, 7, 1],
        [2048, 7, 1],
        [2049, 7, 1],
        [5000, 7, -3],
    ],
)
def test_fast_chunks_agree_with_the_reference(args: list[int]) -> None:
    assert_agree(run_plan_both(prepare(CHUNKS), "main", [args]), "fast list chunks")


# ``i * m`` overflows at i = 2148 (in the second chunk of the build loop); ``total`` overflows at
# item 2169 of the sum loop (its second chunk); the largest ``m`` overflows at i = 2 (first chunk)
OVERFLOWS = [[3000, 1_000_000, 1], [3000, 1, 20_000], [100, 2**31 - 1, 1], [100, -(2**30), 1]]


@pytest.mark.parametrize("args", OVERFLOWS)
def test_an_overflow_inside_a_fast_chunk_fails_at_the_same_iteration_with_the_same_usage(
    args: list[int],
) -> None:
    pairs = run_plan_both(prepare(CHUNKS), "main", [args])
    assert_agree(pairs, "overflow in a fast chunk")
    assert pairs[0][0]["error"] is not None


def _roomy(**limits: int) -> ExecutionPlan:
    return dataclasses.replace(prepare(CHUNKS), policy=policy(**{**_ROOMY, **limits}))


def _needed(args: list[int], field: str = "fuelUsed") -> int:
    """What a run under limits it never reaches uses (up to its fault, for an overflowing one)."""
    host = SandboxHost(backends={"optimized": backend()})
    used: int = host.execute(_roomy(), "main", args).usage.to_json()[field]
    return used


def _errors_at_budgets(args: list[int], budgets: Iterable[int]) -> set[str | None]:
    """Run at each fuel budget on both backends; every observable must agree. The error codes seen."""
    host = SandboxHost(backends={"optimized": backend()})
    seen: set[str | None] = set()
    for fuel in budgets:
        plan = _roomy(max_fuel=fuel)
        reference = observe(host.execute(plan, "main", list(args)))
        optimized = observe(host.execute(plan, "main", list(args), backend="optimized"))
        assert reference == optimized, (fuel, differences(reference, optimized))
        seen.add(reference["error"][1] if reference["error"] is not None else None)
    return seen


def test_every_fuel_budget_of_a_one_chunk_run_agrees() -> None:
    """Every budget from nothing to enough: each loop's only chunk is fast exactly from the budget
    that covers it, so the sweep crosses both switch points and every checked refusal before them."""
    needed = _needed([20, 3, 1])
    assert _errors_at_budgets([20, 3, 1], range(0, needed + 2)) == {"R-QUOTA-FUEL", None}


@pytest.mark.parametrize(
    ("args", "outcome"),
    [
        ([2100, 3, 1], None),
        ([3000, 1_000_000, 1], "R-ARITH-OVERFLOW"),
        ([3000, 1, 20_000], "R-ARITH-OVERFLOW"),
    ],
)
def test_fuel_budgets_around_each_failure_of_a_two_chunk_run_agree(
    args: list[int], outcome: str | None
) -> None:
    """Budgets around the end of the run (or around the overflow, whose fuel a fast chunk's fault
    site recomputes), and a stride over the whole run, which crosses the points where a later
    chunk stops fitting and runs checked: the run ends the same way (fuel exhausted below, the
    overflow or the value above) with the same usage."""
    needed = _needed(args)
    budgets = [*range(needed - 80, needed + 2), *range(0, needed, max(1, needed // 60))]
    seen = _errors_at_budgets(args, sorted(set(budgets)))
    assert seen == {"R-QUOTA-FUEL", outcome}, seen


def test_the_list_length_limit_mid_chunk_agrees() -> None:
    """The room test sends a chunk that would pass the length limit to the checked form, which
    refuses the exact add."""
    sweep_limit(prepare(CHUNKS), [2300, 3, 1], "max_list_length", range(2030, 2320, 7), **_ROOMY)


def test_the_allocation_and_element_limits_mid_chunk_agree() -> None:
    allocated = _needed([2300, 3, 1], "allocatedBytes")
    sweep_limit(
        prepare(CHUNKS),
        [2300, 3, 1],
        "max_allocated_bytes",
        [*range(allocated - 9_000_000, allocated, 99_991), allocated],
        **_ROOMY,
    )
    elements = _needed([2300, 3, 1], "collectionElements")
    sweep_limit(
        prepare(CHUNKS),
        [2300, 3, 1],
        "max_total_collection_elements",
        [*range(elements - 600_000, elements, 6_007), elements],
        **_ROOMY,
    )


def test_the_loop_budget_mid_chunk_agrees() -> None:
    """A loop budget that cuts a reservation short: the fast form runs the shorter chunk only."""
    sweep_limit(prepare(CHUNKS), [2300, 3, 1], "max_loop_iterations", range(1000, 4700, 113), **_ROOMY)


# --- the verifier: rule 22 (``verify_list_chunks``) --------------------------------------------

_GENERATED = Tampering(CHUNKS)

_PUSH = "                _p_push(b0, t3)\n            f = f - c1"
_READ = "                t11 = g0[v4]\n                t12 = t11 * v2"

CHUNK_TAMPERINGS = {
    "count test dropped": ("if n0 and f >= c1", "if f >= c1"),
    "fuel test dropped": ("if n0 and f >= c1 and (c1 >= n0 * 5)", "if n0 and (c1 >= n0 * 5)"),
    "fuel tested against another slot": ("if n0 and f >= c1", "if n0 and f >= c0"),
    "floor dropped": ("if n0 and f >= c1 and (c1 >= n0 * 5) and", "if n0 and f >= c1 and"),
    "floor below an iteration": ("(c1 >= n0 * 5)", "(c1 >= n0 * 4)"),
    "room test dropped": (" and (c0 + n0 <= t0)", ""),
    "room of another slot": ("(c0 + n0 <= t0)", "(c0 + n0 <= v0)"),
    "room from another length": ("(c0 + n0 <= t0)", "(c1 + n0 <= t0)"),
    "length not measured": ("c0 = _p_len(b0)", "c0 = 0"),
    "pays less after the loop": ("f = f - c1", "f = f - 1"),
    "pays nothing after the loop": ("f = f - c1\n            k0 = k0 + n0", "k0 = k0 + n0"),
    "moves on by more": ("f = f - c1\n            k0 = k0 + n0", "f = f - c1\n            k0 = k0 + n0 + 1"),
    "an else on the fast chunk": (
        "            continue\n        for v4 in _range(k0, k0 + n0):",
        "            continue\n        else:\n            pass\n        for v4 in _range(k0, k0 + n0):",
    ),
    "loop longer than reserved": ("for v4 in _range(k0, k0 + n0):", "for v4 in _range(k0, k0 + n0 + 1):"),
    "a charge inside": (_PUSH, "                f -= 1\n" + _PUSH),
    "fuel stored inside": (_PUSH, "                f = f + 1\n" + _PUSH),
    "a break inside": (_PUSH, "                break\n" + _PUSH),
    "two pushes": (_PUSH, "                _p_push(b0, t3)\n" + _PUSH),
    "a conditional push": (_PUSH, "                if t3 >= 0:\n    " + _PUSH),
    "a paying stub inside": (_PUSH, "                _s_lox(R, f, t1, 7, b0, t3)\n" + _PUSH),
    "counter stored inside": (_READ, "                v4 = v4 + 1\n" + _READ),
    "view read at another index": (_READ, _READ.replace("g0[v4]", "g0[v4 + 1]")),
    "view read by another name": (_READ, _READ.replace("g0[v4]", "g0[t7]")),
    "range start dropped": (" and (k1 >= 0)", ""),
    "range too long": ("(k1 + n1 <= t8)", "(k1 + n1 <= t8 + 1)"),
    "range of another size": ("(k1 + n1 <= t8)", "(k1 + n1 <= t9)"),
    "range of another start": ("(k1 + n1 <= t8)", "(k0 + n1 <= t8)"),
    "room widened before the loop": ("    k0 = 0\n", "    k0 = 0\n    t0 = 10000000\n"),
    "room widened after the take": (
        "    b0, t0 = _s_lown(R, v3)\n",
        "    b0, t0 = _s_lown(R, v3)\n    t0 = t0 + 9\n",
    ),
}


def test_the_untampered_chunk_module_passes_as_generated_and_as_source() -> None:
    _GENERATED.bind()
    _GENERATED.bind(ast.parse(_GENERATED.source()))  # the tamperings below start from this


@pytest.mark.parametrize("name", sorted(CHUNK_TAMPERINGS))
def test_a_tampered_fast_list_chunk_is_rejected(name: str) -> None:
    _GENERATED.assert_rejected(*CHUNK_TAMPERINGS[name], match="fast list chunk")
