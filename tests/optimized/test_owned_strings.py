"""Owned strings: ``s = string.concatBudgeted(s, x)`` built in a parts list inside checked bulk chunks.

The code generator proves a text local owned (``runtime.optimized.owned_text``), takes a parts list
and the rooms (host calls, ``maxStringLength``, the string-byte and allocation room) before the loop
(``_s_sown``), charges every concatenation and its producer inline, and settles string bytes,
allocation, host calls and the deadline cadence whenever the meter is synchronized and when the text
is joined after the loop (``_s_smat``). Here every refusal point (fuel, host calls, string length,
string bytes, allocation, an arithmetic fault in the body, the loop budget) is swept around the
failure and every observable is compared with the reference interpreter, for each producer kind and
with astral characters; kernels the proof must refuse are checked to keep the exact stubs; the
settlement is checked against the meter's one-call-at-a-time answer; and the verifier refuses
tampered parts-list forms.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.core import costs
from dotboxd.host import SandboxHost
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import Meter, MeterLimits
from dotboxd.runtime.optimized.owned_text import FROM_INT, FROM_LITERAL, FROM_LOCAL, FROM_MIXED
from dotboxd.runtime.optimized.text_parts import TextParts, settle
from tests.benchmarks.workloads import STRBUILD

from .differential import assert_agree, backend, cancelled_usage, observe, run_plan_both, sweep_limit
from .kernels import policy, prepare
from .owned_harness import assert_kept_exact, source_of
from .tampering import Tampering

DIGITS = """module "digits" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
    s = "";
    for i in 0 .. n {
        if i % 3 == 0 { s = string.concatBudgeted(s, int32.toStringInvariant(i * m)); }
        s = string.concatBudgeted(s, int32.toStringInvariant(i - m));
    }
    w = 0;
    while w < n { s = string.concatBudgeted(s, int32.toStringInvariant(w)); w = w + 1; }
    return string.length(s);
}"""

LITERALS = """module "literals" version "1.0.0";
entrypoint fn main(n I32) -> String {
    s = "\U0001d11ea";
    for i in 0 .. n {
        if i % 2 == 0 { s = string.concatBudgeted(s, "\u00e9\U0001d11e"); continue; }
        s = string.concatBudgeted(s, "x");
    }
    return s;
}"""

LOCALS = """module "locals" version "1.0.0";
entrypoint fn main(n I32, sep String) -> I32 {
    s = "";
    k = 0;
    while k < n {
        s = string.concatBudgeted(s, sep);
        k = k + 1;
        if k == 7000 { break; }
    }
    return string.length(s) + k;
}"""

_ROOMY = {
    "max_fuel": 10**12,
    "max_allocated_bytes": 10**12,
    "max_total_string_bytes": 10**12,
    "max_string_length": 10**7,
    "max_host_calls": 10**7,
    "max_loop_iterations": 10**7,
}
"""Limits none of the sweeps' runs reaches but the one swept."""

MIXED = """module "mixed" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
    s = "[";
    for i in 0 .. n {
        if i > 0 { s = string.concatBudgeted(s, ", \U0001f601"); }
        s = string.concatBudgeted(s, int32.toStringInvariant(i * m - 50));
    }
    s = string.concatBudgeted(s, "]");
    return string.length(s);
}"""

