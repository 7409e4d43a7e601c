"""Loop refunds computed where a failure happens, and inline reads that test one fuel name (issue 16).

A checked chunk whose body never assigns its counter gives every failure point the refund
``lr + (n - (v - k) - 1)`` as an expression of its own, instead of a slot set at the start of every
iteration (``codegen.lref``, ``LAZY_REFUNDS``); past that many failure points the body reads one
slot again. An inline ``list.get`` adds its read fuel and segment once before the loop
(``Chunk.needs``). What a failure passes on is the same value either way, so every observable -
the value, the error and its location, fuel, loop iterations and every other counter - must agree
with the reference at each failure point: here a counter overflow and a list read off the end in the
middle of a chunk, and every fuel and loop budget around the failure.
"""

from __future__ import annotations

import re

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.codegen import LAZY_REFUNDS

from .differential import assert_agree, backend, run_plan_both, sweep_limit
from .kernels import prepare

SUM = """module "sum" version "1.0.0";
entrypoint fn main(n I32, big I32, k I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, big - i); }
    total = 0;
    for i in 0 .. list.count(xs) + k { total = total + list.get(xs, i); }
    return total;
}"""
"""Two small checked chunks: the build (three failure points) and the sum (two: the read, whose
index runs off the end when ``k > 0``, and ``total``'s overflow when ``big`` is large)."""

BUSY = """module "busy" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i); }
    a = 0;
    for i in 0 .. n {
        a = a + list.get(xs, i) * m;
        a = a - list.get(xs, n - 1 - i) * m;
        a = a + i * m % 7;
        a = a * 1 + m * 3;
    }
    return a;
}"""
"""A sum loop with more failure points than ``LAZY_REFUNDS``: its refund is read from a slot."""


def _loops(source: str) -> list[str]:
    """The bodies of the generated bulk chunks, in order."""
    return re.findall(r"for v\d+ in _range\(k\d+, k\d+ \+ n\d+\):\n(.*?)\n        else:", source, re.S)


def test_small_chunks_compute_the_refund_only_where_a_failure_happens() -> None:
    source = compile_plan(prepare(SUM), keep_module=True).source()
    build, read = _loops(source)
    for body in (build, read):
        assert not re.search(r"^\s+t\d+ = lr \+ ", body, re.M), body  # nothing set per iteration
        assert body.count("lr + (n") >= 2, body  # each failure point computes its own
    one_fuel_name = r"if f >= (t\d+) and v(\d+) >= 0 and \(v\2 < t\d+\):\n\s+f = f - \1\n"
    assert re.search(one_fuel_name, read), read


def test_a_busy_chunk_reads_its_refund_from_one_slot() -> None:
    source = compile_plan(prepare(BUSY), keep_module=True).source()
    body = _loops(source)[1]
    assert body.count("lr + (n") == 1, body
    assert len(re.findall(r"R, f, t\d+, \d+", body)) > LAZY_REFUNDS, body


VECTORS = [
    [50, 7, 0],
    [3000, 7, 0],  # more than one chunk
    [50, 7, 3],  # the index runs off the end in the middle of a chunk
    [3000, 2**31 - 1, 0],  # total overflows in the middle of a chunk
    [0, 0, 1],
]


def test_lazy_refunds_agree_with_the_reference_at_each_failure_point() -> None:
    assert_agree(run_plan_both(prepare(SUM), "main", VECTORS), "lazy refunds")
    assert_agree(run_plan_both(prepare(BUSY), "main", [[40, 3], [2000, 2**20], [0, 1]]), "slot refunds")


def _needed(text: str, args: list[int], field: str) -> int:
    host = SandboxHost(backends={"optimized": backend()})
    used: int = host.execute(prepare(text), "main", args).usage.to_json()[field]
    return used


def test_lazy_refunds_fail_at_the_same_charge_for_every_fuel_budget() -> None:
    args = [40, 7, 0]
    needed = _needed(SUM, args, "fuelUsed")
    sweep_limit(prepare(SUM), args, "max_fuel", range(needed - 600, needed + 2))


def test_lazy_refunds_give_back_the_same_iterations_for_every_loop_budget() -> None:
    sweep_limit(prepare(SUM), [40, 7, 0], "max_loop_iterations", range(0, 85))
    sweep_limit(prepare(BUSY), [30, 3], "max_loop_iterations", range(0, 65))


def test_a_busy_chunk_fails_at_the_same_charge_for_every_fuel_budget() -> None:
    needed = _needed(BUSY, [30, 3], "fuelUsed")
    sweep_limit(prepare(BUSY), [30, 3], "max_fuel", range(needed - 400, needed + 2))
