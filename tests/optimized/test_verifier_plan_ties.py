"""Tampered-AST tests: the counters' room, the work ticks and owned-list takes are tied to the plan.

Each test takes a real generated module (through its source text, as the disk cache stores it),
rewrites one place, and expects ``VerifierFailure`` from ``artifact.bind`` (the only path to
``compile()``):

* ``_s_capm``'s room (``counter_rooms``): its terms' bounds and steps are the plan's counters', and
  the slots they read are stepped in the chunk exactly as those counters are;
* ``_s_tick`` (``ticks``): each tick stands where the generator puts it and carries the plan's
  numbers, none missing and none added;
* ``_s_lown`` (``ownership``): the list it takes is re-proved owned on the generated function, and the
  loop it serves is one whose list the plan proves owned.
"""

from __future__ import annotations

import ast
import copy

import pytest

from dotboxd.runtime.optimized.artifact import ArtifactKey, bind
from dotboxd.runtime.optimized.codegen import Generated, GenOptions, generate
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.validator.plan import ExecutionPlan

from .kernels import prepare
from .test_counter_chunks import RESETS

COUNTERS = """module "counters" version "1.0.0";
entrypoint fn main(n I32) -> I64 {
    a = 0;
    b = 0L;
    c = 0;
    k = n;
    while k > 0 {
        k = k - 1;
        a = a + 1;
        b = b + 1L;
        if k % 2 == 0 { c = c + 3; } else { c = c - 2; }
    }
    return b + numeric.toI64(a + c);
}
"""
"""A fast while chunk with four counters: ``a`` (I32) and ``b`` (I64) step alike, ``c`` steps both
ways by more than 1, ``k`` steps down."""

TICKS = """module "ticks" version "1.0.0";
entrypoint fn main(n I32, s String) -> I32 {
    acc = 0;
    for i in 0 .. n {
        acc = acc + string.length(s);
        for q in 0 .. 2 { acc = acc + q; }
    }
    w = 0;
    while w < n {
        w = w + 1;
        acc = acc + string.length(s);
        for q in 0 .. 2 { acc = acc + q; }
    }
    return acc;
}
"""
"""An entry tick and two loops run iteration by iteration (each holds a loop) with heavy bodies."""

OWNED = """module "own" version "1.0.0";
entrypoint fn main(ys List<I32>, n I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i); }
    acc = 0;
    zs = list.empty[I32]();
    for j in 0 .. n { acc = acc + j % 7; }
    return list.count(xs) + list.count(ys) + list.count(zs) + acc;
}
"""
"""One owned list (``xs``), a list parameter (``ys``) and a fresh list no loop appends to (``zs``)."""


class _Kernel:
    def __init__(self, text: str) -> None:
        self.plan: ExecutionPlan = prepare(text)
        self.base: Generated = generate(self.plan)
        self.source = ast.unparse(self.base.module)

    def bind(self, source: str) -> None:
        bind(
            self.plan,
            ArtifactKey.for_plan(self.plan, GenOptions()),
            ast.parse(source),
            copy.deepcopy(self.base.tables),
            self.base.ir_nodes,
        )


KERNELS = {
    "counters": _Kernel(COUNTERS),
    "ticks": _Kernel(TICKS),
    "owned": _Kernel(OWNED),
    "resets": _Kernel(RESETS),
}


def _rewrite(source: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert source.count(old) == 1, (old, source)
        source = source.replace(old, new)
    return source


def _refused(kernel_name: str, pairs: tuple[tuple[str, str], ...]) -> None:
    kernel = KERNELS[kernel_name]
    with pytest.raises(VerifierFailure):
        kernel.bind(_rewrite(kernel.source, *pairs))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_untampered_modules_pass(name: str) -> None:
    kernel = KERNELS[name]
    kernel.bind(kernel.source)


def test_the_kernels_have_the_shapes_the_tamperings_need() -> None:
    """Guards the tamperings below against a code generator that stops emitting what they rewrite."""
    counters, ticks, owned = (KERNELS[name].source for name in ("counters", "ticks", "owned"))
    assert (
        "_s_capm(R, f, d, lr, 0, None, 30, 0, 30, 0, _p_min(2147483647 - v1, 9223372036854775807 - v2, "
        in counters
    )
    assert "(2147483647 - v3) // 3, (v3 - -2147483648) // 2, v4 - -2147483648))" in counters
    assert ticks.count("_s_tick(") == 3 and ticks.count("f = _s_liter(R, f, lr)\n        _s_tick(") == 2
    assert owned.count("_s_lown(") == 1 and "b0, t0 = _s_lown(R, v2)" in owned


# --- the counters' room -------------------------------------------------------------------------

ROOM = "_p_min(2147483647 - v1, 9223372036854775807 - v2, (2147483647 - v3) // 3, (v3 - -2147483648) // 2, v4 - -2147483648)"

ROOM_TAMPERINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "room as a constant": ((ROOM, "1000000000"),),
    "the I32 counter given the I64 bound": (("2147483647 - v1,", "9223372036854775807 - v1,"),),
    "the I32 and I64 counters' slots swapped": (
        ("2147483647 - v1, 9223372036854775807 - v2,", "2147483647 - v2, 9223372036854775807 - v1,"),
    ),
    "a step understated": (("(2147483647 - v3) // 3", "(2147483647 - v3) // 2"),),
    "a step dropped": (("(2147483647 - v3) // 3", "2147483647 - v3"),),
    "a counter's term dropped": ((", v4 - -2147483648)", ")"),),
    "a counter's down term dropped": ((", (v3 - -2147483648) // 2", ""),),
    "a term reading a slot that is not the counter": (("v4 - -2147483648)", "v0 - -2147483648)"),),
    "terms out of the plan's order": (
        ("2147483647 - v1, 9223372036854775807 - v2,", "9223372036854775807 - v2, 2147483647 - v1,"),
    ),
    "the room dropped (_s_cap)": (("_s_capm(", "_s_cap("), (", " + ROOM, "")),
    "a room of one term": ((ROOM, "2147483647 - v1"),),
    "the body steps a counter by more than the room allows": (("v3 = v3 + 3", "v3 = v3 + 30"),),
    "the body steps a counter the other way": (("v1 = v1 + 1", "v1 = v1 - 1"),),
    "the body assigns a counter otherwise": (("v1 = v1 + 1", "v1 = v0"),),
    "the body steps a counter twice": (("v1 = v1 + 1", "v1 = v1 + 1\n            v1 = v1 + 1"),),
    "the room read through a copy": (("2147483647 - v1,", "2147483647 - v0,"),),
}


