"""The semantics of the extension set's string built-ins (``dotboxd-1+ext1``), defined once.

Why a module of its own: both backends run these through ``runtime.intrinsics`` and the prover
reasons about their results; keeping the definitions here (next to ``utf16`` and ``values``) means
the meaning of "contains" or "lower case" cannot differ between consumers.

Search is ordinal: a sandbox string never holds an unpaired surrogate (``values.has_lone_surrogate``),
so a match of code points is exactly a match of UTF-16 code units, and a needle can never match half
of a surrogate pair. Offsets returned to a kernel are UTF-16 code units, like every other index.

Case mapping is *invariant* and *simple*: each code point is mapped on its own, with no locale and
no context (no final-sigma rule), and a code point whose full Unicode mapping is longer than one
code point (``ß`` upper-cases to ``SS``, ``İ`` lower-cases to ``i̇``) is left unchanged. The mapping
therefore never changes a string's length in UTF-16 units (``tests/runtime/test_text_builtins.py``
checks every code point), which lets the cost and the prover bound of the result be its input's.
The tables are those of the running Python's ``unicodedata`` (Unicode 14.0 on Python 3.11).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dotboxd.core.utf16 import utf16_len
from dotboxd.core.values import I32_MAX, I32_MIN, SandboxFault


def contains(text: str, part: str) -> bool:
    """Whether ``part`` occurs in ``text`` (the empty string occurs everywhere)."""
    return part in text


def index_of(text: str, part: str) -> int:
    """The UTF-16 offset of the first occurrence of ``part`` in ``text``, or -1 (empty: 0)."""
    at = text.find(part)
    if at <= 0:
        return at
    return utf16_len(text[:at])


def last_index_of(text: str, part: str) -> int:
    """``string.lastIndexOf``: the UTF-16 offset of the last occurrence of ``part`` in ``text``, or
    -1; the empty string occurs last at the end (the offset is ``text``'s length in units).

    Why not ``str.rfind``: CPython's reverse search has no two-way fallback, so a crafted pair (a
    long run of one character and a part that differs from it near its start) takes time
    ``len(text) x len(part)`` while the call is charged ``len(text) + len(part)`` fuel. The forward
    search of the reversed texts is linear, and reversing code points keeps every character whole."""
    found = text[::-1].find(part[::-1])
    if found < 0:
        return -1
    at = len(text) - found - len(part)
    return at if at == 0 else utf16_len(text[:at])


def is_empty(text: str) -> bool:
    return len(text) == 0


def starts_with(text: str, part: str) -> bool:
    return text.startswith(part)


def ends_with(text: str, part: str) -> bool:
    return text.endswith(part)


_DECIMAL = re.compile(r"([+-]?)0*([0-9]{1,11})")
"""Optional sign, leading zeros, then the significant digits: more than 11 of them (more than the
10 any I32 has, plus one so the overflow check below still sees them) never match."""


def parse_int(text: str) -> int:
    """``parse.int``: an optional ``+``/``-`` and ASCII decimal digits (leading zeros allowed), nothing
    else (no spaces, no grouping), whose value fits in I32; anything else is R-PARSE-INT. Linear
    time: Python's own ``int()`` is quadratic in the digits and refuses long texts."""
    match = _DECIMAL.fullmatch(text) if text.isascii() else None
    if match is None:
        raise SandboxFault("R-PARSE-INT", "text is not a decimal I32")
    sign, digits = match.groups()
    value = -int(digits) if sign == "-" else int(digits)
    if not I32_MIN <= value <= I32_MAX:
        raise SandboxFault("R-PARSE-INT", "decimal text is outside the I32 range")
    return value


def _simple(mapping: Callable[[str], str]) -> Callable[[str], str]:
    def one(ch: str) -> str:
        mapped = mapping(ch)
        return mapped if len(mapped) == 1 else ch

    def convert(text: str) -> str:
        if text.isascii():
            return mapping(text)  # ASCII case mapping is simple and context-free
        return "".join(map(one, text))

    return convert


