"""The canonical record encoding and its hash: one encoder for every identity DotBoxD computes.

Module hashes (``grammar/canonical``), policy hashes, binding-manifest hashes and plan hashes all
hash *records* built here, so two of them can never disagree about how a string is written
(spec/canonical.md sections 2 and 6):

* a *field* is ``n;`` for null or ``s<len>:<escaped>;`` for text, where ``len`` counts the UTF-16
  code units of the escaped text; a *record* is its fields concatenated;
* escaping writes backslash, CR, LF and TAB as two-character escapes and every other C0/C1 control
  (.NET ``char.IsControl``) as ``\\uXXXX`` with lowercase hex; everything else is unchanged;
* a hash is the lowercase SHA-256 hex of the records joined by LF (no final LF), in UTF-8.

Lone surrogates. A Python ``str`` can hold a surrogate code point that a UTF-16 string would hold as
an unpaired unit. Every reader of untrusted text (the JSON scanner, the text and Python fronts)
refuses them, so they reach this module only from host-built values. They are hashed *injectively*:
surrogate code points that form a pair in UTF-16 are joined first (the same UTF-16 string gives the
same bytes however Python holds it), and a surrogate left unpaired is written as its own three-byte
sequence (``surrogatepass``). Replacing it with U+FFFD, as .NET's ``Encoding.UTF8`` does, would give
``"\\ud800"`` and ``"\\ufffd"`` one hash: two different modules, policies or plans with one identity.
For every valid Unicode text the bytes are plain UTF-8, identical to .NET's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

CanonicalPiece = tuple[str, int, int]
"""Encoded text with its UTF-16 length and its number of backslashes. Encoded text never holds a
control character (escaping removed them all), so escaping it again adds exactly one unit per
backslash and doubles the backslash count: sizes of every enclosing record follow from these two
integers without looking at the text again (``grammar/canonical`` relies on it)."""

BACKSLASH = "\\"


def _escape_table() -> dict[int, str]:
    table = {code: f"\\u{code:04x}" for code in range(0x20)}
    table.update({code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)})  # .NET char.IsControl
    table[ord("\\")] = "\\\\"
    table[ord("\r")] = "\\r"
    table[ord("\n")] = "\\n"
    table[ord("\t")] = "\\t"
    return table


_ESCAPES = _escape_table()
_NEEDS_ESCAPE = re.compile("[\\\\\x00-\x1f\x7f-\x9f]")

NULL_FIELD: CanonicalPiece = ("n;", 2, 0)


def escape_text(value: str) -> str:
    """Backslash, CR, LF and TAB as two-character escapes; every other C0/C1 control (.NET
    ``char.IsControl``) as ``\\uXXXX`` with lowercase hex; everything else unchanged."""
    if _NEEDS_ESCAPE.search(value) is None:
        return value
    return value.translate(_ESCAPES)


def utf16_len(value: str) -> int:
    """The length .NET's ``string.Length`` reports: code points above U+FFFF count twice."""
    if value.isascii():
        return len(value)
    return len(value.encode("utf-16-le", "surrogatepass")) // 2


def string_field(value: str) -> CanonicalPiece:
    """The field of one string, ``s<len>:<escaped>;``, with its size and backslash count."""
    if value.isascii() and value.isprintable() and BACKSLASH not in value:  # nothing to escape
        size = len(value)
        return f"s{size}:{value};", size + len(str(size)) + 3, 0
    escaped = value.translate(_ESCAPES)
    size = utf16_len(escaped)
    return f"s{size}:{escaped};", size + len(str(size)) + 3, escaped.count(BACKSLASH)


def encode_field(value: str | None) -> str:
    """``n;`` for None, else ``s<utf16 length of escaped>:<escaped>;``."""
    return NULL_FIELD[0] if value is None else string_field(value)[0]


def encode_record(*fields: str | None) -> str:
    """A record: its fields encoded and concatenated (no separator, no terminator)."""
    return "".join(map(encode_field, fields))


def canonical_record(*fields: str | int | bool | None) -> str:
    """A record whose fields may also be ints and bools, written as invariant text (``42``,
    ``true``/``false``) before encoding: the form the policy, manifest and plan hashes use."""
    return "".join(map(encode_field, map(_field_text, fields)))


def _field_text(value: str | int | bool | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def ordinal_key(value: str) -> bytes:
    """Sort key equal to .NET ``StringComparer.Ordinal``: UTF-16 code unit order. Python's own
    ``str`` order compares code points, which differs once astral characters meet U+E000..U+FFFF."""
    return value.encode("utf-16-be", "surrogatepass")


def canonical_bytes(text: str) -> bytes:
    """The bytes that are hashed: UTF-8, with surrogate code points that pair up in UTF-16 joined
    and unpaired ones kept as their own three-byte sequence (see the module docstring)."""
    try:
        return text.encode("utf-8")  # fails exactly when the text holds a surrogate code point
    except UnicodeEncodeError:
        units = text.encode("utf-16-le", "surrogatepass")
        return units.decode("utf-16-le", "surrogatepass").encode("utf-8", "surrogatepass")


def sha256_hex(text: str) -> str:
    """Lowercase SHA-256 hex of ``canonical_bytes(text)``."""
    return hashlib.sha256(canonical_bytes(text)).hexdigest()


def hash_records(records: Iterable[str]) -> str:
    """DotBoxD's ``HashRecords``: the records joined with ``\\n`` (no trailing newline), hashed.
    Callers sort the records first when their order carries no meaning (policy, bindings)."""
    return sha256_hex("\n".join(records))


__all__ = [
    "BACKSLASH",
    "NULL_FIELD",
    "CanonicalPiece",
    "canonical_bytes",
    "canonical_record",
    "encode_field",
    "encode_record",
    "escape_text",
    "hash_records",
    "ordinal_key",
    "sha256_hex",
    "string_field",
    "utf16_len",
]
