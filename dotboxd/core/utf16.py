"""UTF-16 lengths and offsets of Python strings in time proportional to what a run is charged.

Why a module of its own: DotBoxD counts strings in UTF-16 code units while Python indexes code
points. Converting by re-encoding the whole string costs time proportional to its length, and
``string.length`` is charged a flat 1 fuel, ``string.substringBudgeted`` 2 fuel plus the bytes it
*returns*: a kernel asking for the length of a 60,000-unit string, or a 3-unit piece of it, again and
again would buy hundreds of times more CPU per fuel unit than any other statement.

The fix is an index per string, built once and then reused:

* an ASCII string (``str.isascii`` is O(1) in CPython) needs none: units and code points agree;
* any other string gets a ``Utf16Index``: its length in units and the unit offsets of its astral
  characters (the only ones that take two units), so a unit offset becomes a code-point index with a
  binary search, and a cut through a surrogate pair is recognised there too;
* indices are kept for the duration of a run (``open_scope``/``close_scope``, which the runtime
  calls around every run), keyed by the string object's identity; the cache holds the string
  itself, so the identity cannot be reused while the entry lives. Every string a run can see was built or admitted by an
  operation charged in proportion to its length (a literal, an input, a concatenation, a substring,
  a binding's result), so building its index once per run stays within what the run paid for, and
  nothing is ever evicted that a later call would have to rebuild. Strings shorter than
  ``SHORT_TEXT`` code points are measured directly: that is O(1) work too.

Outside a scope (validation, the host's own decoding) lengths are computed directly, as before.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from threading import get_ident
from typing import Final

SHORT_TEXT: Final = 64
"""Non-ASCII strings shorter than this many code points are measured on every call (bounded work)
rather than indexed."""

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True)
class Utf16Index:
    """What converting between UTF-16 units and code points needs: the length in units, and the
    unit offset of every astral character in order (empty when there are none; 4 bytes each, never
    more than the string's own 4 bytes per character)."""

    length16: int
    astral_units: array[int]


_NONE: Final = array("I")
_Cache = dict[int, tuple[str, Utf16Index]]


class _RunTexts:
    """One thread's run scope: how many runs are open on it (a binding may start a nested run), the
    indices of the outermost one, and the thread it belongs to.

    Held in a context variable that is set once per thread, not once per run: opening and closing
    a scope is on the per-run path of every host call and must cost next to nothing. A helper
    thread that continues a run (``runtime/stack.py``) runs in a copy of the caller's context and so
    shares its scope; a thread that merely inherited a copied context (``asyncio.to_thread``) gets
    its own scope when it opens one, because a scope remembers its thread."""

    __slots__ = ("cache", "depth", "thread")

    def __init__(self) -> None:
        self.depth = 0
        self.cache: _Cache | None = None
        self.thread = get_ident()


_SCOPE: ContextVar[_RunTexts | None] = ContextVar("dotboxd_utf16_scope", default=None)


def open_scope() -> None:
    """A run begins on this thread: keep the indices built from now until the matching
    ``close_scope`` (nested runs share the outer run's indices)."""
    runs = _SCOPE.get()
    if runs is None or runs.thread != get_ident():
        runs = _RunTexts()
        _SCOPE.set(runs)
    runs.depth += 1


def close_scope() -> None:
    """A run ends on this thread; the outermost one drops the indices."""
    runs = _SCOPE.get()
    if runs is None:
        return
    runs.depth -= 1
    if runs.depth <= 0:
        runs.depth = 0
        runs.cache = None


@contextmanager
def utf16_scope() -> Iterator[None]:
    """``open_scope``/``close_scope`` around a block (for callers off the hot path)."""
    open_scope()
    try:
        yield
    finally:
        close_scope()


def build_index(text: str) -> Utf16Index:
    """The index of ``text``, built from scratch (O(len(text)), in C apart from one step per astral
    character)."""
    if text.isascii():
        return Utf16Index(len(text), _NONE)
    length16 = len(text.encode("utf-16-le", "surrogatepass")) // 2  # one pass in C
    if length16 == len(text):
        return Utf16Index(length16, _NONE)
    units = array("I", (match.start() + rank for rank, match in enumerate(_ASTRAL.finditer(text))))
    return Utf16Index(len(text) + len(units), units)


def index_of(text: str) -> Utf16Index:
    """The index of ``text``: cached for the current run when ``text`` is long enough to matter."""
    if len(text) < SHORT_TEXT:
        return build_index(text)
    runs = _SCOPE.get()
    if runs is None or not runs.depth:
        return build_index(text)
    cache = runs.cache
    if cache is None:
        cache = runs.cache = {}
    entry = cache.get(id(text))
    if entry is not None and entry[0] is text:
        return entry[1]
    index = build_index(text)
    cache[id(text)] = (text, index)
    return index


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (astral characters count 2); O(1) for ASCII text and for text
    already measured in this run."""
    if text.isascii():
        return len(text)
    return index_of(text).length16


def code_point_offset(index: Utf16Index, unit: int) -> int | None:
    """The code-point index of UTF-16 unit offset ``unit`` (0 <= unit <= length16), or None when
    ``unit`` falls between the two halves of a surrogate pair."""
    astral = index.astral_units
    if not astral:
        return unit
    before = bisect_left(astral, unit)  # astral characters starting before ``unit``
    if before and astral[before - 1] + 1 == unit:
        return None
    return unit - before


__all__ = [
    "SHORT_TEXT",
    "Utf16Index",
    "build_index",
    "close_scope",
    "code_point_offset",
    "index_of",
    "open_scope",
    "utf16_len",
    "utf16_scope",
]
