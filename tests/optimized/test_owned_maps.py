"""Owned maps: ``map.get`` / ``containsKey`` / ``count`` / ``m = map.set(m, k, v)`` inline on a dict
inside checked bulk chunks.

The code generator proves a map local owned (``runtime.optimized.owned_maps``), takes it into a dict
with the room its updates have under every limit before the loop (``_s_mown``), checks each
operation's charges inline, and settles allocation and elements from the units cell whenever the
meter is synced and when the value is materialized after the loop (``_s_mmat``). Here every refusal
point (fuel, allocation, total elements, map entries, depth, a missing key, an arithmetic fault in
the body, the loop budget, a cancellation) is swept around the failure and every observable is
compared with the reference interpreter; kernels the proof must refuse keep the exact stubs; and the
verifier refuses tampered dict and cell forms.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.conformance.backends import InProcessBackend
from dotboxd.conformance.compare import compare
from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core import costs
from dotboxd.core.ast import Module
from dotboxd.core.values import ListValue, MapValue
from dotboxd.host import SandboxHost
from dotboxd.runtime.meter import Meter, MeterLimits
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.owned_map_stubs import owned_map_room, take_owned_map
from dotboxd.runtime.optimized.stubs import RunState
from tests.corpus_cases import corpus_cases

from .differential import assert_agree, backend, run_plan_both, sweep_limit
from .kernels import policy, prepare
from .owned_harness import CHUNK_ROOM, assert_kept_exact, cancelled_run, source_of
from .tampering import Tampering

BUILD = """module "mapbuild" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
    counts = map.empty[Map<I32, I32>]();
    for i in 0 .. n {
        k = i * m % 23;
        if map.containsKey(counts, k) { counts = map.set(counts, k, map.get(counts, k) + 1); }
        else { counts = map.set(counts, k, i); }
        counts = map.set(counts, i % 5 + 100 * m, map.count(counts));
    }
    w = 0;
    while w < n { counts = map.set(counts, w * 7 % 11 + 1000, w); w = w + 1; }
    return map.count(counts) + map.get(counts, 0);
}"""

GROW = """module "mapgrow" version "1.0.0";
entrypoint fn main(n I32, wrap I32) -> I64 {
    seen = map.empty[Map<I64, I64>]();
    for i in 0 .. n { seen = map.set(seen, numeric.toI64(i % wrap), numeric.toI64(i)); }
    return numeric.toI64(map.count(seen)) + map.get(seen, numeric.toI64(wrap - 1));
}"""

MISSING = """module "missing" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    total = 0;
    for i in 0 .. n { seen = map.set(seen, i % 10, i); total = total + map.get(seen, i % 13); }
    return total;
}"""

RETURNED = """module "returned" version "1.0.0";
fn build(n I32) -> Map<Bool, F64> {
    flags = map.empty[Map<Bool, F64>]();
    for i in 0 .. n { flags = map.set(flags, i % 3 == 0, numeric.toF64(i) / 2.0); }
    return flags;
}
entrypoint fn main(n I32) -> Map<Bool, F64> { return build(n); }"""

WORDS = """module "words" version "1.0.0";
entrypoint fn main(words List<String>, extra I32) -> I32 {
    counts = map.empty[Map<String, I32>]();
    for i in 0 .. list.count(words) + extra {
        w = list.get(words, i);
        if map.containsKey(counts, w) { counts = map.set(counts, w, map.get(counts, w) + 1); }
        else { counts = map.set(counts, w, 1); }
    }
    return map.count(counts) * 1000 + map.get(counts, "the");
}"""
_WORDS = ListValue(["the", "cat", "saw", "the", "dog", "and", "the", "bird", "ünïcode", "😀", "the", "end"])

VECTORS = [[0, 1], [1, 1], [7, 2], [40, 3], [3000, 5], [5000, 1]]


def test_owned_map_operations_are_inline_in_both_loop_kinds() -> None:
    """Both loops of BUILD keep the map as a dict and every map operation in them is inline (else
    the sweeps below would test the stubs, not the owned forms)."""
    source = source_of(BUILD)
    assert source.count("_s_mown(") == 2, source
    assert source.count("_s_mmat(") == 2, source
    for stub in ("_s_i_map_set", "_s_i_map_containsKey"):
        assert stub not in source, source
    assert source.count("_s_i_map_get") == 1 and source.count("_s_i_map_count") == 1, (
        source
    )  # after the loops


def test_owned_map_builds_agree_with_the_reference() -> None:
    assert_agree(run_plan_both(prepare(BUILD), "main", VECTORS), "owned map builds")


def test_a_grown_map_crosses_walk_fuel_and_chunks_like_the_reference() -> None:
    """Up to 4,500 entries: the shape walk's fuel (1 from 32 entries on), chunk boundaries, I64 keys."""
    assert "_s_mown(" in source_of(GROW)
    vectors = [[0, 1], [70, 40], [5000, 4500], [6000, 3]]
    assert_agree(run_plan_both(prepare(GROW), "main", vectors), "grown owned map")


