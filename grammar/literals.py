"""Validity rules for identifiers and literal texts, shared by the wire importer and the text parser.

Each checker returns ``None`` when the text is valid, or a short reason (used in the diagnostic
message) when it is not. Keeping the rules here, once, means both source forms accept exactly the
same programs; the validator's literal pass re-runs them on programmatically built ASTs.

The ``*_issue`` functions at the end wrap those checkers into a finished ``Issue`` (code, message,
hint, evidence). Both builders (wire and text) raise from these, adding only their own pointer and
position, so one bad name or literal is worded identically whichever form it arrives in.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from dotboxd.core import ast
from dotboxd.core.literal_rules import (
    brand_problem,
    guid_problem,
    opaque_traversal_problem,
    opaque_value_code,
    opaque_value_problem,
    path_problem,
    uri_problem,
)
from dotboxd.core.values import I32_MAX, I32_MIN, I64_MAX, I64_MIN

# --- identifiers -------------------------------------------------------------------------------


#: Categories no identifier may contain. Cc: control characters (C0, DEL, C1). Cf: format
#: characters - the bidi embeddings, overrides, isolates and marks (U+202A-U+202E, U+2066-U+2069,
#: U+200E/U+200F, U+061C), zero-width space/joiners (U+200B-U+200D), U+2060, the BOM U+FEFF and the
#: tag characters. Zl/Zp: the line and paragraph separators. Cs: surrogates. Each either controls a
#: terminal, reorders what a reader sees, or is invisible, so ``main`` and ``main\u200b`` would print
#: identically while naming different things ("Trojan Source").
_FORBIDDEN_IN_IDENTIFIERS: dict[str, str] = {
    "Cc": "control character",
    "Cf": "invisible format character",
    "Zl": "line separator",
    "Zp": "paragraph separator",
    "Cs": "surrogate",
}


def identifier_problem(text: str) -> str | None:
    """Identifiers (ids, names, call names, metadata keys) are non-blank and free of control,
    format (bidi, zero-width), line-separator and surrogate characters."""
    if not text or text.isspace():
        return "is blank"
    if text.isascii() and text.isprintable():
        return None
    for ch in text:
        what = _FORBIDDEN_IN_IDENTIFIERS.get(unicodedata.category(ch))
        if what is not None:
            name = unicodedata.name(ch, "")
            return f"contains the {what} U+{ord(ch):04X}" + (f" ({name})" if name else "")
    return None


# --- dangerous-reference scan (DotBoxD E-IR-CLR-REF) --------------------------------------------

# DotBoxD's complete list of fragments that name host (CLR) machinery, matched case-insensitively.
# Fragments ending in '.', '=' or ',' and those starting with '.' are distinctive and match anywhere.
# Word-like fragments match where they form whole words of the text, and a word edge includes the
# edges of camelCase, PascalCase, snake_case and letter/digit runs: ``rawIlBytes``, ``descriptor.
# rawIl``, ``myHostCode``, ``RAWIL_BYTES`` or ``loader2`` are all caught, while ``callIndex`` (``calli``
# inside a word), ``downloader`` or ``until_done`` (``il_``) are not. DotBoxD matches every fragment
# as a plain substring, which also rejects those ordinary names; the edge rule is our documented
# deviation (spec/ir.md). ``plugin.dll`` is covered by ``.dll``.
_DANGEROUS_ANYWHERE: tuple[str, ...] = (
    "system.",
    "microsoft.",
    "assembly.",
    "type.",
    "reflection.",
    "process.",
    "environment.",
    "thread.",
    "task.",
    "publickeytoken=",
    "culture=",
    "plugin.dll",
    ".dll",
    ", version=",
)
_DANGEROUS_WORDS: tuple[str, ...] = (
    "dllimport",
    "iserviceprovider",
    "runtimemethodhandle",
    "runtimetypehandle",
    "runtimefieldhandle",
    "metadatatoken",
    "assemblyqualifiedname",
    "assemblypath",
    "rawdll",
    "rawil",
    "rawmsil",
    "clrtype",
    "hostcode",
    "loader",
    "msil",
    "il_",
    "ldtoken",
    "ldftn",
    "ldvirtftn",
    "calli",
)
_HEX_TOKEN = re.compile(r"0x(?:02|04|06|0a|1b|23|70)[0-9a-f]{6}")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _is_edge(text: str, at: int) -> bool:
    """Whether a word of ``text`` may start or end at index ``at``: outside a run of ASCII letters
    and digits, between a lowercase and an uppercase letter (camelCase), between a letter and a
    digit (either order), or before the last capital of an acronym that starts a word
    (``MSILBody``: M-S-I-L | B-ody). Case matters here, so the original text is inspected."""
    if at == 0 or at == len(text):
        return True
    before, after = text[at - 1], text[at]
    if not (before.isascii() and before.isalnum()) or not (after.isascii() and after.isalnum()):
        return True
    if before.isdigit() != after.isdigit():
        return True
    if before.islower() and after.isupper():
        return True
    return before.isupper() and after.isupper() and at + 1 < len(text) and text[at + 1].islower()


def _folded(text: str) -> str:
    """``text`` lowercased index for index (Unicode lowercase when it keeps every index, such as the
    Kelvin sign to ``k``; ASCII lowercase otherwise), so a hit's offsets are valid in ``text``."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def dangerous_fragment(text: str) -> str | None:
    """The leftmost host-reference fragment in ``text`` (case-insensitive, as written in ``text``),
    or None.

    Each fragment is located with ``str.find`` and only its hits are checked for word edges, so the
    scan costs a few passes at C speed over the text rather than a regular expression trying every
    fragment and every edge rule at every position: import budgets allow half a megabyte of
    strings, and scanning them must stay cheap."""
    folded = _folded(text)
    best: tuple[int, int] | None = None  # (start, end) of the leftmost hit
    for fragment in _DANGEROUS_ANYWHERE:
        at = folded.find(fragment)
        if at >= 0 and (best is None or at < best[0]):
            best = (at, at + len(fragment))
    for fragment in _DANGEROUS_WORDS:
        needs_right_edge = fragment[-1].isalnum()  # ``IL_`` needs a left edge only (``IL_0001``)
        at = folded.find(fragment)
        while at >= 0 and (best is None or at <= best[0]):  # a word wins a tie, as listed first
            end = at + len(fragment)
            if _is_edge(text, at) and (not needs_right_edge or _is_edge(text, end)):
                best = (at, end)
                break
            at = folded.find(fragment, at + 1)
    hex_token = _HEX_TOKEN.search(folded)
    if hex_token is not None and (best is None or hex_token.start() < best[0]):
        best = hex_token.span()
    return None if best is None else text[best[0] : best[1]]


