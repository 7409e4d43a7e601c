"""Branch fuel of fast chunks counted in a tally (``tally.py``) instead of the fuel local.

Inside a fast chunk the extra charges of dearer branch arms and the fixes before a ``continue`` go
to a small counter, and every read of the fuel reads ``f - unit * tally``. These kernels put such
charges next to every way out of a chunk - a fault, a ``break``, a ``return``, a ``continue``, a
false ``while`` condition, fuel exhaustion at each charge - and compare everything observable with
the reference interpreter, at every fuel budget of a short run.
"""

from __future__ import annotations

import re

import pytest

from dotboxd.runtime.optimized import compile_plan

from .differential import assert_agree, assert_agree_at_every_fuel_budget, run_plan_both
from .kernels import prepare

I32_MAX = 2**31 - 1

TALLY = """module "tally" version "1.0.0";
entrypoint fn main(start I32, n I32, stop I32) -> I32 {
    total = start;
    for i in 0 .. n {
        if i % 3 == 0 { total = total + i * 2 + 1; } else { if i % 3 == 1 { total = total - 1; } }
        if i == stop { break; }
        if i % 5 == 4 { continue; }
        total = total + 1;
    }
    x = n + 1;
    while x != 1 {
        if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }
        if x == stop { return total + x; }
        total = total + 1;
    }
    return total;
}"""
"""Branch arms of three costs, a ``break``, a ``continue`` and a ``return`` inside fast chunks, in a
``for`` and a ``while`` loop; ``start`` near the limit makes ``total + i * 2 + 1`` overflow inside a
chunk with branch charges already tallied."""

VECTORS = [
    [0, 40, -1],  # every iteration, no early exit
    [0, 40, 17],  # break in the for loop at i == 17
    [0, 27, 52],  # the while loop returns at x == 52 (28, 14, 7, 22, 11, 34, 17, 52)
    [0, 3000, -1],  # more than one chunk
    [I32_MAX - 500, 100, -1],  # overflow in the for loop after tallied branches
    [I32_MAX - 4000, 30, -1],  # the for loop fits, the while loop's steps overflow ``total``
]


def test_tallied_branches_agree_with_the_reference() -> None:
    assert_agree(run_plan_both(prepare(TALLY), "main", VECTORS), "branch tally")


def test_both_loops_tally_their_branch_charges() -> None:
    """Else the tests here prove nothing new: each fast chunk counts its branch charges in a tally
    (``t<i> = t<i> + k``) and pays it when the chunk completes (``f -= n<i> * base + ...t<i>``)."""
    source = compile_plan(prepare(TALLY), keep_module=True).source()
    lines = [line.strip() for line in source.splitlines()]
    tallies = {m.group(1) for line in lines if (m := re.fullmatch(r"(t\d+) = \1 [+-] \d+", line))}
    assert len(tallies) == 2, source
    for tally in tallies:
        paid = rf"f -= n\d+ \* \d+ \+ (\d+ \* )?{tally}"
        assert any(re.fullmatch(paid, line) for line in lines), source


@pytest.mark.parametrize("args", [[0, 12, -1], [0, 12, 7], [0, 9, 16], [I32_MAX - 60, 12, -1]])
def test_tallied_branches_stop_at_the_same_charge_for_every_fuel_budget(args: list[int]) -> None:
    """Every budget from nothing to one past the whole run: exhaustion at each charge of the loops,
    with branch charges tallied and not yet paid."""
    assert_agree_at_every_fuel_budget(prepare(TALLY), "main", args, below=10**6)
