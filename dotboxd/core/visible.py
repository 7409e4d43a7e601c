"""Make untrusted text safe to show a human: every invisible or terminal-controlling character
becomes a visible escape.

A kernel's author controls identifiers, literals, metadata and even the comments a caret excerpt
quotes. Printed raw, an ESC sequence can recolour, move the cursor or rewrite what a reviewer's
terminal shows, and a bidi override (U+202E) or a zero-width space (U+200B) can make two different
texts look identical ("Trojan Source"). So everything that reaches a person - diagnostics, CLI
output - goes through :func:`visible` first.

Escaped: every character Python does not consider printable (``str.isprintable``): control
characters (Cc, C0 and C1 and DEL), format characters (Cf: bidi embeddings, overrides and isolates,
zero-width characters, the BOM, tag characters), line and paragraph separators (Zl, Zp), spaces other
than U+0020 (Zs, e.g. NO-BREAK SPACE), surrogates, private-use and unassigned code points. The
escape is the JSON one, ``\\uXXXX`` (an astral character as its surrogate pair), so an escaped string
literal in ``dotboxd fmt`` output or in a JSON value still parses to the same text.
"""

from __future__ import annotations


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def visible(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character except those in ``keep`` (e.g. ``"\\n"`` for
    multi-line output) replaced by its ``\\uXXXX`` escape. Printable text is returned unchanged."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else _escape(ch) for ch in text)


CLIP = 64
"""How many characters of a client's own text (a path, an id, a member or parameter name) an error
answer quotes: enough to recognise it, never the megabyte a client sent."""


def clipped(text: str, limit: int = CLIP) -> str:
    """Untrusted text as an error may quote it: at most ``limit`` characters (then ``...``), made
    ``visible``, so an answer never reflects what a client sent verbatim or at any length."""
    return visible(text[:limit]) + ("..." if len(text) > limit else "")
