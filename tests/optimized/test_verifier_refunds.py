"""Tampered-AST tests: every call's loop refund is tied to its chunk (verifier rule 19, issue 16).

A call that may fail inside a bulk chunk hands the meter ``lr`` plus the iterations the chunk
reserved and has not started; outside a chunk, ``lr`` itself. A bigger refund would let a failed run
report fewer loop iterations than it used, a smaller one more. Each test rewrites one refund of a
real generated module (through its source text, as the disk cache stores it) and expects ``bind`` to
refuse it: a failure stub (``_s_fx``), a fault stub (``_s_f2``), exact built-ins (``_s_i_*``), a
generated function call, the per-iteration refund slot ``t<n>``, and a fast chunk fault's iteration.
"""

from __future__ import annotations

import inspect

import pytest

from dotboxd.runtime.optimized.stubs import STUBS
from dotboxd.runtime.optimized.verify_refunds import CHUNK_FAULTS, REFUND_AT

from .tampering import Tampering
from .test_exactness import CALLS as INLINED
from .test_lazy_refunds import SUM

REFUND = "loop refund"
"""What the verifier's reason names when it refuses a refund (``verify_refunds.refund_problem``)."""

CALLS = """module "calls" version "1.0.0";
fn inc(x I32) -> I32 { return x + 1; }
entrypoint fn main(n I32, s String) -> I32 {
    acc = 0;
    for i in 0 .. n {
        acc = inc(acc) + string.length(s) + 100 / (n - i);
        acc = acc + math.abs(i - 3);
        acc = acc * 2 - acc;
        acc = acc + 1;
        acc = acc - 1;
    }
    return acc;
}"""
"""A checked chunk with more failure points than ``LAZY_REFUNDS``: one refund slot set per
iteration, read by ``_s_fx``, ``_s_deep``, a generated function call and exact built-ins."""

FAST = """module "fast" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n {
        acc = acc + 100 / (i - 5);
    }
    return acc;
}"""
"""A fast chunk: its division faults through ``_s_c2``, which takes the chunk's iteration."""


KERNELS = {"lazy": SUM, "slot": CALLS, "fast": FAST, "inlined": INLINED}
"""Refunds computed in place (``SUM``), read from the per-iteration slot (``CALLS``), a fast chunk's
fault, and inlined calls in a fast chunk (single-pass ``while True: ... break`` blocks)."""


@pytest.fixture(scope="module")
def kernels() -> dict[str, Tampering]:
    return {name: Tampering(text) for name, text in KERNELS.items()}


@pytest.mark.parametrize("name", list(KERNELS))
def test_the_untampered_modules_verify(kernels: dict[str, Tampering], name: str) -> None:
    kernels[name].bind()


def test_the_kernels_have_the_refund_forms_under_test(kernels: dict[str, Tampering]) -> None:
    assert "_s_fx(R, f, lr + (n0 - (v4 - k0) - 1), 4)" in kernels["lazy"].source()
    assert "t0 = lr + (n0 - (v3 - k0) - 1)" in kernels["slot"].source()
    assert "_fn0(R, f, d - 1, t0, v2)" in kernels["slot"].source()
    assert "_s_c2(R, f, v2, 2, " in kernels["fast"].source()


LAZY_SITES = [
    "_s_fx(R, f, lr + (n0 - (v4 - k0) - 1), 4)",
    "_s_f2(R, f, lr + (n0 - (v4 - k0) - 1), 3, ",
    "_s_lox(R, f, lr + (n0 - (v4 - k0) - 1), 5, ",
]
"""Calls in the first chunk (``n0``, ``v4``, ``k0``) computing their refund in place."""

WRONG_REFUNDS = {
    "bigger": "lr + (n0 - (v4 - k0) - 1) + 9",
    "the whole reservation": "lr + n0",
    "no minus the started iteration": "lr + (n0 - (v4 - k0) + 1)",
    "a constant": "3",
    "another chunk's names": "lr + (n1 - (v4 - k1) - 1)",
    "lr dropped": "(n0 - (v4 - k0) - 1)",
    "lr alone": "lr",
    "the frame budget": "d",
}


@pytest.mark.parametrize("site", LAZY_SITES)
@pytest.mark.parametrize("wrong", list(WRONG_REFUNDS), ids=list(WRONG_REFUNDS))
def test_a_lazy_refund_inside_a_chunk_is_only_its_chunks(
    kernels: dict[str, Tampering], site: str, wrong: str
) -> None:
    kernels["lazy"].assert_rejected(
        site, site.replace("lr + (n0 - (v4 - k0) - 1)", WRONG_REFUNDS[wrong]), REFUND
    )


