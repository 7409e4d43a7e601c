"""Owned maps inside a branch of ``if map.containsKey(m, k)``: the forms on ``k`` use what the test
found (``owned_map_code.KnownKey``) instead of testing the key again, and must still fail and charge
exactly where the reference does - including where the key slot is reassigned, another key is set,
or a branch nests, which must drop what is known (issue 16)."""

from __future__ import annotations

from dotboxd.host import SandboxHost

from .differential import assert_agree, backend, run_plan_both, sweep_limit
from .kernels import prepare
from .owned_harness import source_of

COUNT = """module "known" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    tally = map.empty[Map<I32, I32>]();
    for i in 0 .. n {
        k = i * 13 % 19;
        if map.containsKey(tally, k) {
            seen = map.get(tally, k);
            tally = map.set(tally, k, seen + i);
            tally = map.set(tally, k, map.get(tally, k) - 1);
        } else {
            tally = map.set(tally, k, i);
            tally = map.set(tally, k, map.get(tally, k) + 1);
        }
    }
    return map.get(tally, 3) % 1000 * 100 + map.count(tally);
}"""
"""The key stays known across a local assigned from a read and across sets of the key itself (in
the absent branch the first set makes it present)."""

SHIFTED = """module "shifted" version "1.0.0";
entrypoint fn main(n I32, step I32) -> I32 {
    counts = map.empty[Map<I32, I32>]();
    for i in 0 .. n {
        k = i % 7;
        if map.containsKey(counts, k) {
            k = k + step;
            counts = map.set(counts, k, map.get(counts, k) + 1);
        } else {
            counts = map.set(counts, k * 2 + 1, i);
            counts = map.set(counts, k, map.count(counts));
            if k > 2 { counts = map.set(counts, k + 10, 1); }
            counts = map.set(counts, k + 10, i);
        }
    }
    return map.count(counts) * 1000 + map.get(counts, 0);
}"""
"""Every way what the test found stops being true: the key slot reassigned (then ``map.get`` may
miss: NotFound), another key set while the key was absent, and a nested branch."""

WORDS = """module "words" version "1.0.0";
entrypoint fn main(words List<String>) -> I32 {
    counts = map.empty[Map<String, I32>]();
    for i in 0 .. list.count(words) {
        w = list.get(words, i);
        if map.containsKey(counts, w) { counts = map.set(counts, w, map.get(counts, w) + 1); }
        else { counts = map.set(counts, w, 1); }
    }
    return map.count(counts) * 1000 + map.get(counts, "the");
}"""


def test_the_known_branches_test_the_key_once() -> None:
    """COUNT's loop tests ``k in m0`` once (the containsKey); every get and set uses the answer. The
    loop body stands twice - the pre-checked copy (``mapchunk``) and the checked chunk - and each
    copy tests once."""
    source = source_of(COUNT)
    assert "_s_mown(" in source, source
    assert source.count("_p_mcfit(") == 1, source
    assert source.count(" in m0") == 2, source
    assert " not in m0" not in source, source


def test_what_stops_being_known_is_tested_again() -> None:
    """SHIFTED: the get after ``k = k + step`` tests the key, and so do the sets after a set of
    another key and the one after the nested branch."""
    source = source_of(SHIFTED)
    assert "_s_mown(" in source, source
    loop = source[source.index("_s_mown(") : source.index("_s_mmat(")]
    copies = 1 + loop.count("_p_mcfit(")  # the pre-checked copy of the body (``mapchunk``), if any
    assert copies == 2, loop
    assert loop.count(" in m0") - loop.count(" not in m0") == 2 * copies, loop  # the containsKey and the get
    assert loop.count(" not in m0") == 5 * copies, loop  # every set: none is on the known key while known


def test_known_key_loops_agree_with_the_reference() -> None:
    assert_agree(run_plan_both(prepare(COUNT), "main", [[0], [1], [19], [20], [500], [5000]]), "known keys")
    vectors = [[0, 0], [7, 0], [8, 0], [30, 1], [8, 20], [100, 3]]
    pairs = run_plan_both(prepare(SHIFTED), "main", vectors)
    assert_agree(pairs, "known keys dropped")
    assert pairs[4][0]["error"] is not None and pairs[4][0]["error"][1] == "R-MAP-KEY-MISSING"


def test_known_key_loops_fail_at_the_same_charge_for_every_fuel_budget() -> None:
    host = SandboxHost(backends={"optimized": backend()})
    for text, args in ((COUNT, [40]), (SHIFTED, [16, 0])):
        needed = host.execute(prepare(text), "main", args).usage.fuel_used
        sweep_limit(prepare(text), args, "max_fuel", range(0, needed + 2))


def test_known_key_loops_refuse_every_limit_where_the_reference_does() -> None:
    """Each counter swept from 0 past what the run uses (about 150 steps), on both kernels."""
    for text, args in ((COUNT, [40]), (SHIFTED, [16, 0])):
        usage = SandboxHost().execute(prepare(text), "main", args).usage.to_json()
        for limit, field in (
            ("max_allocated_bytes", "allocatedBytes"),
            ("max_total_collection_elements", "collectionElements"),
        ):
            needed = usage[field]
            values = [*range(0, needed, max(1, needed // 150)), needed - 1, needed]
            sweep_limit(prepare(text), args, limit, values)
        sweep_limit(prepare(text), args, "max_map_entries", range(0, 25))
        sweep_limit(prepare(text), args, "max_collection_depth", range(0, 3))


def test_text_keys_in_known_branches_charge_their_bytes_exactly() -> None:
    from dotboxd.core.values import ListValue

    words = ListValue(["the", "cat", "the", "ünïcode", "😀", "the", "cat", "end"])
    assert " not in m0" not in source_of(WORDS)
    for limit, values in (
        ("max_allocated_bytes", range(0, 2500, 5)),
        ("max_total_string_bytes", range(0, 400, 2)),
        ("max_string_length", range(0, 10)),
        ("max_map_entries", range(0, 8)),
    ):
        sweep_limit(prepare(WORDS), [words], limit, values)