def test_a_missing_key_inside_the_loop_fails_like_the_reference() -> None:
    pairs = run_plan_both(prepare(MISSING), "main", [[5], [10], [11], [3000]])
    assert_agree(pairs, "map.get of a missing key")
    assert pairs[2][0]["error"] is not None and pairs[2][0]["error"][1] == "R-MAP-KEY-MISSING"


def test_a_returned_owned_map_is_the_reference_value() -> None:
    assert "_s_mown(" in source_of(RETURNED)
    assert_agree(run_plan_both(prepare(RETURNED), "main", [[0], [1], [2], [2500]]), "returned owned map")


def test_counting_words_keeps_a_text_keyed_map_owned() -> None:
    """Text keys read from a list the loop never assigns: the map is owned (``_s_mtown``), the
    list read is inline, and every result agrees - a list index out of range inside the loop
    (``extra`` 1) too, whose exact stub settles the updates before it."""
    source = source_of(WORDS)
    assert "_s_mtown(" in source and "_s_i_map_set" not in source, source
    many = ListValue([*(f"w{i % 300}é" for i in range(5000)), "the"])
    vectors = [[_WORDS, 0], [_WORDS, 1], [ListValue(["the"]), 0], [many, 0], [many, 1]]
    roomy = policy(
        max_fuel=10**9,
        max_loop_iterations=10**6,
        max_total_collection_elements=10**9,
        max_allocated_bytes=10**10,
        max_total_string_bytes=10**9,
    )
    pairs = run_plan_both(
        dataclasses.replace(prepare(WORDS), policy=roomy), "main", vectors, encoding="python"
    )
    assert_agree(pairs, "word counts")
    assert pairs[0][0]["ok"] and pairs[3][0]["ok"]
    assert pairs[1][0]["error"] is not None and pairs[1][0]["error"][1] == "R-LIST-INDEX"


@pytest.mark.parametrize(
    ("limit", "field", "step"),
    [
        ("max_total_string_bytes", "stringBytes", 1),
        ("max_allocated_bytes", "allocatedBytes", 3),
        ("max_fuel", "fuelUsed", 1),
        ("max_total_collection_elements", "collectionElements", 1),
    ],
)
def test_a_text_keyed_owned_map_refuses_where_the_reference_does(limit: str, field: str, step: int) -> None:
    needed = _needed(WORDS, field, [_WORDS, 0])
    sweep_limit(prepare(WORDS), [_WORDS, 0], limit, range(0, needed + 5, step))


def test_a_text_keyed_owned_map_refuses_long_keys_and_many_entries_like_the_reference() -> None:
    sweep_limit(prepare(WORDS), [_WORDS, 0], "max_string_length", range(0, 10))
    sweep_limit(prepare(WORDS), [_WORDS, 0], "max_map_entries", range(0, 12))


def test_owned_map_fails_at_the_same_charge_for_every_fuel_budget() -> None:
    host = SandboxHost(backends={"optimized": backend()})
    needed = host.execute(prepare(BUILD), "main", [14, 3]).usage.fuel_used
    sweep_limit(prepare(BUILD), [14, 3], "max_fuel", range(0, needed + 2))


def _needed(text: str, field: str, args: list[Any], **limits: int) -> int:
    plan = dataclasses.replace(prepare(text), policy=policy(**limits))
    result = SandboxHost().execute(plan, "main", args)
    assert result.ok, result.error
    used: int = result.usage.to_json()[field]
    return used


def test_owned_map_refuses_allocation_exactly_where_the_reference_does() -> None:
    needed = _needed(BUILD, "allocatedBytes", [14, 3])
    sweep_limit(prepare(BUILD), [14, 3], "max_allocated_bytes", range(0, needed + 40, 5))


def test_owned_map_refuses_total_elements_exactly_where_the_reference_does() -> None:
    needed = _needed(BUILD, "collectionElements", [14, 3])
    sweep_limit(prepare(BUILD), [14, 3], "max_total_collection_elements", range(0, needed + 3))