# --- versions ----------------------------------------------------------------------------------

_VERSION = re.compile(r"v?([0-9]+)(?:\.([0-9]+)\.([0-9]+))?")


def canonical_version(text: str) -> str | None:
    """``M.m.p`` for a version matching ``^v?N(.N.N)?$`` whose parts fit in an Int32, else None."""
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    parts = [int(p) if p is not None else 0 for p in match.groups()]
    if any(len(p or "") > 10 for p in match.groups()) or any(p > I32_MAX for p in parts):
        return None
    return ".".join(str(p) for p in parts)


def integer_bounds(kind: ast.LiteralKind) -> tuple[int, int]:
    """The inclusive range of an I32 or I64 literal (the bounds are core's, shared with arithmetic)."""
    return (I64_MIN, I64_MAX) if kind is ast.LiteralKind.I64 else (I32_MIN, I32_MAX)


# --- value texts (guid, opaque ids, paths, uris): the rules live in dotboxd.core.literal_rules --------

# --- finished diagnostics, shared by the wire and text builders --------------------------------


@dataclass(frozen=True, slots=True)
class Issue:
    """A rejection without a location: the caller adds its own pointer and span when raising."""

    code: str
    message: str
    hint: str = ""
    evidence: Mapping[str, object] = field(default_factory=dict, hash=False)