@pytest.mark.parametrize(
    "replacement",
    [
        "lr + (n1 - (v4 - k1) - 1) + 1",
        "lr + (n0 - (v4 - k0) - 1)",  # the first chunk's names in the second chunk
        "lr + n1",
        "0",
        "(n1 - (v4 - k1) - 1)",
    ],
)
def test_an_exact_builtin_in_a_chunk_refunds_only_its_chunks(
    kernels: dict[str, Tampering], replacement: str
) -> None:
    kernels["lazy"].assert_rejected(
        "_s_i_list_get(R, f, lr + (n1 - (v4 - k1) - 1), 9,", f"_s_i_list_get(R, f, {replacement}, 9,", REFUND
    )


@pytest.mark.parametrize(
    ("site", "replacement"),
    [
        ("_s_i_list_count(R, f, lr, 6,", "_s_i_list_count(R, f, lr + 1, 6,"),
        ("_s_i_list_count(R, f, lr, 6,", "_s_i_list_count(R, f, 0, 6,"),
        ("_s_f2(R, f, lr, 7,", "_s_f2(R, f, lr + 5, 7,"),
        ("_s_fx(R, f, lr, 8)", "_s_fx(R, f, v5, 8)"),
        ("_s_fx(R, f, lr, 11)", "_s_fx(R, f, lr + (n1 - (v4 - k1) - 1), 11)"),  # a chunk's form outside it
        ("_s_lend(R, f, lr)", "_s_lend(R, f, lr + n0)"),
        ("_s_fx(R, f, lr, 2)", "_s_fx(R, f, t0, 2)"),
    ],
)
def test_outside_a_chunk_the_refund_is_lr(kernels: dict[str, Tampering], site: str, replacement: str) -> None:
    kernels["lazy"].assert_rejected(site, replacement, REFUND)


SLOT_SITES = [
    "_s_fx(R, f, t0, 4)",
    "_s_deep(R, f, t0)",
    "_fn0(R, f, d - 1, t0, v2)",
    "_s_i_string_length(R, f, t0, 5, ",
    "_s_i_math_abs(R, f, t0, 11, ",
    "_s_f2(R, f, t0, 6, ",
]
"""Calls reading the chunk's per-iteration refund slot ``t0``."""


@pytest.mark.parametrize("site", SLOT_SITES)
@pytest.mark.parametrize("wrong", ["t0 + 5", "lr + n0", "7", "t1", "(n0 - (v3 - k0) - 1)", "lr"])
def test_a_slot_reader_takes_the_slot_or_the_chunks_own_form(
    kernels: dict[str, Tampering], site: str, wrong: str
) -> None:
    kernels["slot"].assert_rejected(site, site.replace("t0", wrong, 1), REFUND)


@pytest.mark.parametrize(
    "replacement",
    [
        "t0 = lr + (n0 - (v3 - k0) - 1) + 9",
        "t0 = lr + n0",
        "t0 = 4",
        "t0 = n0 - (v3 - k0) - 1",
        "t0 = lr + (n0 - (v3 - v3) - 1)",
        "t0 = lr + (n0 - (v3 - k0) - 1)\n            t0 = t0 + 9",  # stored twice in the body
    ],
)
def test_the_refund_slot_holds_only_the_chunks_refund(
    kernels: dict[str, Tampering], replacement: str
) -> None:
    kernels["slot"].assert_rejected("t0 = lr + (n0 - (v3 - k0) - 1)", replacement, REFUND)


def test_the_refund_slot_is_set_before_it_is_read(kernels: dict[str, Tampering]) -> None:
    """Read before its assignment it would hold the previous iteration's refund: one too many."""
    assign = "t0 = lr + (n0 - (v3 - k0) - 1)\n"
    charge = "            f -= 10\n            if f < 0:\n                _s_fx(R, f, t0, 4)\n"
    kernels["slot"].assert_rejected(assign + charge, charge.lstrip() + "            " + assign, REFUND)


@pytest.mark.parametrize("wrong", ["v2 - 3", "k0", "0", "lr"])
def test_a_chunk_fault_takes_its_chunks_iteration(kernels: dict[str, Tampering], wrong: str) -> None:
    kernels["fast"].assert_rejected("_s_c2(R, f, v2, 2, ", f"_s_c2(R, f, {wrong}, 2, ", "chunk's iteration")


@pytest.mark.parametrize("wrong", ["v2 - 1", "k0", "n0"])
def test_a_chunk_fault_in_an_inlined_block_takes_its_chunks_iteration(
    kernels: dict[str, Tampering], wrong: str
) -> None:
    site = "_s_c2(R, f - 2 * t27, v2, 11, "
    kernels["inlined"].assert_rejected(site, site.replace("v2", wrong), "chunk's iteration")


def test_every_stub_that_receives_a_refund_is_checked() -> None:
    """A stub whose parameters name a loop refund is listed where the refund stands (so a new stub
    cannot slip past the rule); one that takes a chunk iteration there is a chunk fault."""
    for name, stub in STUBS.items():
        params = list(inspect.signature(stub).parameters)
        if "lref" in params:
            assert REFUND_AT.get(name) == params.index("lref"), name
        elif len(params) > 2 and params[2] == "i":
            assert name in CHUNK_FAULTS, name
        else:
            assert name not in REFUND_AT, name