def test_owned_map_refuses_map_entries_exactly_where_the_reference_does() -> None:
    sweep_limit(prepare(BUILD), [40, 3], "max_map_entries", range(0, 45))


def test_owned_map_refuses_collection_depth_exactly_where_the_reference_does() -> None:
    sweep_limit(prepare(BUILD), [40, 3], "max_collection_depth", range(0, 3))


_ROOMY = {**CHUNK_ROOM, "max_map_entries": 10**7}


def test_owned_map_refusals_past_a_chunk_boundary_agree() -> None:
    """A refusal after the first 2,048-iteration chunk: the updates of earlier chunks were settled
    at the reservation, the failing one is exact."""
    sweep_limit(prepare(GROW), [5000, 4500], "max_map_entries", range(2040, 4600, 97), **_ROOMY)
    needed = _needed(GROW, "collectionElements", [5000, 4500], **_ROOMY)
    step = needed // 40
    sweep_limit(
        prepare(GROW),
        [5000, 4500],
        "max_total_collection_elements",
        range(needed - 30 * step, needed + step, step),
        **{k: v for k, v in _ROOMY.items() if k != "max_total_collection_elements"},
    )


def test_the_loop_budget_inside_an_owned_loop_agrees() -> None:
    sweep_limit(prepare(GROW), [5000, 4500], "max_loop_iterations", range(2000, 5400, 373), **_ROOMY)


def test_an_arithmetic_fault_inside_an_owned_chunk_settles_the_updates_before_it() -> None:
    """``i * m`` overflows part way through the loop: the error, its location and the allocation
    and elements of the updates made before it are the reference's."""
    pairs = run_plan_both(prepare(BUILD), "main", [[3000, 2_000_000], [100, 2**31 - 1]])
    assert_agree(pairs, "fault in an owned chunk")
    assert pairs[0][0]["error"] is not None


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 120),
    m=st.integers(-5, 40),
    fuel=st.integers(0, 60_000),
    entries=st.integers(0, 60),
    alloc=st.integers(0, 200_000),
)
def test_random_budgets_agree(n: int, m: int, fuel: int, entries: int, alloc: int) -> None:
    plan = dataclasses.replace(
        prepare(BUILD), policy=policy(max_fuel=fuel, max_map_entries=entries, max_allocated_bytes=alloc)
    )
    assert_agree(run_plan_both(plan, "main", [[n, m]]), "random budgets")