to_lower_invariant: Callable[[str], str] = _simple(str.lower)
"""Simple, locale-independent lower case of every code point (see the module docstring)."""

to_upper_invariant: Callable[[str], str] = _simple(str.upper)
"""Simple, locale-independent upper case of every code point (see the module docstring)."""


# --- string.split, string.replace, format.simple -------------------------------------------------
# Each is split in two: a *measure* that reads the inputs once and says how big the result will be
# (so every charge and every limit is settled before anything is built), and the *build* itself.


def split_count(text: str, separator: str) -> int:
    """How many pieces ``split(text, separator)`` returns: occurrences + 1 (an empty separator
    never splits, so one piece)."""
    return text.count(separator) + 1 if separator else 1


def split(text: str, separator: str) -> list[str]:
    """``string.split``: the pieces of ``text`` between the non-overlapping occurrences of
    ``separator``, found left to right; empty pieces are kept (``"a,,b"`` gives three), and an empty
    ``separator`` gives ``[text]``."""
    return text.split(separator) if separator else [text]


def replace_count(text: str, old: str) -> int:
    """How many occurrences ``replace`` substitutes (non-overlapping, left to right; none when
    ``old`` is empty)."""
    return text.count(old) if old else 0


def replace(text: str, old: str, new: str) -> str:
    """``string.replace``: every non-overlapping occurrence of ``old`` (left to right) becomes
    ``new``; an empty ``old`` matches nothing, so the text comes back unchanged."""
    return text.replace(old, new) if old else text


_FORMAT_TOKEN = re.compile(r"\{\{|\}\}|\{(0|[1-9][0-9]{0,8})\}|[{}]")
"""``{{``, ``}}``, a placeholder ``{n}`` (a decimal index without sign or leading zeros, at most
nine digits), or a lone brace (an error)."""

FormatPart = str | int
"""A literal piece of a template, or the index of the argument a placeholder stands for."""


@dataclass(frozen=True, slots=True)
class FormatTemplate:
    """A parsed ``format.simple`` template: its pieces in order, and the UTF-16 units of its
    literal text (so the result's length is known without measuring any piece again)."""

    parts: tuple[FormatPart, ...]
    literal_units: int

    def length(self, arg_lengths: Mapping[int, int]) -> int:
        """The UTF-16 length of the formatted text (``arg_lengths`` in units, by argument index)."""
        return self.literal_units + sum(arg_lengths[p] for p in self.parts if isinstance(p, int))

    def build(self, args: Mapping[int, str]) -> str:
        """Join the pieces, each placeholder replaced by its argument's text."""
        return "".join(p if isinstance(p, str) else args[p] for p in self.parts)


def format_parts(template: str, arg_count: int) -> FormatTemplate:
    """Parse a ``format.simple`` template into literal pieces and argument indices, in one pass.

    ``{n}`` stands for argument ``n`` (0-based, ``n < arg_count``); ``{{`` and ``}}`` are a literal
    brace; any other brace - a lone ``{`` or ``}``, ``{}``, ``{-1}``, ``{01}``, ``{ 0}``, ``{x}`` - or an
    index with no argument is R-FORMAT. Arguments may be used any number of times, or not at all."""
    parts: list[FormatPart] = []
    at = 0
    markup = 0  # units of the template that are not literal text (placeholders, one brace per escape)
    for match in _FORMAT_TOKEN.finditer(template):
        if match.start() > at:
            parts.append(template[at : match.start()])
        at = match.end()
        token = match.group()
        if token in ("{{", "}}"):
            parts.append(token[0])
            markup += 1
            continue
        index = match.group(1)
        if index is None:
            raise SandboxFault("R-FORMAT", "format template has a brace that is neither {n}, {{ nor }}")
        if int(index) >= arg_count:
            raise SandboxFault("R-FORMAT", "format placeholder names an argument that was not given")
        parts.append(int(index))
        markup += len(token)
    if at < len(template):
        parts.append(template[at:])
    return FormatTemplate(tuple(parts), utf16_len(template) - markup)
