"""Inline ``list.get`` of a loop-invariant list in a bulk chunk (``codegen.list_read``).

The list's size and read fuel are taken once before the loop, and each read checks the fuel and the
index inline, handing anything else (fuel short, an index out of range on either side) to the exact
stub. Here the reads run off both ends of the list and under every fuel budget around the failure,
and every observable (value, error and its location, fuel, usage) is compared with the reference.
"""

from __future__ import annotations

import ast
import dataclasses

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import compile_plan

from .differential import assert_agree, backend, observe, run_plan_both
from .kernels import policy, prepare
from .tampering import Tampering

READS = """module "reads" version "1.0.0";
entrypoint fn main(n I32, k I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i * 3); }
    total = 0;
    for j in 0 .. n + k { total = total + list.get(xs, j - k); }
    w = 0;
    while w < n { total = total + list.get(xs, w) % 5; w = w + 1; }
    return total;
}"""

VECTORS = [
    [50, 0],
    [3000, 0],  # more than one chunk
    [50, -3],  # the index runs past the end
    [50, 2],  # the first index is negative
    [0, 0],
    [0, 1],  # a read of an empty list
]


def test_invariant_list_reads_agree_with_the_reference_off_both_ends() -> None:
    assert_agree(run_plan_both(prepare(READS), "main", VECTORS), "list reads")


def test_invariant_list_reads_are_inline() -> None:
    """Both reading loops take the inline path (else the other tests prove nothing new)."""
    source = compile_plan(prepare(READS), keep_module=True).source()
    assert source.count("_p_lbuf(") == 2, source
    assert source.count("_p_lsize(") == 2, source


@pytest.mark.parametrize("args", [[40, 0], [40, -3]])
def test_invariant_list_reads_fail_at_the_same_charge_for_every_fuel_budget(args: list[int]) -> None:
    base = prepare(READS)
    host = SandboxHost(backends={"optimized": backend()})
    needed = host.execute(base, "main", args).usage.fuel_used
    for fuel in range(max(0, needed - 60), needed + 2):
        plan = dataclasses.replace(base, policy=policy(max_fuel=fuel))
        reference = observe(host.execute(plan, "main", args))
        optimized = observe(host.execute(plan, "main", args, backend="optimized"))
        assert reference == optimized, fuel


TEMPORARY = """module "temporary" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    total = 0;
    for i in 0 .. n {
        total = total + list.get(list.add(list.empty[I32](), i), 0);
    }
    return total;
}"""


def test_a_list_built_in_the_loop_is_never_read_through_a_stale_view() -> None:
    """A list that exists only as a temporary of the body (a new one every iteration) is read
    through the stub, never through a size taken before the loop (found by the generated-program
    differential test: the temporary was mistaken for a loop-invariant local)."""
    assert_agree(run_plan_both(prepare(TEMPORARY), "main", [[0], [5], [3000]]), "temporary list")


# --- the verifier: list-read views (``verify_reads``) -------------------------------------------

_GENERATED = Tampering(READS)

VIEW_TAMPERINGS = {
    "no lower bound": ("t7 >= 0 and (t7 < t8)", "t7 >= -1 and (t7 < t8)"),
    "lower bound dropped": ("if f >= t9 and t7 >= 0 and (t7 < t8):", "if f >= t9 and t7 < t8:"),
    "bounded by another size": ("t7 >= 0 and (t7 < t8)", "t7 >= 0 and (t7 < t9)"),
    "bounded by another name": ("t7 >= 0 and (t7 < t8)", "v5 >= 0 and (v5 < t8)"),
    "charge not the tested fuel": (
        "f = f - t9\n                t10 = g0[t7]",
        "f = f - 0\n                t10 = g0[t7]",
    ),
    "read outside its guard": ("t11 = v4 + t10", "t11 = v4 + g0[t7]"),
    "read at an expression": ("t10 = g0[t7]", "t10 = g0[t7 + 1]"),
    "view as a value": ("t10 = g0[t7]", "t10 = g0"),
    "view passed to a stub": ("10, v2, t7)", "10, g0, t7)"),
    "view stored into": ("t10 = g0[t7]", "g0[t7] = t10"),
    "view returned": ("    g1 = _p_lbuf(v2)\n", "    g1 = _p_lbuf(v2)\n    return (g1, f)\n"),
    "view of another list": ("g0 = _p_lbuf(v2)", "g0 = _p_lbuf(v0)"),
    "view taken before its size": (
        "    t8 = _p_lsize(v2)\n    g0 = _p_lbuf(v2)\n",
        "    g0 = _p_lbuf(v2)\n    t8 = _p_lsize(v2)\n",
    ),
    "size widened after the view": ("    t9 = _p_rfuel(t8)\n", "    t9 = _p_rfuel(t8)\n    t8 = t8 + 5\n"),
    "view taken twice": (
        "    g0 = _p_lbuf(v2)\n",
        "    g0 = _p_lbuf(v2)\n    t8 = _p_lsize(v2)\n    g0 = _p_lbuf(v2)\n",
    ),
    "view taken into a slot": ("g0 = _p_lbuf(v2)", "t99 = _p_lbuf(v2)"),
    "buffer taken as a value": ("t10 = g0[t7]", "t10 = _p_lbuf(v2)"),
}


def test_the_untampered_view_module_passes_as_generated_and_as_source() -> None:
    _GENERATED.bind()
    _GENERATED.bind(ast.parse(_GENERATED.source()))  # the tamperings below start from this


@pytest.mark.parametrize("name", sorted(VIEW_TAMPERINGS))
def test_a_tampered_list_read_view_is_rejected(name: str) -> None:
    _GENERATED.assert_rejected(*VIEW_TAMPERINGS[name])
