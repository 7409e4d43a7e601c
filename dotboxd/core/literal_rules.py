"""Validity rules for the texts of sandbox values: GUIDs, opaque ids and brands, paths and URIs.

Each checker returns ``None`` when the text is valid, or a short reason (used in a diagnostic or
fault message) when it is not. They live in core, once, because every layer checks these texts: the
importers (``grammar/literals`` re-exports them next to the identifier rules), the validator's
literal pass, the runtime when it decodes run arguments and binding results (``values.LiteralRules``)
and the file facades. A path the importer accepts is exactly a path a binding may return.
"""

from __future__ import annotations

import re
import unicodedata

# --- guid --------------------------------------------------------------------------------------

_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def guid_problem(text: str) -> str | None:
    if _GUID.fullmatch(text) is None:
        return "is not a GUID in 8-4-4-4-12 hexadecimal form"
    return None


# --- opaque ids --------------------------------------------------------------------------------

_BRAND = re.compile(r"[A-Z][A-Za-z0-9_]{0,63}")
_OPAQUE_VALUE = re.compile(r"[A-Za-z0-9_.:\-]{1,256}")


def brand_problem(text: str) -> str | None:
    """Opaque-id brand names: an uppercase ASCII letter, then up to 63 ASCII letters, digits or '_'."""
    if _BRAND.fullmatch(text) is None:
        return "is not a brand name (an uppercase ASCII letter, then up to 63 letters, digits or '_')"
    return None


def opaque_traversal_problem(text: str) -> str | None:
    """An opaque-id value that carries a path traversal: a ``..`` run anywhere in it.

    Hosts commonly turn ids into storage keys or file names, so an id that could walk up a
    directory (``..``, ``../secret``, ``a..b``, ``..\\x``) is refused with its own code (``E-JSON-ID``,
    as DotBoxD does), before the character rule, wherever a value is checked. A lone ``/`` or ``\\``
    is still refused, by the character rule (``E-JSON-OPAQUE``)."""
    if ".." in text:
        return "contains '..' (a path traversal)"
    return None


def opaque_value_problem(text: str) -> str | None:
    """Opaque-id values: 1 to 256 characters of ``[A-Za-z0-9_.:-]`` and no path traversal; data,
    never objects."""
    traversal = opaque_traversal_problem(text)
    if traversal is not None:
        return traversal
    if _OPAQUE_VALUE.fullmatch(text) is None:
        return "must be 1 to 256 characters of A-Z a-z 0-9 _ . : -"
    return None


def opaque_value_code(text: str) -> str:
    """The code for an opaque-id value that breaks its rule: ``E-JSON-ID`` for a path traversal,
    ``E-JSON-OPAQUE`` otherwise."""
    return "E-JSON-ID" if opaque_traversal_problem(text) is not None else "E-JSON-OPAQUE"


# --- sandbox paths -----------------------------------------------------------------------------

_DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$"]
    + [f"com{i}" for i in [*range(1, 10), "\u00b9", "\u00b2", "\u00b3"]]
    + [f"lpt{i}" for i in [*range(1, 10), "\u00b9", "\u00b2", "\u00b3"]]
)
_URI_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


def path_problem(text: str) -> str | None:
    """A portable, canonical relative path; non-canonical paths are rejected, never normalized."""
    if not text or text.isspace():
        return "is blank"
    if "\\" in text:
        return "contains a backslash"
    if ":" in text:
        return "contains ':' (drive letters, URIs and alternate streams are not portable)"
    if text.startswith("/"):
        return "is absolute (starts with '/')"
    if _URI_PREFIX.match(text):
        return "is an absolute URI"
    for segment in text.split("/"):
        if segment == "":
            return "has an empty segment ('//' or a trailing '/')"
        if segment in (".", ".."):
            return f"has a '{segment}' segment"
        if any(unicodedata.category(ch) == "Cc" for ch in segment):
            return "contains a control character"
        if segment.endswith((" ", ".")):
            return f"has a segment ending in {'a space' if segment.endswith(' ') else 'a dot'}"
        if segment.split(".", 1)[0].lower() in _DEVICE_NAMES:
            return f"names the Windows device '{segment.split('.', 1)[0]}'"
    return None


# --- sandbox uris ------------------------------------------------------------------------------

_URI = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)([/?#].*)?", re.DOTALL)


def uri_problem(text: str) -> str | None:
    """An absolute ``scheme://host...`` URI with a host, no userinfo, no backslash, no whitespace in
    the authority."""
    if not text or text.isspace():
        return "is blank"
    if "\\" in text:
        return "contains a backslash"
    match = _URI.fullmatch(text)
    if match is None:
        return "is not an absolute URI of the form scheme://host[/path]"
    authority = match.group(2)
    if "@" in authority:
        return "carries userinfo ('@' in the authority)"
    if authority == "" or any(ch.isspace() for ch in authority):
        return "has no host" if authority == "" else "has whitespace in the authority"
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        return "contains a control character"
    return None


__all__ = [
    "brand_problem",
    "guid_problem",
    "opaque_traversal_problem",
    "opaque_value_code",
    "opaque_value_problem",
    "path_problem",
    "uri_problem",
]
