"""The host-reference scan (spec/ir.md section 6) against an independent oracle, and its cost.

The oracle states the rule as one regular expression: word fragments between word edges (written as
lookarounds), anywhere-fragments and hex tokens, leftmost match first. The production scan finds
candidates with ``str.find`` and checks edges only there; both must agree on every text."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.grammar.literals import _DANGEROUS_ANYWHERE, _DANGEROUS_WORDS, dangerous_fragment

_EDGE = (
    r"(?:(?<![A-Za-z0-9])|(?![A-Za-z0-9])|(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])"
    r"|(?<=[0-9])(?=[A-Za-z])|(?<=[A-Z])(?=[A-Z][a-z]))"
)
ORACLE = re.compile(
    _EDGE
    + "(?i:"
    + "|".join(re.escape(w) for w in _DANGEROUS_WORDS if w[-1].isalnum())
    + ")"
    + _EDGE
    + "|"
    + _EDGE
    + "(?i:"
    + "|".join(re.escape(w) for w in _DANGEROUS_WORDS if not w[-1].isalnum())
    + ")|(?i:"
    + "|".join(re.escape(f) for f in _DANGEROUS_ANYWHERE)
    + r"|0x(?:02|04|06|0a|1b|23|70)[0-9a-f]{6})"
)

PIECES = [
    *_DANGEROUS_WORDS,
    *_DANGEROUS_ANYWHERE,
    "RawIl", "HostCode", "Loader", "MSIL", "IL_", "CALLI", "0x06", "0a1b2c", "123", "x", "X", "_",
    ".", " ", "a", "Z", "9", "By", "ptr", "ée", "K",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8))
def test_the_scan_agrees_with_the_regular_expression_oracle(pieces: list[str]) -> None:
    text = "".join(pieces)
    expected = ORACLE.search(text)
    found = dangerous_fragment(text)
    assert found == (expected.group(0) if expected else None), text


@given(st.text(st.characters(max_codepoint=0x7F) | st.sampled_from("éΩ中\u200b"), max_size=40))
def test_the_scan_agrees_with_the_oracle_on_arbitrary_text(text: str) -> None:
    """ASCII plus letters without an ASCII case partner: the oracle's Unicode IGNORECASE also
    folds a few exotic letters onto ASCII (U+017F long s onto ``s``), which the scan, like
    DotBoxD's ordinal case-insensitive match, does not."""
    expected = ORACLE.search(text)
    assert dangerous_fragment(text) == (expected.group(0) if expected else None), text


def test_scanning_the_whole_string_budget_stays_cheap() -> None:
    """512 KiB of strings (the import budget) built to produce a candidate every few characters."""
    worst = ["calli" * 13_107, "loader" * 10_922, "il_x" * 16_384, "aB1." * 16_384] * 2
    started = time.perf_counter()
    for text in worst:
        dangerous_fragment(text)
    assert time.perf_counter() - started < 2.0