KERNELS = {
    "digits": (DIGITS, [[0, 1], [1, 1], [40, 7], [3000, 5], [5000, -3]]),
    "literals": (LITERALS, [[0], [1], [2], [41], [3000]]),
    "locals": (LOCALS, [[0, "ab"], [5, ""], [40, "\U0001f601-"], [3000, "\u00e9"], [9000, "x"]]),
    "mixed": (MIXED, [[0, 1], [1, 3], [40, 7], [3000, -11]]),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_producer_kind_takes_the_owned_path(name: str) -> None:
    """Each kernel's loops build in parts lists (else the sweeps below prove nothing new)."""
    source = source_of(KERNELS[name][0])
    loops, pieces = {"digits": (2, 3), "literals": (1, 2), "locals": (1, 1), "mixed": (1, 2)}[name]
    assert source.count("_s_sown(") == loops, source
    assert source.count("_p_part(") == pieces, source
    assert source.count("_s_cat(") == (name == "mixed"), source  # mixed: its closing "]" after the loop
    assert "_s_i_int32_toStringInvariant" not in source, source


def test_the_string_build_workload_takes_the_owned_path() -> None:
    """The benchmark's ``string_build`` (issue 16) is the loop this path exists for."""
    source = source_of(STRBUILD)
    assert "_s_sown(" in source and "_p_part(" in source and "_p_i2s(" in source, source
    assert "_s_cat(" not in source, source


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_owned_string_builds_agree_with_the_reference(name: str) -> None:
    """Under roomy limits (every run completes) and under the default ones (most refuse a host call)."""
    text, vectors = KERNELS[name]
    pairs = run_plan_both(prepare(text, policy(**_ROOMY)), "main", vectors)
    assert_agree(pairs, name)
    assert all(reference["error"] is None for reference, _ in pairs), pairs
    assert_agree(run_plan_both(prepare(text), "main", vectors), f"{name}, default limits")


def _sweep(text: str, args: list[object], limit: str, values: range, **room: int) -> None:
    sweep_limit(prepare(text), args, limit, values, lambda **swept: policy(**{**room, **swept}))


_SMALL_ARGS: dict[str, list[object]] = {
    "digits": [30, 7],
    "literals": [31],
    "locals": [30, "\U0001f601z"],
    "mixed": [30, 9],
}


def _needed(name: str, field: str) -> int:
    text = KERNELS[name][0]
    plan = dataclasses.replace(prepare(text), policy=policy(**_ROOMY))
    used: int = SandboxHost().execute(plan, "main", _SMALL_ARGS[name]).usage.to_json()[field]
    return used


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_owned_strings_fail_at_the_same_charge_for_every_fuel_budget(name: str) -> None:
    needed = _needed(name, "fuelUsed")
    room = {k: v for k, v in _ROOMY.items() if k != "max_fuel"}
    _sweep(KERNELS[name][0], _SMALL_ARGS[name], "max_fuel", range(needed - 900, needed + 2), **room)


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize(
    ("limit", "field", "step"),
    [
        ("max_host_calls", "hostCalls", 1),
        ("max_total_string_bytes", "stringBytes", 7),
        ("max_allocated_bytes", "allocatedBytes", 7),
    ],
)
def test_owned_strings_refuse_each_text_limit_exactly_where_the_reference_does(
    name: str, limit: str, field: str, step: int
) -> None:
    needed = _needed(name, field)
    room = {k: v for k, v in _ROOMY.items() if k != limit}
    _sweep(KERNELS[name][0], _SMALL_ARGS[name], limit, range(0, needed + 2 * step, step), **room)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_owned_strings_refuse_the_string_length_exactly_where_the_reference_does(name: str) -> None:
    room = {k: v for k, v in _ROOMY.items() if k != "max_string_length"}
    _sweep(KERNELS[name][0], _SMALL_ARGS[name], "max_string_length", range(0, 260), **room)


def test_owned_string_refusals_past_a_chunk_boundary_agree() -> None:
    """Refusals after the first chunks: earlier chunks' pieces were settled at each reservation."""
    room = {k: v for k, v in _ROOMY.items() if k != "max_string_length"}
    _sweep(DIGITS, [3000, 1], "max_string_length", range(9000, 30000, 997), **room)
    room = {k: v for k, v in _ROOMY.items() if k != "max_host_calls"}
    _sweep(LITERALS, [5000], "max_host_calls", range(2040, 5300, 211), **room)


def test_the_loop_budget_inside_an_owned_string_loop_agrees() -> None:
    room = {k: v for k, v in _ROOMY.items() if k != "max_loop_iterations"}
    _sweep(LOCALS, [9000, "ab"], "max_loop_iterations", range(2000, 8000, 373), **room)


def test_an_arithmetic_fault_inside_an_owned_chunk_settles_the_pieces_before_it() -> None:
    """``i * m`` overflows part way through the loop: the error, its location and the string bytes,
    allocation and host calls of the concatenations made before it are the reference's."""
    pairs = run_plan_both(prepare(DIGITS), "main", [[3000, 2_000_000], [100, 2**31 - 1]])
    assert_agree(pairs, "fault in an owned chunk")
    assert all(reference["error"] is not None for reference, _ in pairs)


def test_cancellation_during_an_owned_string_loop_leaves_usage_settled() -> None:
    """A run cancelled while it concatenates stops at a chunk reservation with every piece made so
    far charged: its string bytes, allocation and host calls are exactly those of its pieces."""
    plan = dataclasses.replace(prepare(STRBUILD), policy=policy(**{**_ROOMY, "max_loop_iterations": 10**9}))
    usage = cancelled_usage(plan, [50_000_000])
    pieces = usage[
        "loopIterations"
    ]  # one one-digit piece per iteration; the cancelled reservation charged none
    assert pieces > 0
    text_bytes = sum(costs.string_bytes(1) + costs.string_bytes(length) for length in range(1, pieces + 1))
    assert usage["stringBytes"] == usage["allocatedBytes"] == text_bytes
    assert usage["hostCalls"] == 2 * pieces


_PIECE_LIMITS = (
    "max_fuel",
    "max_host_calls",
    "max_string_length",
    "max_total_string_bytes",
    "max_allocated_bytes",
)
_LOCALS_PLAN = prepare(LOCALS)


@settings(max_examples=40, deadline=None)
@given(
    sep=st.text(alphabet="a\u00e9\U0001f601", max_size=3),
    n=st.integers(0, 60),
    limit=st.sampled_from(_PIECE_LIMITS),
    cut=st.integers(0, 10_000),
)
def test_random_pieces_and_limits_agree(sep: str, n: int, limit: str, cut: int) -> None:
    """Any local piece (astral characters, empty) under any one limit set anywhere up to what the
    run needs: the same value or error, location and usage on both backends."""
    host = SandboxHost(backends={"optimized": backend()})
    room = {k: v for k, v in _ROOMY.items() if k != limit}
    plan = dataclasses.replace(_LOCALS_PLAN, policy=policy(**room))
    field = {
        "max_fuel": "fuelUsed",
        "max_host_calls": "hostCalls",
        "max_total_string_bytes": "stringBytes",
        "max_allocated_bytes": "allocatedBytes",
    }.get(limit)
    full = host.execute(plan, "main", [n, sep])
    needed = full.usage.to_json()[field] if field else (full.value or 0)
    value = cut % (needed + 2)
    plan = dataclasses.replace(_LOCALS_PLAN, policy=policy(**{**room, limit: value}))
    reference = observe(host.execute(plan, "main", [n, sep]))
    optimized = observe(host.execute(plan, "main", [n, sep], backend="optimized"))
    assert reference == optimized, (limit, value)


# --- the settlement against the meter's own stepwise answer ------------------------------------


def _meter() -> Meter:
    return Meter(MeterLimits.from_object(policy(**_ROOMY).limits))


_NUMBERS = ["0", "-12", "7", "2147483647"]
_TEXTS = ["a", "", ",", "\u00e9", "\U0001d11e", "x-y"]


def _stepwise(meter: Meter, start: int, pieces: list[str], kind: int, units: list[int]) -> None:
    """Each piece as the fast stubs charge it, one call at a time (``Meter.settle_text_call``);
    in a mixed loop a piece that reads as a number came from ``int32.toStringInvariant``."""
    concat = costs.BUILTIN_COSTS["string.concatBudgeted"]
    to_string = costs.BUILTIN_COSTS["int32.toStringInvariant"]
    walk = costs.shape_walk_fuel(1)
    length = start
    for piece, size in zip(pieces, units, strict=True):
        if kind == FROM_INT or (kind == FROM_MIXED and piece in _NUMBERS):
            fixed = (1 if to_string.base else 0) + (1 if walk else 0)
            assert meter.settle_text_call("int32.toStringInvariant", 10**9, fixed, size)
        elif kind in (FROM_LITERAL, FROM_MIXED):
            assert meter.settle_text(10**9, 1 if walk else 0, size)
        length += size
        byte_fuel = concat.per_result_byte * costs.string_bytes(length)
        fixed = (1 if concat.base else 0) + (1 if walk else 0) + (1 if byte_fuel else 0)
        assert meter.settle_text_call("string.concatBudgeted", 10**9, fixed, length), piece


def _counters(meter: Meter) -> tuple[object, ...]:
    return (
        meter.string_bytes,
        meter.allocated_bytes,
        meter.host_calls,
        dict(meter.calls_by_binding),
        meter._fuel_ticks,
    )


@pytest.mark.parametrize("kind", [FROM_INT, FROM_LITERAL, FROM_LOCAL, FROM_MIXED])
@pytest.mark.parametrize("seed", range(6))
def test_settlement_is_the_sum_of_the_concatenations_one_by_one(kind: int, seed: int) -> None:
    """``text_parts.settle`` (closed over the pieces, in chunks) against the meter charging each
    concatenation through ``settle_text_call``: string bytes, allocation, host calls by built-in and
    the deadline cadence, with empty pieces, astral characters and empty starts."""
    rng = random.Random(seed * 7 + kind)
    alphabet = {FROM_INT: _NUMBERS, FROM_MIXED: _NUMBERS + _TEXTS}.get(kind, [*_TEXTS, "-7", "123"])
    start = rng.choice(["", "x", "\U0001f601"])
    pieces = [rng.choice(alphabet) for _ in range(rng.randrange(0, 300))]
    units = [len(piece.encode("utf-16-le")) // 2 for piece in pieces]  # measured independently
    chunked, stepwise = _meter(), _meter()
    record = TextParts([start], kind)
    if kind in (FROM_LITERAL, FROM_MIXED):  # what _s_tlit records as it fetches the loop's literals
        record.literals.update(
            (text, len(text.encode("utf-16-le")) // 2) for text in alphabet if text not in _NUMBERS
        )
    cut = 0
    while cut < len(pieces):
        more = rng.randrange(1, 80)
        record.parts.extend(pieces[cut : cut + more])
        settle(chunked, record)
        cut += more
    _stepwise(stepwise, len(start.encode("utf-16-le")) // 2, pieces, kind, units)
    assert _counters(chunked) == _counters(stepwise)
    assert record.length == (len(start.encode("utf-16-le")) + sum(units) * 2) // 2


@pytest.mark.parametrize(
    "limit", ["max_string_length", "max_total_string_bytes", "max_allocated_bytes", "max_host_calls"]
)
def test_settlement_refuses_pieces_that_skipped_the_inline_checks(limit: str) -> None:
    """Defence in depth for the verifier: pieces appended past a limit (as only code that skipped the
    inline checks could) make the settlement refuse the run, leaving the meter as it was."""
    meter = Meter(MeterLimits.from_object(policy(**{**_ROOMY, limit: 20}).limits))
    record = TextParts(["\U0001f601"], FROM_LITERAL)
    record.parts.extend(["abcd"] * 24)
    before = _counters(meter)
    with pytest.raises(SandboxError) as refused:
        settle(meter, record)
    assert refused.value.code == "R-HOST-INTERNAL"
    assert _counters(meter) == before and record.done == 1


# --- what the proof refuses --------------------------------------------------------------------

NOT_OWNED = {
    "a parameter": """module "m" version "1.0.0";
entrypoint fn main(s String, n I32) -> I32 {
    for i in 0 .. n { s = string.concatBudgeted(s, "a"); }
    return string.length(s);
}""",
    "an alias": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    t = s;
    for i in 0 .. n { s = string.concatBudgeted(s, "a"); }
    return string.length(s) + string.length(t);
}""",
    "read inside the loop": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    for i in 0 .. n { s = string.concatBudgeted(s, int32.toStringInvariant(string.length(s))); }
    return string.length(s);
}""",
    "a numeric literal among numbers": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    for i in 0 .. n { s = string.concatBudgeted(s, int32.toStringInvariant(i)); s = string.concatBudgeted(s, "7"); }
    return string.length(s);
}""",
    "a local among numbers": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    t = ",";
    for i in 0 .. n { s = string.concatBudgeted(s, int32.toStringInvariant(i)); s = string.concatBudgeted(s, t); }
    return string.length(s);
}""",
    "a function argument": """module "m" version "1.0.0";
fn size(s String) -> I32 { return string.length(s); }
entrypoint fn main(n I32) -> I32 {
    s = "";
    for i in 0 .. n { s = string.concatBudgeted(s, "ab"); }
    return size(s);
}""",
    "another text call in the body": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    t = "";
    for i in 0 .. n { s = string.concatBudgeted(s, "ab"); t = string.concatBudgeted(t, "c"); }
    return string.length(s) + string.length(t);
}""",
    "a piece of another producer": """module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    for i in 0 .. n { s = string.concatBudgeted(s, string.substringBudgeted("abc", 0, i % 3)); }
    return string.length(s);
}""",
}


@pytest.mark.parametrize("name", sorted(NOT_OWNED))
def test_texts_the_proof_cannot_own_keep_the_exact_stubs(name: str) -> None:
    assert_kept_exact(NOT_OWNED[name], name, take="_s_sown", stub="_s_cat(", parameter="xy")


# --- the verifier ------------------------------------------------------------------------------

_DIGITS = Tampering(DIGITS)
_LITERALS = Tampering(LITERALS)


TAMPERED = {
    "parts read as a value": ("v2 = _s_smat(R, p0)", "v2 = p0"),
    "parts returned": ("v2 = _s_smat(R, p1)", "return (p1, f)"),
    "parts aliased": ("v2 = _s_smat(R, p0)", "t99 = p0"),
    "parts taken into a slot": (
        "p0, t0, t1, t2, t3 = _s_sown(R, v2, 0)",
        "t99, t0, t1, t2, t3 = _s_sown(R, v2, 0)",
    ),
    "parts from elsewhere": (
        "p0, t0, t1, t2, t3 = _s_sown(R, v2, 0)",
        "p0, t0, t1, t2, t3 = (v2, 0, 0, 0, 0)",
    ),
    "take unpacked short": ("p0, t0, t1, t2, t3 = _s_sown(R, v2, 0)", "p0, t0 = _s_sown(R, v2, 0)"),
    "take of an unknown producer": ("_s_sown(R, v2, 0)", "_s_sown(R, v2, 7)"),
    "parts passed to another stub": ("_s_smat(R, p0)", "_s_lmat(R, p0)"),
    "parts pushed as a list buffer": ("_p_part(p0,", "_p_push(p0,"),
    "part appended to a value": ("_p_part(p0,", "_p_part(v2,"),
    "part appended with an extra argument": ("_p_part(p0,", "_p_part(p0, 1,"),
    "parts passed as the piece": ("_p_part(p0, t6)", "_p_part(p0, p0)"),
    "parts never taken": ("_p_part(p0,", "_p_part(p7,"),
    "exact path off its site": (", 6, 7, p0, t5)", ", 99999, 7, p0, t5)"),
    "exact path off its concat site": (", 6, 7, p0, t5)", ", 6, 99999, p0, t5)"),
    "exact path without the parts": ("p0, t5)", "v2, t5)"),
    "parts measured as a value": ("t7 = _p_slen(t6)", "t7 = _p_slen(p0)"),
    "parts given to a pure helper": ("t6 = _p_i2s(t5)", "t6 = _p_i2s(p0)"),
    "parts rebound under another parts name": ("v2 = _s_smat(R, p0)", "p5 = p0"),
    "a piece appended without its checks": (
        "if f >= t9 and t1 >= 2 and (t8 <= t2) and (t3 >= t10):",
        "if f >= t9:",
    ),
    "length checked against the room": ("(t8 <= t2)", "(t8 <= t3)"),
    "room not moved on": ("t3 = t3 - t10", "t3 = t3 - 0"),
    "length not moved on": ("t0 = t8", "t0 = t0"),
    "host calls not counted": ("t1 = t1 - 2", "t1 = t1 - 0"),
    "fuel not charged": ("f = f - t9", "f = f - 0"),
    "a second piece after the checks": (
        "_p_part(p0, t6)",
        "_p_part(p0, t6)\n                    _p_part(p0, t6)",
    ),
    "take called for its value": ("v2 = _s_smat(R, p0)", "v2 = _s_sown(R, v2, 0)"),
    "take without the run state": ("_s_sown(R, v2, 0)", "_s_sown(f, v2, 0)"),
    "take of a stub": ("_s_sown(R, v2, 0)", "_s_sown(R, _s_smat, 0)"),
}


def test_the_untampered_owned_text_modules_pass() -> None:
    _DIGITS.bind()
    _LITERALS.bind()


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_a_tampered_parts_list_form_is_rejected(name: str) -> None:
    _DIGITS.assert_rejected(*TAMPERED[name])


@pytest.mark.parametrize(
    ("rewrite", "replacement"),
    [
        ("_s_tlit(R, 1)", "_s_tlit(R, 999)"),
        ("_s_tlit(R, 1)", "_s_tlit(R, t0)"),
        ("_s_tlit(R, 1)", "_s_tlit(R)"),
    ],
)
def test_a_tampered_literal_text_fetch_is_rejected(rewrite: str, replacement: str) -> None:
    _LITERALS.assert_rejected(rewrite, replacement)
