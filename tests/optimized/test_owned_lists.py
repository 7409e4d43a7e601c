"""Owned lists: ``v = list.add(v, scalar)`` appended in place inside checked bulk chunks.

The code generator proves a list local owned (``runtime.optimized.owned``), takes its buffer and
the size up to which every add fits the limits before the loop (``_s_lown``), checks fuel and that
size inline, and settles allocation, elements and the deadline cadence in one step whenever the
meter is synced and when the value is materialized after the loop (``_s_lmat``). Here every refusal
point (fuel, allocation, list length, total elements, depth, an arithmetic fault in the body, the
loop budget) is swept around the failure and every observable is compared with the reference
interpreter; kernels the proof must refuse are checked to keep the exact stubs; and the verifier
refuses tampered buffer forms.
"""

from __future__ import annotations

import pytest

from dotboxd.core import costs
from dotboxd.core.values import ListValue
from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized.stubs import RunState, owned_room, take_owned

from .differential import assert_agree, backend, run_plan_both, sweep_limit
from .kernels import policy, prepare
from .owned_harness import CHUNK_ROOM, assert_kept_exact, cancelled_run, source_of
from .tampering import Tampering

BUILD = """module "build" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n {
        if i % 3 == 0 { xs = list.add(xs, i * m); }
        xs = list.add(xs, i);
    }
    w = 0;
    while w < n { xs = list.add(xs, w + 1); w = w + 1; }
    total = 0;
    for j in 0 .. list.count(xs) { total = total + list.get(xs, j) % 7; }
    return total + list.count(xs);
}"""

RETURNED = """module "returned" version "1.0.0";
fn build(n I32) -> List<I64> {
    xs = list.empty[I64]();
    for i in 0 .. n { xs = list.add(xs, numeric.toI64(i)); }
    return xs;
}
entrypoint fn main(n I32) -> List<I64> { return build(n); }"""

VECTORS = [[0, 1], [1, 1], [50, 2], [70, 1], [3000, 5], [5000, 1]]


def test_owned_adds_are_inline_in_both_loop_kinds() -> None:
    """The forRange and the while loop both append in place (else the sweeps below prove nothing new)."""
    source = source_of(BUILD)
    assert source.count("_s_lown(") == 2, source
    assert source.count("_p_push(") == 3, source
    assert "_s_i_list_add" not in source, source


def test_owned_list_builds_agree_with_the_reference() -> None:
    assert_agree(run_plan_both(prepare(BUILD), "main", VECTORS), "owned list builds")


def _sweep(text: str, args: list[int], limit: str, values: range, **room: int) -> None:
    sweep_limit(prepare(text), args, limit, values, **room)


def test_owned_list_fails_at_the_same_charge_for_every_fuel_budget() -> None:
    host = SandboxHost(backends={"optimized": backend()})
    needed = host.execute(prepare(BUILD), "main", [60, 3]).usage.fuel_used
    _sweep(BUILD, [60, 3], "max_fuel", range(needed - 700, needed + 2))


def _needed(field: str, args: list[int]) -> int:
    used: int = SandboxHost().execute(prepare(BUILD), "main", args).usage.to_json()[field]
    return used


def test_owned_list_refuses_allocation_exactly_where_the_reference_does() -> None:
    needed = _needed("allocatedBytes", [40, 3])
    _sweep(BUILD, [40, 3], "max_allocated_bytes", range(0, needed + 40, 13))


def test_owned_list_refuses_total_elements_exactly_where_the_reference_does() -> None:
    needed = _needed("collectionElements", [40, 3])
    _sweep(BUILD, [40, 3], "max_total_collection_elements", range(0, needed + 3, 3))


def test_owned_list_refuses_list_length_exactly_where_the_reference_does() -> None:
    _sweep(BUILD, [40, 3], "max_list_length", range(0, 100))


def test_owned_list_refuses_collection_depth_exactly_where_the_reference_does() -> None:
    _sweep(BUILD, [40, 3], "max_collection_depth", range(0, 3))


_ROOMY = {**CHUNK_ROOM, "max_list_length": 10**7}


def test_owned_list_refusals_past_a_chunk_boundary_agree() -> None:
    """A refusal after the first 2,048-iteration chunk: the adds of earlier chunks were settled
    at the reservation, the failing one is exact."""
    _sweep(BUILD, [3000, 1], "max_list_length", range(2040, 7100, 97), **_ROOMY)


def test_an_arithmetic_fault_inside_an_owned_chunk_settles_the_adds_before_it() -> None:
    """``i * m`` overflows part way through the loop: the error, its location and the allocation
    and elements of the adds made before it are the reference's."""
    pairs = run_plan_both(prepare(BUILD), "main", [[3000, 2_000_000], [100, 2**31 - 1]])
    assert_agree(pairs, "fault in an owned chunk")
    assert pairs[0][0]["error"] is not None


def test_the_loop_budget_inside_an_owned_loop_agrees() -> None:
    _sweep(BUILD, [3000, 1], "max_loop_iterations", range(2000, 13300, 373), **_ROOMY)


def test_a_returned_owned_list_is_the_reference_value() -> None:
    source = source_of(RETURNED)
    assert "_p_push(" in source, source
    assert_agree(run_plan_both(prepare(RETURNED), "main", [[0], [3], [2500]]), "returned owned list")