_IDENTIFIER_HINT = (
    "identifiers must be non-blank and free of control, bidi, zero-width and line-separator characters"
)
_DANGEROUS_HINT = "kernels cannot name host types, assemblies or IL; expose host operations as bindings"
_TEXT_LITERAL_RULES: dict[ast.LiteralKind, tuple[str, Callable[[str], str | None]]] = {
    ast.LiteralKind.GUID: ("E-JSON-GUID", guid_problem),
    ast.LiteralKind.PATH: ("E-JSON-PATH", path_problem),
    ast.LiteralKind.URI: ("E-JSON-URI", uri_problem),
}


def identifier_issue(text: str, what: str) -> Issue | None:
    """``what`` (e.g. "a function id") fails the identifier rule, or None."""
    problem = identifier_problem(text)
    return Issue("E-IR-ID", f"{what} {problem}", _IDENTIFIER_HINT) if problem else None


def dangerous_issue(text: str, what: str) -> Issue | None:
    """``what`` names host (CLR) machinery, or None; the fragment found is carried as evidence."""
    fragment = dangerous_fragment(text)
    if fragment is None:
        return None
    return Issue(
        "E-IR-CLR-REF",
        f"{what} contains the host-reference fragment {json.dumps(fragment)}",
        _DANGEROUS_HINT,
        {"fragment": fragment},
    )


def text_literal_issue(kind: ast.LiteralKind, text: str) -> Issue | None:
    """A guid, path or uri literal breaks its rule, or None (other kinds have no text rule here)."""
    rule = _TEXT_LITERAL_RULES.get(kind)
    if rule is None:
        return None
    code, check = rule
    problem = check(text)
    if not problem:
        return None
    return Issue(code, f"the {kind.value} literal {json.dumps(text, ensure_ascii=False)} {problem}")


def version_issue(text: str) -> Issue:
    """The rejection of a module or binding version text that ``canonical_version`` refused."""
    return Issue(
        "E-JSON-VERSION",
        f"{json.dumps(text, ensure_ascii=False)} is not a version",
        "write MAJOR.MINOR.PATCH (e.g. 1.0.0) or a bare major (1, v1)",
    )


#: How a wire string outside a closed set is refused: code, message ({} is the quoted text), hint,
#: and whether the text is carried as ``op`` evidence.
_CHOICE_ISSUES: dict[type[StrEnum], tuple[str, str, str, bool]] = {
    ast.Visibility: ("E-JSON-VISIBILITY", "visibility {} is neither 'entrypoint' nor 'private'", "", False),
    ast.UnaryOp: ("E-JSON-OP", "unknown unary operator {}", "unary operators are 'not' and '-'", True),
    ast.BinaryOp: (
        "E-JSON-OP",
        "unknown binary operator {}",
        "binary operators are: " + " ".join(o.value for o in ast.BinaryOp),
        True,
    ),
}


def choice_issue(choices: type[StrEnum], text: str) -> Issue:
    """``text`` names no member of ``choices`` (a visibility or an operator)."""
    code, template, hint, as_op = _CHOICE_ISSUES[choices]
    message = template.format(json.dumps(text, ensure_ascii=False))
    return Issue(code, message, hint, {"op": text} if as_op else {})


def brand_issue(brand: str) -> Issue | None:
    """An opaque-id type is not a brand name, or None."""
    problem = brand_problem(brand)
    if not problem:
        return None
    return Issue("E-JSON-OPAQUE", f"the opaque-id type {json.dumps(brand, ensure_ascii=False)} {problem}")


def opaque_value_issue(text: str) -> Issue | None:
    """An opaque-id value breaks its rule, or None (the message quotes at most 80 characters)."""
    problem = opaque_value_problem(text)
    if not problem:
        return None
    return Issue(
        opaque_value_code(text),
        f"the opaque-id value {json.dumps(text[:80], ensure_ascii=False)} {problem}",
        "an opaque id is an opaque key of 1 to 256 characters of A-Z a-z 0-9 _ . : - without '..'",
    )


__all__ = [
    "Issue",
    "brand_issue",
    "brand_problem",
    "canonical_version",
    "dangerous_fragment",
    "dangerous_issue",
    "guid_problem",
    "identifier_issue",
    "identifier_problem",
    "opaque_traversal_problem",
    "opaque_value_code",
    "opaque_value_issue",
    "opaque_value_problem",
    "path_problem",
    "text_literal_issue",
    "uri_problem",
]
