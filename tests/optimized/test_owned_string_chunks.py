"""Pre-checked fast chunks of owned strings (``text_chunk``, ``codegen_strchunk``, issue 16).

A forRange loop whose whole body is one owned concatenation of a number's text or a literal checks
the worst case of each chunk once (``_s_strfits``) and then only appends; ``_s_strdone`` settles
the chunk's pieces and charges their fuel. Here: which loops take the form; every observable
against the reference at every fuel budget around a refusal and at every text limit, with chunks
run fast before the refusing one and the refusal inside a chunk; the stubs' arithmetic against
the checked form's per-concatenation charges; the stubs refusing pieces that skipped the check;
and the verifier refusing tampered forms (rule 21).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable

import pytest

from dotboxd.core import costs
from dotboxd.host import SandboxHost
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import Meter, MeterLimits
from dotboxd.runtime.optimized.owned_text import FROM_INT, FROM_LITERAL, FROM_LOCAL
from dotboxd.runtime.optimized.text_chunk import NUMBER_UNITS, done, fits, rooms
from dotboxd.runtime.optimized.text_parts import UNIT_FUEL, TextParts
from tests.benchmarks.workloads import STRBUILD

from .differential import assert_agree, run_plan_both, sweep_limit
from .kernels import policy, prepare
from .owned_harness import CHUNK_ROOM, source_of
from .tampering import Tampering

NUMBERS = """module "numbers" version "1.0.0";
entrypoint fn main(n I32, m I32) -> I32 {
    s = "";
    for i in m .. m + n { s = string.concatBudgeted(s, int32.toStringInvariant(i)); }
    return string.length(s);
}"""
"""Pieces of 1 to 8 units, negative ones included: the worst case (11) is never the actual."""

WORDS = """module "words" version "1.0.0";
entrypoint fn main(n I32) -> String {
    s = "\U0001d11e";
    for i in 0 .. n { s = string.concatBudgeted(s, "\u00e9\U0001d11e"); }
    return s;
}"""
"""A literal piece with an astral character (3 UTF-16 units), onto an astral start."""

DIGITS = """module "digits" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    for i in 0 .. n { s = string.concatBudgeted(s, int32.toStringInvariant(i - i % 10)); }
    return string.length(s);
}"""
"""A piece whose operand is arithmetic the checked form evaluates without a check (the difference
of two non-negative values; ``%`` by a positive constant)."""

KERNELS = {"numbers": NUMBERS, "words": WORDS, "digits": DIGITS, "string_build": STRBUILD}

_ROOMY = {**CHUNK_ROOM, "max_total_string_bytes": 10**12, "max_string_length": 10**7, "max_host_calls": 10**7}
"""Limits no run of the sweeps reaches but the one swept."""

LONG = 5000
"""Iterations of the sweeps across chunks: two chunks of 2,048, then the rest."""
_FIRST = 2048
_NUMBERS_FIXED = 14
"""The fixed fuel of an iteration of ``NUMBERS`` (its ``_s_strfits`` constant)."""


def _args(name: str, n: int) -> list[object]:
    """``numbers`` counts from -1,000,000 on the long runs (8-unit pieces: the text outgrows a first
    chunk's worst case, so the sweeps near the end run that chunk fast)."""
    if name == "numbers":
        return [n, -1_000_000] if n > 100 else [n, -n // 2]
    return [n]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_single_concatenation_loops_take_the_pre_checked_chunk(name: str) -> None:
    source = source_of(KERNELS[name])
    assert source.count("_s_strfits(") == 1 and source.count("_s_strdone(") == 1, source
    assert source.count("_p_part(") == 2, source  # the fast chunk's and the checked form's


@pytest.mark.parametrize(
    "text",
    [
        # two concatenations per iteration, a branch, a while loop, a local piece, overflow checks
        'for i in 0 .. n { s = string.concatBudgeted(s, "a"); s = string.concatBudgeted(s, "b"); }',
        'for i in 0 .. n { if i % 2 == 0 { s = string.concatBudgeted(s, "a"); } }',
        'i = 0; while i < n { s = string.concatBudgeted(s, "a"); i = i + 1; }',
        't = "ab"; for i in 0 .. n { s = string.concatBudgeted(s, t); }',
        "for i in 0 .. n { s = string.concatBudgeted(s, int32.toStringInvariant(i * n)); }",
        # (``i % 10 * 7 + 3`` was one too until value ranges proved it cannot overflow: it runs fast now)
        "for i in 0 .. n { s = string.concatBudgeted(s, int32.toStringInvariant(i * 7 + 3)); }",
    ],
)
def test_other_owned_loops_keep_the_checked_form_only(text: str) -> None:
    kernel = f"""module "m" version "1.0.0";
entrypoint fn main(n I32) -> I32 {{
    s = "";
    {text}
    return string.length(s);
}}"""
    source = source_of(kernel)
    assert "_s_sown(" in source and "_s_strfits(" not in source and "_s_strdone(" not in source, source
    pairs = run_plan_both(prepare(kernel, policy(**_ROOMY)), "main", [[0], [7], [3000]])
    assert_agree(pairs, text)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_pre_checked_chunks_agree_with_the_reference(name: str) -> None:
    """Chunk sizes around the 2,048 a reservation gives, under roomy and default limits."""
    sizes = (0, 1, 2, 2047, 2048, 2049, LONG) if name != "words" else (0, 1, 2, 2048, 2049)
    vectors = [_args(name, n) for n in sizes]
    if name == "numbers":
        vectors += [[3000, -1500], [3000, 2**31 - 3001], [2, -(2**31)]]
    text = KERNELS[name]
    pairs = run_plan_both(prepare(text, policy(**_ROOMY)), "main", vectors)
    assert_agree(pairs, name)
    assert all(reference["error"] is None for reference, _ in pairs), pairs
    assert_agree(run_plan_both(prepare(text), "main", vectors), f"{name}, default limits")


def _used(name: str, n: int) -> dict[str, int]:
    plan = dataclasses.replace(prepare(KERNELS[name]), policy=policy(**_ROOMY))
    result = SandboxHost().execute(plan, "main", _args(name, n))
    usage: dict[str, int] = result.usage.to_json()
    value = result.value
    usage["stringLength"] = value if isinstance(value, int) else len(value.encode("utf-16-le")) // 2
    return usage


def _sweep(name: str, n: int, limit: str, values: Iterable[int]) -> None:
    room = {k: v for k, v in _ROOMY.items() if k != limit}
    sweep_limit(
        prepare(KERNELS[name]), _args(name, n), limit, values, lambda **swept: policy(**{**room, **swept})
    )


_FIRST_WORST = {
    "fuelUsed": costs.text_appends_fuel(0, NUMBER_UNITS, _FIRST, _NUMBERS_FIXED),
    "hostCalls": 2 * _FIRST,
    "stringBytes": costs.string_bytes(costs.text_appends_result_units(0, NUMBER_UNITS, _FIRST) + 11 * _FIRST),
    "stringLength": NUMBER_UNITS * _FIRST,
}
"""What ``_s_strfits`` needs for ``NUMBERS``' first chunk (from an empty text): any budget above it
runs that chunk fast."""
_FIRST_WORST["allocatedBytes"] = _FIRST_WORST["stringBytes"]


@pytest.mark.parametrize(("name", "n"), [("numbers", 40), ("words", 40), ("numbers", LONG)])
def test_every_fuel_budget_around_the_refusal_agrees(name: str, n: int) -> None:
    """At ``LONG`` iterations the first chunks run fast and the last one fails its worst case, then
    the checked form refuses exactly the charge the reference refuses."""
    needed = _used(name, n)["fuelUsed"]
    if n == LONG:
        assert needed - 60 > _FIRST_WORST["fuelUsed"] + 100  # the first chunk ran fast in every run
    _sweep(name, n, "max_fuel", range(needed - 60, needed + 2))


@pytest.mark.parametrize(("name", "n"), [("numbers", LONG), ("words", 2100)])
def test_fuel_budgets_across_the_chunks_agree(name: str, n: int) -> None:
    """Budgets that run out in every chunk: a chunk whose worst case does not fit runs checked from
    its start, so the refusal is exact wherever it falls."""
    needed = _used(name, n)["fuelUsed"]
    _sweep(name, n, "max_fuel", [*range(needed // 9, needed, needed // 11), needed, needed + 1])


@pytest.mark.parametrize(
    ("limit", "field"),
    [
        ("max_host_calls", "hostCalls"),
        ("max_total_string_bytes", "stringBytes"),
        ("max_allocated_bytes", "allocatedBytes"),
        ("max_string_length", "stringLength"),
    ],
)
@pytest.mark.parametrize(("name", "n"), [("numbers", LONG), ("words", 300)])
def test_each_text_limit_refuses_where_the_reference_does(name: str, n: int, limit: str, field: str) -> None:
    """Each limit swept across the chunks (coarse), then at every value around the refusal (where,
    on the long run, the first chunk ran fast)."""
    needed = _used(name, n)[field]
    if n == LONG:
        assert needed - 20 > _FIRST_WORST[field]
    coarse = range(needed // 9, needed - 20, max(1, needed // 8))
    _sweep(name, n, limit, [*coarse, *range(needed - 20, needed + 3)])


def test_the_loop_budget_cuts_pre_checked_chunks_exactly() -> None:
    _sweep("numbers", LONG, "max_loop_iterations", [*range(1000, LONG, 317), LONG - 1, LONG, LONG + 1])


# --- the stubs' arithmetic ----------------------------------------------------------------------


class _State:
    """The two fields of a run state the chunk stubs read."""

    def __init__(self, meter: Meter, record: TextParts) -> None:
        self.meter = meter
        self.owned_text = record


def _state(start: str, kind: int, **limits: int) -> _State:
    meter = Meter(MeterLimits.from_object(policy(**{**_ROOMY, **limits}).limits))
    return _State(meter, TextParts([start], kind))


def _checked_fuel(start: int, pieces: list[str], fixed: int) -> int:
    """What the checked form charges: ``fixed + 2 c`` per concatenation, ``c`` its result's units."""
    total, length = 0, start
    for piece in pieces:
        length += len(piece)
        total += fixed + UNIT_FUEL * length
    return total


@pytest.mark.parametrize("seed", range(8))
def test_a_chunk_charges_the_checked_forms_fuel_and_hands_back_its_locals(seed: int) -> None:
    rng = random.Random(seed)
    state = _state("x" * rng.randrange(0, 50), FROM_INT)
    record = state.owned_text
    f = 10**9
    for _ in range(rng.randrange(1, 5)):
        n = rng.randrange(1, 300)
        assert fits(state, f, n, 16, NUMBER_UNITS)
        pieces = [str(rng.randrange(-(2**31), 2**31)) for _ in range(n)]
        expected = f - _checked_fuel(record.length, pieces, 16)
        record.parts.extend(pieces)
        f, length, calls, room = done(state, f, record.parts, 16)
        assert f == expected and length == record.length == sum(map(len, record.parts))
        assert (calls, room) == rooms(state.meter)


@pytest.mark.parametrize("n", [1, 2, 3, 64, 2048])
@pytest.mark.parametrize("start", [0, 5, 10_000])
def test_the_worst_case_is_exactly_the_rooms_a_chunk_of_longest_pieces_needs(n: int, start: int) -> None:
    """``fits`` admits a chunk whose longest pieces just fit and refuses one unit (or fuel) less."""
    fuel = _checked_fuel(start, ["-2147483648"] * n, 16)
    results = costs.text_appends_result_units(start, NUMBER_UNITS, n)
    bytes_ = costs.string_bytes(results + NUMBER_UNITS * n)  # the start's were charged before
    tight = {
        "max_host_calls": 2 * n,
        "max_string_length": start + NUMBER_UNITS * n,
        "max_total_string_bytes": bytes_,
        "max_allocated_bytes": bytes_,
    }
    assert fits(_state("y" * start, FROM_INT, **tight), fuel, n, 16, NUMBER_UNITS)
    assert not fits(_state("y" * start, FROM_INT, **tight), fuel - 1, n, 16, NUMBER_UNITS)
    for limit, value in tight.items():
        less = value - (costs.string_bytes(1) if "bytes" in limit else 1)  # one unit less
        assert not fits(_state("y" * start, FROM_INT, **{**tight, limit: less}), fuel, n, 16, NUMBER_UNITS)


def test_fits_declines_what_it_cannot_bound() -> None:
    assert not fits(_state("", FROM_INT), 10**9, 0, 16, NUMBER_UNITS)  # nothing reserved
    assert not fits(_state("", FROM_LOCAL), 10**9, 10, 16, 5)  # a local's length is unbounded
    assert fits(_state("", FROM_LITERAL), 10**9, 10, 9, 3)


@pytest.mark.parametrize(
    ("limit", "value"),
    [
        ("max_string_length", 20),
        ("max_total_string_bytes", 40),
        ("max_allocated_bytes", 40),
        ("max_host_calls", 10),
        ("max_fuel", 0),
    ],
)
def test_done_refuses_pieces_the_worst_case_did_not_cover(limit: str, value: int) -> None:
    """Defence in depth for rule 21: a chunk that ran past a limit (only a tampered ``fits``, pieces
    longer than its ``most`` or more of them than it checked could) fails the run closed, whatever
    went past."""
    state = _state("", FROM_INT, **({} if limit == "max_fuel" else {limit: value}))
    f = 10**6 if limit != "max_fuel" else 100
    assert fits(state, f, 5, 16, 0)  # a lie: more pieces than 5 follow, each longer than 0 units
    state.owned_text.parts.extend(["1234"] * 24)
    with pytest.raises(SandboxError) as refused:
        done(state, f, state.owned_text.parts, 16)
    assert refused.value.code == "R-HOST-INTERNAL"


def test_done_refuses_a_chunk_that_fits_did_not_start() -> None:
    state = _state("", FROM_INT)
    state.owned_text.parts.append("1")
    with pytest.raises(SandboxError, match="did not start"):
        done(state, 10**6, state.owned_text.parts, 16)
    assert fits(state, 10**6, 3, 16, NUMBER_UNITS)
    with pytest.raises(SandboxError, match="did not start"):
        done(state, 10**6, [""], 16)  # another list than the text's


# --- the verifier (rule 21) ----------------------------------------------------------------------

_NUMBERS = Tampering(NUMBERS)
_FITS = "if _s_strfits(R, f, n0, 14, 11):"
_APPEND = "                _p_part(p0, _p_strchunk_i2s(v3))\n"
_DONE = "f, t1, t2, t4 = _s_strdone(R, f, p0, 14)"

TAMPERED: dict[str, tuple[str, str]] = {
    "appends without the check": (_FITS, "if f > 0:"),
    "checks another count": (_FITS, "if _s_strfits(R, f, v0, 14, 11):"),
    "checks a slot for the fuel": (_FITS, "if _s_strfits(R, t0, n0, 14, 11):"),
    "a negative bound": (_FITS, "if _s_strfits(R, f, n0, 14, -1):"),
    "a bound that is not a constant": (_FITS, "if _s_strfits(R, f, n0, 14, t2):"),
    "a chunk past the reservation": (
        f"for v3 in _range(k0, k0 + n0):\n{_APPEND}",
        f"for v3 in _range(k0, k0 + n0 + 1):\n{_APPEND}",
    ),
    "two appends per iteration": (_APPEND, _APPEND + _APPEND),
    "a chunk from another start": (
        f"for v3 in _range(k0, k0 + n0):\n{_APPEND}",
        f"for v3 in _range(t3, t3 + n0):\n{_APPEND}",
    ),
    "appends the parts list": (_APPEND, "                _p_part(p0, p0)\n"),
    "appends another call's text": (_APPEND, "                _p_part(p0, _p_i2s(v3))\n"),
    "the number's text elsewhere": (
        "v2 = _s_smat(R, p0)",
        "t9 = _p_strchunk_i2s(v0)\n    v2 = _s_smat(R, p0)",
    ),
    "appends a stub's result": (_APPEND, "                _p_part(p0, _s_smat(R, p0))\n"),
    "settles with less fuel": (_DONE, "f, t1, t2, t4 = _s_strdone(R, f, p0, 0)"),
    "hands back into other slots": (_DONE, "f, t1, t3, t4 = _s_strdone(R, f, p0, 14)"),
    "keeps the fuel it was charged": (_DONE, "t5, t1, t2, t4 = _s_strdone(R, f, p0, 14)"),
    "does not move past the chunk": (
        _DONE + "\n            k0 = k0 + n0",
        _DONE + "\n            k0 = k0 + 1",
    ),
    "an else on the chunk": (
        "            continue\n        for",
        "            continue\n        else:\n            f = f - 1\n        for",
    ),
    "fits as a statement": ("v2 = _s_smat(R, p0)", "_s_strfits(R, f, 1, 14, 11)\n    v2 = _s_smat(R, p0)"),
    "done outside the chunk": ("v2 = _s_smat(R, p0)", f"{_DONE}\n    v2 = _s_smat(R, p0)"),
    "a chunk away from its reservation": (
        "n0 = _s_cap(R, f, d, lr, k0, t0, 0, 0, 6, 0)\n",
        "n0 = _s_cap(R, f, d, lr, k0, t0, 0, 0, 6, 0)\n        t9 = 0\n",
    ),
}


def test_the_untampered_fast_chunk_modules_pass() -> None:
    _NUMBERS.bind()
    Tampering(WORDS).bind()
    Tampering(STRBUILD).bind()


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_a_tampered_fast_text_chunk_is_rejected(name: str) -> None:
    _NUMBERS.assert_rejected(*TAMPERED[name])