NOT_OWNED = {
    "a parameter": """module "m" version "1.0.0";
entrypoint fn main(seen Map<I32, I32>, n I32) -> I32 {
    for i in 0 .. n { seen = map.set(seen, i, i); }
    return map.count(seen);
}""",
    "an alias": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    other = seen;
    for i in 0 .. n { seen = map.set(seen, i, i); }
    return map.count(seen) + map.count(other);
}""",
    "text keys made in the loop": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<String, I32>]();
    for i in 0 .. n { seen = map.set(seen, "a", i); }
    return map.count(seen);
}""",
    "a function argument": """module "m" version "1.0.0";
fn size(seen Map<I32, I32>) -> I32 { return map.count(seen); }
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    for i in 0 .. n { seen = map.set(seen, i, i); }
    return size(seen);
}""",
    "stored in a list": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    for i in 0 .. n { seen = map.set(seen, i, i); }
    all = list.add(list.empty[Map<I32, I32>](), seen);
    return list.count(all);
}""",
    "two maps in the body": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    a = map.empty[Map<I32, I32>]();
    b = map.empty[Map<I32, I32>]();
    for i in 0 .. n { a = map.set(a, i, i); b = map.set(b, i, i); }
    return map.count(a) + map.count(b);
}""",
    "the value reads the map as a whole": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, Bool>]();
    for i in 0 .. n { seen = map.set(seen, i, seen == seen); }
    return map.count(seen);
}""",
    "a loop inside another loop": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    for j in 0 .. n { for i in 0 .. 3 { seen = map.set(seen, i * j, i); } }
    return map.count(seen);
}""",
    "a map.remove": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    for i in 0 .. n { seen = map.set(seen, i, i); }
    seen = map.remove(seen, 1);
    return map.count(seen);
}""",
}


@pytest.mark.parametrize("name", sorted(NOT_OWNED))
def test_maps_the_proof_cannot_own_keep_the_exact_stubs(name: str) -> None:
    parameter = MapValue([(1, 2)])  # a Python value: encoding="python"
    pairs = assert_kept_exact(
        NOT_OWNED[name], name, take="_s_mown", stub="_s_i_map_set", parameter=parameter, encoding="python"
    )
    assert pairs[0][0]["ok"], name


def _meter(**limits: int) -> Meter:
    return Meter(MeterLimits.from_object(policy(**limits).limits))


def test_taking_a_map_copies_its_entries() -> None:
    """Defence in depth for the proof: the dict is a copy, so updating it never changes the map
    it was taken from."""
    original = MapValue([(1, 10), (2, 20)])
    state = RunState.__new__(RunState)
    state.owned_map = None
    state.meter = _meter()
    table, cell, room, most = take_owned_map(state, original)
    table[3] = 30
    table[1] = 99
    assert original.get(1) == 10 and len(original) == 2
    assert not original.contains(3) and (cell, room, most) == ([0, 0], *owned_map_room(state.meter))


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({"max_allocated_bytes": 5_000}, (5_000 // 32, 10_000)),
        ({"max_total_collection_elements": 77}, (77, 10_000)),
        ({"max_map_entries": 9}, (None, 9)),
        ({"max_collection_depth": 0}, (None, -1)),
    ],
)
def test_owned_map_room_is_the_meter_own_limits(
    limits: dict[str, int], expected: tuple[int | None, int]
) -> None:
    """Units room: elements left and allocation left / 32, whichever is smaller; most entries:
    maxMapEntries, or -1 when no map fits the depth limit."""
    meter = _meter(**{"max_map_entries": 10_000, **limits})
    units, most = owned_map_room(meter)
    left = min(
        meter.limits.max_total_collection_elements - meter.collection_elements,
        (meter.limits.max_allocated_bytes - meter.allocated_bytes) // costs.MAP_ENTRY_ALLOC,
    )
    assert units == (expected[0] if expected[0] is not None else left) and most == expected[1]


def test_cancellation_during_an_owned_loop_leaves_usage_settled() -> None:
    """A run cancelled while it updates stops at a chunk reservation with every update made so far
    charged: its allocation and elements are exactly those of the updates it ran."""
    text = """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    seen = map.empty[Map<I32, I32>]();
    for i in 0 .. n { seen = map.set(seen, i % 7, i); }
    return map.count(seen);
}"""
    result = cancelled_run(text, 50_000_000, max_map_entries=100)
    assert result.error is not None and result.error.code == "R-CANCELLED"
    usage = result.usage.to_json()
    updates = usage["loopIterations"]  # one update per iteration; the cancelled reservation charged none
    assert updates > 7
    units = sum(min(k + 1, 7) for k in range(updates))  # entries after each update
    assert usage["collectionElements"] == units
    assert usage["allocatedBytes"] == costs.MAP_EMPTY_ALLOC + costs.MAP_ENTRY_ALLOC * units


def _corpus_cases() -> list[Case]:
    return [case for case in corpus_cases() if "collections/owned-maps.json#" in case.origin]


@pytest.mark.parametrize("case", _corpus_cases(), ids=lambda case: case.name)
def test_the_owned_map_conformance_cases_take_the_owned_form(case: Case) -> None:
    """Each kernel of ``conformance/cases/collections/owned-maps.json`` compiles to an owned map (so
    the corpus pins the owned form, not the stubs), and meets its expectations on both backends."""
    module = import_stage(case.raw, case.origin)
    assert isinstance(module, Module)
    with case_root(case.raw) as root:
        plan = validate_case(module, case.raw, root).plan
    source = compile_plan(plan, keep_module=True).source()
    assert ("_s_mown(" in source or "_s_mtown(" in source) and "_s_i_map_set" not in source, source
    for name in ("reference", "optimized"):
        assert compare(case.expect, InProcessBackend(name).evaluate(case)) == [], name


def test_the_owned_map_corpus_file_is_there() -> None:
    assert len(_corpus_cases()) >= 21


# --- the verifier ------------------------------------------------------------------------------

_TAMPERING = Tampering(BUILD)
_MOX7 = "_s_mox(R, f, lr + (n0 - (v3 - k0) - 1), 7, m0, 0, v4)"
"""The exact path of BUILD's ``containsKey``; its refund is computed where it fails (issue 16)."""


