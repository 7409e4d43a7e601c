"""The one bounded JSON reader for every document the project reads that is not a module.

Policies, binding manifests, ``--args``, optimized-backend cache files, conformance case files and
the ``--impl`` protocol's lines all come from outside: ``json.loads`` on them recursed without a
limit (a 100,000-deep ``[[[[`` was a ``RecursionError``, so an exit status 3 or a dead ``serve``
loop), kept the last of duplicate keys and accepted ``NaN``. ``read_json`` scans with the same
iterative, budgeted scanner as the wire importer (``dotboxd.core.jsonscan``) under the budgets of
the document's kind, then builds plain Python values without recursion. Every failure is a
``DotBoxDError`` with a stable code, the JSON pointer, line:column and a hint; ``code`` relabels
it for readers whose documents have a code of their own (``E-POLICY-SCHEMA``,
``E-BINDING-MANIFEST``) while keeping the location and the reason.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from dotboxd.core.diagnostics import DotBoxDError, Span, reject
from dotboxd.core.jsonscan import (
    Document,
    JArray,
    JBool,
    JNumber,
    JObject,
    JsonBudgets,
    JString,
    JValue,
    scan_document,
)

MAX_INTEGER_DIGITS = 400
"""Longest integer lexeme turned into an ``int`` (far past I64; Python's own cap is 4300 digits,
and ``int()`` of a long lexeme costs quadratic time)."""

HOST_DOCUMENT_BUDGETS = JsonBudgets(
    max_document_bytes=16 * 1024 * 1024,
    max_depth=128,
    max_tokens=1_000_000,
    max_items=200_000,
    max_string_bytes=16 * 1024 * 1024,
    max_total_string_bytes=16 * 1024 * 1024,
)
"""Policies, binding manifests and run arguments: room for the largest collections a policy can
allow, still a bounded scan (nesting past 128 is never a meaningful policy, manifest or value: a
sandbox type nests at most 8 deep)."""

CASE_DOCUMENT_BUDGETS = dataclasses.replace(
    HOST_DOCUMENT_BUDGETS,
    max_document_bytes=64 * 1024 * 1024,
    max_tokens=2_000_000,
    max_total_string_bytes=64 * 1024 * 1024,
    lone_surrogates=True,
)
"""Conformance case files and protocol lines: the host budgets, widened where a case may carry an 8 MiB generated module text
(escaped, a protocol line can be several times that) and lone surrogate escapes as deliberately
invalid inputs; a module object nested 64 deep still fits inside a case and a request."""


def read_json(data: bytes | str, budgets: JsonBudgets, *, code: str | None = None, what: str = "") -> Any:
    """The plain Python value of the JSON document ``data`` (dict, list, str, int, float, bool,
    None), scanned strictly under ``budgets``. Raises DotBoxDError: ``E-JSON-INVALID``,
    ``E-JSON-LIMIT`` or ``E-JSON-SCHEMA`` (a duplicate key), or ``code`` with the same location
    and reason when given; ``what`` ("the policy") prefixes a relabelled message."""
    try:
        document = scan_document(data, budgets)
        return _plain(document)
    except DotBoxDError as error:
        if code is None:
            raise
        first = error.diagnostic
        prefix = f"{what} is not valid JSON: " if what else "not valid JSON: "
        raise reject(
            code,
            prefix + first.message,
            first.pointer,
            first.span,
            first.hint,
            jsonCode=first.code,
            **first.evidence,
        ) from None


def locate(data: bytes | str, pointer: str, budgets: JsonBudgets) -> Span | None:
    """The line:column of the value at JSON ``pointer`` in the document ``data`` (of a member
    pointer whose value is missing, its nearest present ancestor), or None when ``data`` does not
    scan. Why: a policy or manifest is checked as plain values, after the scan; its errors name a
    pointer, and this puts them back on a line of the file, with a caret, like a module's errors."""
    try:
        document = scan_document(data, budgets)
    except DotBoxDError:
        return None
    value: JValue = document.root
    offset = value.offset
    for raw in pointer.split("/")[1:] if pointer else ():
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, JObject) and part in value.members:
            offset = value.key_offsets.get(part, value.members[part].offset)
            value = value.members[part]
        elif isinstance(value, JArray) and part.isdigit() and int(part) < len(value.items):
            value = value.items[int(part)]
            offset = value.offset
        else:
            break
    return document.span(offset)


def located(error: DotBoxDError, data: bytes | str, budgets: JsonBudgets) -> DotBoxDError:
    """``error`` with a line:column (from its pointer, :func:`locate`) on every diagnostic that has
    a pointer but no span; unchanged when none lacks one."""
    if all(d.span is not None or not d.pointer for d in error.diagnostics):
        return error
    fixed = [
        d
        if d.span is not None or not d.pointer
        else dataclasses.replace(d, span=locate(data, d.pointer, budgets))
        for d in error.diagnostics
    ]
    return DotBoxDError(fixed)


def read_document_bytes(path: str | os.PathLike[str], budgets: JsonBudgets) -> bytes:
    """A JSON file's bytes, reading at most one byte past ``budgets.max_document_bytes`` (so a
    huge file costs no more memory than the budget; ``read_json`` then refuses it as too large).
    OSError propagates: an unreadable file is the caller's I/O error, not a verdict."""
    with open(path, "rb") as stream:
        return stream.read(budgets.max_document_bytes + 1)


def _plain(document: Document) -> Any:
    """Scanned values -> Python values, with an explicit stack (the tree may be as deep as the
    budget allows, far past what recursion should be trusted with)."""
    result: list[Any] = [None]
    # (scanned value, the dict or list to store its Python value in, the key or index there)
    work: list[tuple[JValue, Any, Any]] = [(document.root, result, 0)]
    while work:
        value, into, slot = work.pop()
        if isinstance(value, JObject):
            plain: Any = {}
            # members keep their document order: fill the dict now, then replace the scanned
            # children as they are converted
            for name, member in value.members.items():
                plain[name] = None
                work.append((member, plain, name))
        elif isinstance(value, JArray):
            plain = [None] * len(value.items)
            for index in range(len(value.items) - 1, -1, -1):
                work.append((value.items[index], plain, index))
        elif isinstance(value, JString):
            plain = value.value
        elif isinstance(value, JNumber):
            plain = _number(value, document)
        elif isinstance(value, JBool):
            plain = value.value
        else:
            plain = None
        into[slot] = plain
    return result[0]


def _number(value: JNumber, document: Document) -> int | float:
    lexeme = value.lexeme
    if not value.is_integer_lexeme:
        return float(lexeme)
    if len(lexeme.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise reject(
            "E-JSON-LIMIT",
            f"an integer has more than {MAX_INTEGER_DIGITS} digits",
            span=document.span(value.offset),
            hint="no integer the project reads is that long",
            limit=MAX_INTEGER_DIGITS,
        )
    return int(lexeme)