@pytest.mark.parametrize("name", sorted(ROOM_TAMPERINGS))
def test_overflow_unchecked_counter_room_tampered(name: str) -> None:
    """Threat: a room larger than the plan's counters allow lets an update whose overflow check was
    dropped leave I32/I64 silently (a wrong value, not an error)."""
    _refused("counters", ROOM_TAMPERINGS[name])


# --- counters reset by a remainder ---------------------------------------------------------------

RESET_TAMPERINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "a reset by a divisor larger than the plan's": (("v3 = t2 % 1000\n", "v3 = t2 % 100000000\n"),),
    "a reset's exact path at a site that is not a remainder": (
        ("v3 = _s_c2(R, f - 2 * t5, v5, 5, t2, 1000)", "v3 = _s_c2(R, f - 2 * t5, v5, 4, t2, 1000)"),
    ),
    "a reset through a temporary that is not a remainder": (("t4 = v4 % 77\n", "t4 = v4 * 77\n"),),
    "a reset copied from a temporary set elsewhere": (("v4 = t4\n", "v4 = t1\n"),),
    "a reset of a sum by a divisor larger than the plan's": (
        ("v3 = t2 % 1000\n", "v3 = (t2 + v5) % 100000000\n"),
    ),
    "a reset of a call's result": (("v3 = t2 % 1000\n", "v3 = _p_min(t2, v5) % 1000\n"),),
    "a reset of a floor quotient": (("v3 = t2 % 1000\n", "v3 = (t2 // v5) % 1000\n"),),
    "a reset then stepped in the same store": (("v3 = t2 % 1000\n", "v3 = t2 % 1000 + v5\n"),),
}


def test_a_reset_of_a_sum_passes() -> None:
    """A reset may divide ``+ - *`` of names and integer constants (the generator emits
    ``c = (c + x) % m`` where value ranges or proofs dropped the sum's check): Python's ``%`` by
    the constant bounds it whatever the sum is."""
    kernel = KERNELS["resets"]
    kernel.bind(_rewrite(kernel.source, ("v3 = t2 % 1000\n", "v3 = (t2 + v5 * 2 - 1) % 1000\n")))


@pytest.mark.parametrize("name", sorted(RESET_TAMPERINGS))
def test_overflow_unchecked_counter_reset_tampered(name: str) -> None:
    """Threat: a counter whose steps run unchecked is "reset" to a value far from zero (a larger
    divisor, another operation's exact path, a temporary that is not a remainder), so the room
    computed at the chunk's start no longer bounds the steps after it and one overflows silently."""
    _refused("resets", RESET_TAMPERINGS[name])


# --- the work ticks -----------------------------------------------------------------------------

