"""Hints written for the wire form, re-spelled for a module that came from the text form.

Why: the validator sees only the AST, not which form it was parsed from, so a hint that shows a
piece of module (how a Unit function returns, how to compare) is written once in wire JSON. A reader
of a ``.dbk`` file must not be told to write ``{"unit": true}``: the tools that know the source
form (the CLI, ``SandboxHost.prepare``) pass such an error through :func:`for_text_form`, which
replaces each wire spelling below by its text spelling. The table lives here, beside both parsers,
because it is a fact about the two syntaxes.
"""

from __future__ import annotations

import dataclasses

from dotboxd.core.diagnostics import DotBoxDError

TEXT_SPELLINGS: tuple[tuple[str, str], ...] = (
    ('return {"unit": true}', "`return ();`"),
    ('{"unit": true}', "`()`"),
    ('{"op": "ne", ...}', "`x != 0`"),
    ('{"op": "eq", ...}', "`x == 0`"),
)
"""(wire spelling, text spelling) pairs, longest first where one contains another."""


def text_hint(hint: str) -> str:
    """``hint`` with every wire spelling of :data:`TEXT_SPELLINGS` replaced by its text spelling."""
    for wire, text in TEXT_SPELLINGS:
        hint = hint.replace(wire, text)
    return hint


def for_text_form(error: DotBoxDError) -> DotBoxDError:
    """The same error with its hints in text syntax (a new error; ``error`` is not changed)."""
    diagnostics = [dataclasses.replace(d, hint=text_hint(d.hint)) for d in error.diagnostics]
    if all(new.hint == old.hint for new, old in zip(diagnostics, error.diagnostics, strict=True)):
        return error
    return DotBoxDError(diagnostics)


def spelled_for(error: DotBoxDError, kind: str) -> DotBoxDError:
    """``error`` as its reader should see it: re-spelled for the text form (``kind == "text"``),
    unchanged for wire JSON and the Python front."""
    return for_text_form(error) if kind == "text" else error
