"""The UTF-16 index (``dotboxd.core.utf16``) agrees with re-encoding, inside and outside a run.

``utf16_len`` and ``utf16_substring`` no longer re-encode the whole string on every call (issue 11,
item 4); these tests hold them to the straightforward definition: encode to UTF-16, count or cut the
code units, refuse a cut through a surrogate pair.
"""

from __future__ import annotations

from contextlib import nullcontext

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core import utf16
from dotboxd.core.values import SandboxFault, utf16_len, utf16_substring

# letters, a Latin-1 letter, a BMP letter above U+E000 and astral characters (two units each)
_CHARS = st.sampled_from(["a", "z", "é", "\ue000", "\uffff", "😀", "\U0010ffff", "\U00010000"])
_TEXTS = st.lists(_CHARS, max_size=150).map("".join)


def _by_encoding(text: str, start: int, length: int) -> str | None:
    """The defining cut: UTF-16 units ``[start, start + length)``; None when it is refused."""
    raw = text.encode("utf-16-le", "surrogatepass")
    total = len(raw) // 2
    if start < 0 or length < 0 or start > total or length > total - start:
        return None
    piece = raw[2 * start : 2 * (start + length)]
    if length > 0:
        first = int.from_bytes(piece[:2], "little")
        last = int.from_bytes(piece[-2:], "little")
        if 0xDC00 <= first <= 0xDFFF or 0xD800 <= last <= 0xDBFF:
            return None
    return piece.decode("utf-16-le", "surrogatepass")


def _cut(text: str, start: int, length: int) -> str | None:
    try:
        return utf16_substring(text, start, length)
    except SandboxFault as fault:
        assert fault.code == "R-STRING-RANGE"
        return None


@pytest.mark.parametrize("in_run", [False, True])
@given(text=_TEXTS, start=st.integers(-2, 320), length=st.integers(-2, 320))
def test_utf16_index_agrees_with_reencoding(in_run: bool, text: str, start: int, length: int) -> None:
    """T-RUN-05: lengths and cuts by the cached index are exactly those of re-encoding, astral
    characters counted twice and a split surrogate pair refused, whether or not a run's cache is
    open (and on the second, cached, use as on the first)."""
    with utf16.utf16_scope() if in_run else nullcontext():
        for _ in range(2):
            assert utf16_len(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2
            assert _cut(text, start, length) == _by_encoding(text, start, length)


def test_the_run_cache_is_keyed_by_the_string_object_and_dropped_with_the_run() -> None:
    """An index is only ever used for the very string it was built from, and none outlives its run."""
    long_text = "😀" * 100
    with utf16.utf16_scope():
        assert utf16_len(long_text) == 200
        other = "".join(["a"] * 100) + "é"  # a different object, possibly at a reused address
        assert utf16_len(other) == 101
        assert utf16.index_of(long_text) is utf16.index_of(long_text)  # cached: the same index
    assert utf16.index_of(long_text) is not utf16.index_of(long_text)  # outside a run: built anew
