"""Branch fuel of a periodic arm counted in closed form (``periodic_tally.py``, issue 16).

A fast forRange chunk whose dearer arm runs when the counter hits a residue (``if i % 3 == 0``)
keeps no tally: the fuel of the arms taken so far is computed from the chunk's start and the
iteration where it is read. These kernels put faults before the ``if``, inside the counted arm,
in the other arm and after the ``if``, with ``==`` and ``!=`` tests, either arm dearer, loops that
start off zero, I32 and I64, and compare everything observable with the reference interpreter -
also at every fuel budget around each failure, at every fuel budget of a short run (exhaustion at
each charge, mid-chunk) and at every loop budget.
"""

from __future__ import annotations

import ast
import random
import re

import pytest

from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized import pyast as P
from dotboxd.runtime.optimized.periodic_tally import _Counter

from .differential import assert_agree, assert_agree_at_every_fuel_budget, run_plan_both, sweep_limit
from .kernels import prepare

I32_MAX = 2**31 - 1
I32_MIN = -(2**31)
I64_MAX = 2**63 - 1

EVERY_THIRD = """module "everyThird" version "1.0.0";
entrypoint fn main(n I32, a I32, b I32, c I32, e I32) -> I32 {
    acc = 0;
    for i in 2 .. n {
        acc = acc + 7 / (i - a);
        if i % 3 == 0 { acc = (acc + i * 2) % 1000003 + 7 / (i - b); } else { acc = acc - 1 + 7 / (i - c); }
        acc = acc + 7 / (i - e);
    }
    return acc;
}"""
"""The counted arm is the ``then`` of an ``==`` test, in a loop that starts at 2 (its chunks start
at every residue). A division by zero faults at ``i == a`` before the ``if``, ``i == b`` in the
counted arm, ``i == c`` in the other arm and ``i == e`` after the ``if`` (-1: never)."""

NEGATIVE_START = """module "negativeStart" version "1.0.0";
entrypoint fn main(lo I32, n I32) -> I32 {
    acc = 0;
    for i in lo .. n {
        if i % 3 == 0 { acc = acc + i * 2 + 1; } else { acc = acc - 1; }
    }
    return acc;
}"""
"""A counter of unknown sign: the remainder is the truncating one, computed behind a sign test
(not the periodic form); it must agree all the same."""

ELSE_DEARER = """module "elseDearer" version "1.0.0";
entrypoint fn main(start I32, n I32) -> I32 {
    acc = start;
    for i in 0 .. n {
        if i % 4 != 1 { acc = acc - 2; } else { acc = acc * 3 % 1000 + i * i + start; }
        acc = acc + 1;
    }
    return acc;
}"""
"""``!=`` with the dearer arm in the ``else``: the counted arm runs on a match."""

WIDE = """module "widePeriodic" version "1.0.0";
entrypoint fn main(start I64, n I32) -> I64 {
    c = start;
    for i in 5 .. n {
        if i % 7 == 3 { c = c + 1000000000L * 3L + c % 5L; }
        c = c - 1L;
    }
    return c;
}"""
"""I64, a non-zero residue, a loop that starts at 5, no ``else`` arm."""

EVERY_THIRD_VECTORS = [
    [40, -1, -1, -1, -1],
    [5000, -1, -1, -1, -1],  # more than one chunk, no failure
    [5000, 1500, -1, -1, -1],  # before the ``if``, mid-chunk, after counted arms
    [5000, -1, 1500, -1, -1],  # inside the counted arm
    [5000, -1, -1, 1501, -1],  # in the other arm
    [5000, -1, -1, -1, 1501],  # after the ``if``
    [5000, -1, -1, -1, 1500],  # after the ``if``, in an iteration that took the counted arm
    [5000, -1, 3000, -1, -1],  # inside the counted arm, in the second chunk
    [5000, -1, -1, -1, 2050],  # right after a chunk boundary
]
ELSE_VECTORS = [[0, 40], [0, 6000], [I32_MAX - 100, 3000], [I32_MIN + 900, 3000], [I32_MAX - 2, 10]]
WIDE_VECTORS = [[0, 100], [I64_MAX - 3000000000 * 40, 400], [I64_MAX - 2, 30], [-(2**63) + 3, 9]]