TAMPERED = {
    "dict read as a value": ("v2 = _s_mmat(R, m0)", "v2 = m0"),
    "dict returned": ("v2 = _s_mmat(R, m1)", "return (m1, f)"),
    "dict aliased into a slot": ("t2 = _p_mlen(m0)", "t2 = m0"),
    "dict taken into a slot": ("m0, u0, t0, t1 = _s_mown(R, v2)", "t98, u0, t0, t1 = _s_mown(R, v2)"),
    "cell taken into a slot": ("m0, u0, t0, t1 = _s_mown(R, v2)", "m0, t98, t0, t1 = _s_mown(R, v2)"),
    "dict from elsewhere": ("m0, u0, t0, t1 = _s_mown(R, v2)", "m0, u0, t0, t1 = (v2, v2, 0, 0)"),
    "take kept as one value": ("m0, u0, t0, t1 = _s_mown(R, v2)", "t98 = _s_mown(R, v2)"),
    "dict passed to another stub": ("v2 = _s_mmat(R, m0)", "v2, f = _s_i_map_count(R, f, lr, 18, m0)"),
    "dict passed to a list helper": ("t2 = _p_mlen(m0)", "t2 = _p_len(m0)"),
    "item store into a value": ("m0[v4] = t9", "v2[v4] = t9"),
    "item store keyed by an expression": ("m0[v4] = t9", "m0[v4 + 1] = t9"),
    "item read of a value": ("t7 = m0[v4]", "t7 = v2[v4]"),
    "cell past its two items": ("u0[0] = t13", "u0[2] = t13"),
    "cell read as a value": ("t13 = t3 + t2", "t13 = u0 + t2"),
    "cell rebound": ("u0[0] = t13", "u0 = t13"),
    "membership in a value": ("t5 = v4 in m0", "t5 = v4 in v2"),
    "cell as a dict": ("t5 = v4 in m0", "t5 = v4 in u0"),
    "exact path off its site": (_MOX7, _MOX7.replace(", 7,", ", 99999,")),
    "exact path of no operation": (_MOX7, _MOX7.replace("m0, 0,", "m0, 9,")),
    "exact path with an extra operand": (
        _MOX7,
        _MOX7.replace("v4)", "v4, v4)"),
    ),
    "exact path on a value": (_MOX7, _MOX7.replace("m0, 0,", "v2, 0,")),
    "exact path refunding past its chunk": (_MOX7, _MOX7.replace("- 1), 7", "+ 5), 7")),
    "exact path refunding the whole chunk": (_MOX7, _MOX7.replace("lr + (n0 - (v3 - k0) - 1)", "lr + n0")),
    "exact path refunding a constant": (_MOX7, _MOX7.replace("lr + (n0 - (v3 - k0) - 1)", "lr + 9")),
    "exact path refunding without lr": (
        _MOX7,
        _MOX7.replace("lr + (n0 - (v3 - k0) - 1)", "n0 - (v3 - k0) - 1"),
    ),
    "exact path refunding another chunk": (
        "_s_mox(R, f, lr + (n1 - j0 - 1), 22, m1, 2, t35, v5)",
        "_s_mox(R, f, lr + (n0 - j0 - 1), 22, m1, 2, t35, v5)",
    ),
    "dict never taken": ("t7 = m0[v4]", "t7 = m7[v4]"),
    "take called inside an expression": ("t2 = _p_mlen(m0)", "t2 = _p_min(_s_mown(R, v2), 1)"),
}


_TEXT_TAMPERING = Tampering(WORDS)
TEXT_TAMPERED = {
    "text take with slots missing": (
        "m0, u0, t8, t9, t2, t3, t4, t5, t6 = _s_mtown(R, v2)",
        "m0, u0, t8, t9 = _s_mtown(R, v2)",
    ),
    "scalar take with text slots": (
        "m0, u0, t8, t9, t2, t3, t4, t5, t6 = _s_mtown(R, v2)",
        "m0, u0, t8, t9, t2, t3, t4, t5, t6 = _s_mown(R, v2)",
    ),
    "text cell past its two items": ("u0[1] = t26", "u0[2] = t26"),
    "key text length of the dict": ("_p_u16len(v4)", "_p_u16len(m0)"),
}
_CASES = {**{name: (_TAMPERING, edit) for name, edit in TAMPERED.items()}}
_CASES.update((name, (_TEXT_TAMPERING, edit)) for name, edit in TEXT_TAMPERED.items())


@pytest.mark.parametrize("tampering", [_TAMPERING, _TEXT_TAMPERING], ids=["scalar keys", "text keys"])
def test_the_untampered_owned_map_modules_pass(tampering: Tampering) -> None:
    tampering.bind()


@pytest.mark.parametrize("name", sorted(_CASES))
def test_a_tampered_owned_map_form_is_rejected(name: str) -> None:
    tampering, edit = _CASES[name]
    tampering.assert_rejected(*edit)
