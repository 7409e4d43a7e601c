"""Decoding a document under its byte budget, before any parsing: one rule for every reader.

The wire JSON scanner and the text-form parser both take bytes or ``str`` and must, before they look
at a single token, refuse a document over its byte budget (``E-JSON-LIMIT``, without decoding or
encoding more than the budget allows when the size alone decides), bytes that are not UTF-8, a
``str`` holding a lone surrogate, and a leading byte-order mark. Only the code for a malformed
document differs between the readers (``E-JSON-INVALID`` or ``E-TEXT-SYNTAX``) and how they name it.
"""

from __future__ import annotations

from dotboxd.core.diagnostics import Span, reject


def span_at(text: str, offset: int) -> Span:
    """The 1-based line and column of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return Span(text.count("\n", 0, offset) + 1, offset - line_start + 1)


def bounded_text(
    data: str | bytes | bytearray | memoryview,
    max_bytes: int,
    *,
    what: str,
    invalid_code: str,
    utf8_hint: str,
) -> str:
    """The text of ``data`` (``what`` names it in messages: "the document", a file name) if it is
    at most ``max_bytes`` bytes of UTF-8 without a byte-order mark; otherwise raises DotBoxDError:
    ``E-JSON-LIMIT`` for the size, ``invalid_code`` for bad UTF-8, a lone surrogate or a BOM."""
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if len(raw) > max_bytes:
            raise reject(
                "E-JSON-LIMIT",
                f"{what} is {len(raw)} bytes; the limit is {max_bytes}",
                "",
                Span(1, 1),
                limit=max_bytes,
                actual=len(raw),
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            prefix = raw[: exc.start].decode("utf-8")
            raise reject(
                invalid_code,
                f"{what} is not valid UTF-8 (byte {exc.start})",
                "",
                span_at(prefix, len(prefix)),
                utf8_hint,
            ) from None
    else:
        text = str(data)
        if len(text) > max_bytes:  # at least one byte per character: too large before encoding
            raise reject(
                "E-JSON-LIMIT",
                f"{what} is more than {max_bytes} bytes of UTF-8",
                "",
                Span(1, 1),
                limit=max_bytes,
            )
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise reject(
                invalid_code, f"{what} contains a lone UTF-16 surrogate", "", span_at(text, exc.start)
            ) from None
        if size > max_bytes:
            raise reject(
                "E-JSON-LIMIT",
                f"{what} is {size} bytes of UTF-8; the limit is {max_bytes}",
                "",
                Span(1, 1),
                limit=max_bytes,
                actual=size,
            )
    if text.startswith("\ufeff"):
        raise reject(
            invalid_code,
            f"{what} starts with a byte-order mark",
            "",
            Span(1, 1),
            "save the file as UTF-8 without a BOM",
        )
    return text


__all__ = ["bounded_text", "span_at"]