def test_periodic_arms_agree_with_the_reference() -> None:
    assert_agree(run_plan_both(prepare(EVERY_THIRD), "main", EVERY_THIRD_VECTORS), "every third")
    assert_agree(run_plan_both(prepare(ELSE_DEARER), "main", ELSE_VECTORS), "else dearer")
    assert_agree(run_plan_both(prepare(WIDE), "main", WIDE_VECTORS), "I64 periodic")
    negative = [[-30, 30], [-5000, -10], [I32_MIN, I32_MIN + 100], [I32_MAX - 100, I32_MAX]]
    assert_agree(run_plan_both(prepare(NEGATIVE_START), "main", negative), "negative start")


def test_each_loop_counts_its_arm_in_closed_form() -> None:
    """Else the tests here prove nothing new: no kernel above keeps a tally (``t = t + k``), and each
    completed chunk pays its arm with the count ``(k + n + s) // C - (k + s) // C``."""
    for kernel, modulus in ((EVERY_THIRD, 3), (ELSE_DEARER, 4), (WIDE, 7)):
        source = compile_plan(prepare(kernel), keep_module=True).source()
        lines = [line.strip() for line in source.splitlines()]
        assert not any(re.fullmatch(r"(t\d+) = \1 [+-] \d+", line) for line in lines), source
        count = rf"\(k\d+ \+ n\d+( \+ \d+)?\) // {modulus} - \(k\d+( \+ \d+)?\) // {modulus}"
        assert any(line.startswith("f -= ") and re.search(count, line) for line in lines), source


@pytest.mark.parametrize(
    ("kernel", "args"),
    [
        (EVERY_THIRD, [5000, 1500, -1, -1, -1]),
        (EVERY_THIRD, [5000, -1, 3000, -1, -1]),
        (EVERY_THIRD, [5000, -1, -1, 1501, -1]),
        (EVERY_THIRD, [5000, -1, -1, -1, 1501]),
        (EVERY_THIRD, [5000, -1, -1, -1, 1500]),
        (ELSE_DEARER, [I32_MAX - 100, 3000]),
        (WIDE, [I64_MAX - 3000000000 * 40, 400]),
    ],
)
def test_a_failure_after_counted_arms_is_at_the_same_charge_for_every_fuel_budget(
    kernel: str, args: list[int]
) -> None:
    assert_agree_at_every_fuel_budget(prepare(kernel), "main", args, below=200)


@pytest.mark.parametrize(
    ("kernel", "args"),
    [
        (EVERY_THIRD, [25, -1, -1, -1, -1]),
        (EVERY_THIRD, [25, -1, 15, -1, -1]),
        (ELSE_DEARER, [3, 22]),
        (WIDE, [0, 30]),
    ],
)
def test_exhaustion_at_every_charge_of_a_short_run(kernel: str, args: list[int]) -> None:
    """Every budget from nothing to one past the whole run: the fuel runs out at each charge,
    inside chunks with arms counted and not yet paid."""
    assert_agree_at_every_fuel_budget(prepare(kernel), "main", args, below=10**6)


def test_the_loop_budget_runs_out_mid_chunk() -> None:
    sweep_limit(prepare(EVERY_THIRD), [60, -1, -1, -1, -1], "max_loop_iterations", range(0, 60))
    sweep_limit(prepare(ELSE_DEARER), [0, 45], "max_loop_iterations", range(0, 47))


def test_the_count_is_the_python_predicate_for_every_start_and_end() -> None:
    """The closed form counts exactly the ``j`` in ``[k, x)`` that the generated test sends to the
    counted arm, for negative and positive starts, every residue and both test polarities."""
    rng = random.Random(16)
    for _ in range(400):
        modulus = rng.randint(1, 9)
        residue = rng.randrange(modulus)
        on_match = rng.random() < 0.5
        start = rng.randint(-50, 50)
        end = start + rng.randint(0, 40)
        counter = _Counter((modulus, residue, on_match), "v0", "k0")
        expression = counter.hits(P.name("x"))
        tree = ast.fix_missing_locations(ast.Expression(body=expression))
        value = eval(compile(tree, "<count>", "eval"), {"__builtins__": {}}, {"x": end, "k0": start})
        expected = sum((j % modulus == residue) == on_match for j in range(start, end))
        assert value == expected, (modulus, residue, on_match, start, end)