NOT_OWNED = {
    "a parameter": """module "m" version "1.0.0";
entrypoint fn main(xs List<I32>, n I32) -> I32 {
    for i in 0 .. n { xs = list.add(xs, i); }
    return list.count(xs);
}""",
    "an alias": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    ys = xs;
    for i in 0 .. n { xs = list.add(xs, i); }
    return list.count(xs) + list.count(ys);
}""",
    "read inside the loop": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, list.count(xs)); }
    return list.count(xs);
}""",
    "texts": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[String]();
    for i in 0 .. n { xs = list.add(xs, "a"); }
    return list.count(xs);
}""",
    "a function argument": """module "m" version "1.0.0";
fn size(xs List<I32>) -> I32 { return list.count(xs); }
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i); }
    return size(xs);
}""",
    "another call in the body": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    ys = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i); ys = list.add(ys, i); }
    return list.count(xs) + list.count(ys);
}""",
}


@pytest.mark.parametrize("name", sorted(NOT_OWNED))
def test_lists_the_proof_cannot_own_keep_the_exact_stub(name: str) -> None:
    parameter = ListValue([1, 2])  # a Python value: encoding="python"
    pairs = assert_kept_exact(
        NOT_OWNED[name], name, take="_s_lown", stub="_s_i_list_add", parameter=parameter, encoding="python"
    )
    assert pairs[0][0]["ok"], name


def test_taking_a_list_that_is_not_the_newest_version_copies_it() -> None:
    """Defence in depth for the proof: were the owned local ever not the newest version of its
    buffer, ``_s_lown`` copies its items, so the longer version sharing the buffer never changes."""
    old = ListValue([1, 2, 3])
    newer = old.append_scalar(4)
    state = RunState.__new__(RunState)
    state.owned = None
    state.meter = _meter()
    buffer, room = take_owned(state, old)
    buffer.append(99)
    assert list(newer) == [1, 2, 3, 4] and list(old) == [1, 2, 3]
    assert room == owned_room(state.meter, 3)


def _meter() -> object:
    from dotboxd.runtime.meter import Meter, MeterLimits

    return Meter(MeterLimits.from_object(policy().limits))


@pytest.mark.parametrize(
    ("limits", "size"),
    [
        ({"max_allocated_bytes": 5_000}, 0),
        ({"max_allocated_bytes": 5_000}, 7),
        ({"max_total_collection_elements": 1_000}, 3),
        ({"max_list_length": 17}, 4),
        ({"max_list_length": 4}, 4),
    ],
)
def test_owned_room_is_the_first_size_whose_add_the_meter_refuses(limits: dict[str, int], size: int) -> None:
    """``owned_room`` against the meter's own one-add-at-a-time answer (``settle_flat_list``)."""
    from dotboxd.runtime.meter import Meter, MeterLimits

    meter = Meter(MeterLimits.from_object(policy(**limits).limits))
    room = owned_room(meter, size)
    t = size
    while meter.settle_flat_list(10**9, 1, costs.list_add_alloc(t), t + 1):
        t += 1
    assert room == t


def test_cancellation_during_an_owned_loop_leaves_usage_settled() -> None:
    """A run cancelled while it appends stops at a chunk reservation with every add made so far
    charged: its allocation and elements are exactly those of the adds its list holds."""
    text = """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i); }
    return list.count(xs);
}"""
    result = cancelled_run(text, 50_000_000, max_list_length=10**8)
    assert result.error is not None and result.error.code == "R-CANCELLED"
    usage = result.usage.to_json()
    adds = usage["loopIterations"]  # one add per iteration; the cancelled reservation charged none
    assert adds > 0
    assert usage["collectionElements"] == costs.list_adds_elements(0, adds)
    assert usage["allocatedBytes"] == costs.LIST_EMPTY_ALLOC + costs.list_adds_alloc(0, adds)


# --- the verifier ------------------------------------------------------------------------------

_TAMPERING = Tampering(BUILD)


TAMPERED = {
    "push onto a value": ("_p_push(b0,", "_p_push(v2,"),
    "buffer read as a value": ("v2 = _s_lmat(R, b0)", "v2 = b0"),
    "buffer taken into a slot": ("b0, t0 = _s_lown(R, v2)", "t99, t0 = _s_lown(R, v2)"),
    "buffer from elsewhere": ("b0, t0 = _s_lown(R, v2)", "b0, t0 = (v2, 5)"),
    "buffer returned": ("v2 = _s_lmat(R, b1)", "return (b1, f)"),
    "length of a value": ("_p_len(b0)", "_p_len(v2)"),
    "push with extra argument": ("_p_push(b0,", "_p_push(b0, 1,"),
    "exact path off its site": ("_s_lox(R, f, t1, 6,", "_s_lox(R, f, t1, 99999,"),
    "buffer never taken": ("_p_push(b1,", "_p_push(b7,"),
}


def test_the_untampered_owned_module_passes() -> None:
    _TAMPERING.bind()


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_a_tampered_owned_buffer_form_is_rejected(name: str) -> None:
    _TAMPERING.assert_rejected(*TAMPERED[name])
