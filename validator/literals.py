"""Pass 7, literals: every constant is a valid value of its kind and small enough to run.

Invariants established (the importer enforces the same rules for JSON input; this pass keeps them
for ASTs built in Python or from the text form, and adds the policy-dependent size rule):

* ``i32``/``i64`` literals are integers within range, ``bool`` literals are booleans, ``unit`` is
  None (E-CONST-RANGE);
* ``f64`` literals are finite (E-CONST-FLOAT);
* a string literal is at most ``min(65,536, policy maxStringLength)`` UTF-16 code units
  (E-CONST-HUGE, with the limit and the literal's length as evidence): a constant that could never
  be materialised at run time is rejected before the kernel runs;
* ``guid``, ``path`` and ``uri`` texts obey the wire rules (E-JSON-GUID, E-JSON-PATH, E-JSON-URI:
  the same code whichever source form the module came from);
* an opaque id's value holds no path traversal (``..``: E-JSON-ID) and is 1-256
  characters of ``[A-Za-z0-9_.:-]`` (E-JSON-OPAQUE);
* no literal text names host machinery (E-IR-CLR-REF).
"""

from __future__ import annotations

import math

from dotboxd.core.ast import Literal, LiteralKind
from dotboxd.grammar.literals import (
    dangerous_fragment,
    guid_problem,
    opaque_value_code,
    opaque_value_problem,
    path_problem,
    uri_problem,
)

from .context import Context

MAX_CONSTANT_UTF16 = 65_536
_RANGES = {LiteralKind.I32: (-(2**31), 2**31 - 1), LiteralKind.I64: (-(2**63), 2**63 - 1)}
_TEXT_RULES = {
    LiteralKind.GUID: ("E-JSON-GUID", guid_problem),
    LiteralKind.PATH: ("E-JSON-PATH", path_problem),
    LiteralKind.URI: ("E-JSON-URI", uri_problem),
    LiteralKind.OPAQUE_ID: ("E-JSON-OPAQUE", opaque_value_problem),
}


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units (astral characters count 2)."""
    n = len(text)
    if text.isascii():
        return n
    return n + sum(1 for ch in text if ord(ch) > 0xFFFF)


def run(ctx: Context) -> None:
    limit = min(MAX_CONSTANT_UTF16, ctx.policy.limits.max_string_length)
    seen: set[int] = set()
    for lit in ctx.literals:
        if id(lit) in seen:
            continue
        seen.add(id(lit))
        _check(ctx, lit, limit)


def _check(ctx: Context, lit: Literal, limit: int) -> None:
    kind, value = lit.kind, lit.value
    if kind in _RANGES:
        lo, hi = _RANGES[kind]
        if type(value) is not int or not lo <= value <= hi:
            ctx.report(
                "E-CONST-RANGE",
                f"{kind.value} literal {value!r} is not an integer in [{lo}, {hi}]",
                lit.pointer,
                lit.span,
                "use i64 for larger integers" if kind is LiteralKind.I32 else "",
                value=repr(value),
                min=lo,
                max=hi,
            )
        return
    if kind is LiteralKind.F64:
        if type(value) is not float or not math.isfinite(value):
            ctx.report(
                "E-CONST-FLOAT",
                f"f64 literal {value!r} is not a finite number",
                lit.pointer,
                lit.span,
                "F64 values are always finite",
                value=repr(value),
            )
        return
    if kind is LiteralKind.BOOL or kind is LiteralKind.UNIT:
        ok = type(value) is bool if kind is LiteralKind.BOOL else value is None
        if not ok:
            ctx.report(
                "E-CONST-RANGE", f"{kind.value} literal has the value {value!r}", lit.pointer, lit.span
            )
        return
    if not isinstance(value, str):
        ctx.report(
            "E-CONST-RANGE", f"{kind.value} literal must carry text, got {value!r}", lit.pointer, lit.span
        )
        return
    if kind is LiteralKind.STRING:
        length = utf16_length(value)
        if length > limit:
            ctx.report(
                "E-CONST-HUGE",
                f"string literal of {length} UTF-16 code units exceeds the constant limit of {limit}",
                lit.pointer,
                lit.span,
                "build large text at run time within the budget, or raise maxStringLength",
                length=length,
                limit=limit,
            )
            return
    else:
        code, rule = _TEXT_RULES[kind]
        problem = rule(value)
        if problem is not None and kind is LiteralKind.OPAQUE_ID:
            code = opaque_value_code(value)
        if problem is not None:
            ctx.report(
                code,
                f"{kind.value} literal '{value[:80]}' {problem}",
                lit.pointer,
                lit.span,
                value=value[:200],
            )
            return
    fragment = dangerous_fragment(value)
    if fragment is not None:
        ctx.report(
            "E-IR-CLR-REF",
            f"{kind.value} literal names host machinery ('{fragment}')",
            lit.pointer,
            lit.span,
            "kernels reach the host only through registered bindings",
            fragment=fragment,
        )