TICK_TAMPERINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "entry tick nodes understated": (("_s_tick(R, f, lr, 41, 2)", "_s_tick(R, f, lr, 1, 2)"),),
    "entry tick heavy dropped": (("_s_tick(R, f, lr, 41, 2)", "_s_tick(R, f, lr, 41, 0)"),),
    "entry tick removed": (("    _s_tick(R, f, lr, 41, 2)\n", ""),),
    "iteration tick removed": (("        _s_tick(R, f, lr, 13, 1)\n", ""),),
    "iteration ticks swapped": (
        ("_s_tick(R, f, lr, 13, 1)", "_s_tick(R, f, lr, 99, 9)"),
        ("_s_tick(R, f, lr, 20, 1)", "_s_tick(R, f, lr, 13, 1)"),
        ("_s_tick(R, f, lr, 99, 9)", "_s_tick(R, f, lr, 20, 1)"),
    ),
    "entry tick moved off the entry": (
        ("    _s_tick(R, f, lr, 41, 2)\n", ""),
        ("    v2 = 0\n", "    v2 = 0\n    _s_tick(R, f, lr, 41, 2)\n"),
    ),
    "a tick added before the return": (("    return (", "    _s_tick(R, f, lr, 1, 0)\n    return ("),),
    "tick given a loop reference of its own": (("_s_tick(R, f, lr, 13, 1)", "_s_tick(R, f, 0, 13, 1)"),),
    "tick with the fuel as a constant": (("_s_tick(R, f, lr, 41, 2)", "_s_tick(R, 10, lr, 41, 2)"),),
}


@pytest.mark.parametrize("name", sorted(TICK_TAMPERINGS))
def test_unbounded_time_tick_tampered(name: str) -> None:
    """Threat: a tick understated, missing or moved delays the deadline check and cancellation."""
    _refused("ticks", TICK_TAMPERINGS[name])


# --- owned lists ---------------------------------------------------------------------------------

OWNED_TAMPERINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "the parameter taken": (
        ("_s_lown(R, v2)", "_s_lown(R, v0)"),
        ("v2 = _s_lmat(R, b0)", "v0 = _s_lmat(R, b0)"),
    ),
    "an alias kept before the take": (
        ("    b0, t0 = _s_lown(R, v2)", "    v9 = v2\n    b0, t0 = _s_lown(R, v2)"),
    ),
    "the list copied from the parameter": (("v2, f = _s_i_list_empty(R, f, lr, 1)", "v2 = v0"),),
    "the list materialized nowhere": (("    v2 = _s_lmat(R, b0)\n", ""),),
    "the list read while its buffer grows": (
        (
            "            t2 = _p_len(b0)",
            "            t99, f = _s_i_list_count(R, f, lr, 5, v2)\n            t2 = _p_len(b0)",
        ),
    ),
    "the list taken twice": (
        ("    b0, t0 = _s_lown(R, v2)", "    b0, t0 = _s_lown(R, v2)\n    b1, t1 = _s_lown(R, v2)"),
    ),
    "the list stored in another value": (
        ("    v2 = _s_lmat(R, b0)\n", "    v2 = _s_lmat(R, b0)\n    v8 = (v2, v2)\n"),
    ),
    "the buffer used after its list was materialized": (
        ("    v2 = _s_lmat(R, b0)\n", "    v2 = _s_lmat(R, b0)\n    _p_push(b0, 1)\n"),
    ),
}


def _after_second_loop(source: str, insert: str) -> str:
    """``insert`` right after the fast loop's ``while`` statement (the ``break`` closing it)."""
    head, tail = source.split("    while k1 < v1:", 1)
    loop, rest = tail.split("\n        break\n", 1)
    return head + "    while k1 < v1:" + loop + "\n        break\n" + insert + rest


def test_overwrite_owned_list_take_for_a_loop_the_plan_owns_none_in() -> None:
    """Threat: a take the AST proof alone would pass (``zs`` is fresh and only counted) for a loop
    the plan never proved owned: the take must match the plan's loop."""
    kernel = KERNELS["owned"]
    source = _rewrite(
        kernel.source, ("    while k1 < v1:", "    b5, t50 = _s_lown(R, v5)\n    while k1 < v1:")
    )
    source = _after_second_loop(source, "    v5 = _s_lmat(R, b5)\n")
    with pytest.raises(VerifierFailure, match="owns no list"):
        kernel.bind(source)


@pytest.mark.parametrize("name", sorted(OWNED_TAMPERINGS))
def test_overwrite_owned_list_tampered(name: str) -> None:
    """Threat: ``_p_push`` appends to a buffer another holder of the list can see (a parameter the
    host or another run holds, an alias, a list read or taken again while it grows)."""
    _refused("owned", OWNED_TAMPERINGS[name])


RETURNED = """module "returned" version "1.0.0";
fn build(n I32) -> List<I64> {
    xs = list.empty[I64]();
    for i in 0 .. n { xs = list.add(xs, numeric.toI64(i)); }
    return xs;
}
entrypoint fn main(n I32) -> List<I64> { return build(n); }"""


def test_overwrite_owned_list_buffer_of_another_function() -> None:
    """Threat: a buffer name is a local of the function that took it; another function (here the
    entrypoint, checked after ``build``) pushing to a ``b0`` it never took is refused."""
    kernel = _Kernel(RETURNED)
    kernel.bind(kernel.source)
    head, tail = kernel.source.split("def _fn1(R, f, d, lr, v0):\n", 1)
    with pytest.raises(VerifierFailure, match="owned buffer"):
        kernel.bind(head + "def _fn1(R, f, d, lr, v0):\n    _p_push(b0, 1)\n" + tail)
