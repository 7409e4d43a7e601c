"""``moduleTextGenerator``: budget-sized module texts described in a few lines instead of megabytes.

Import budgets are tested at N and N+1 (a 1 MiB document, 100,000 tokens, 64 levels of nesting),
and writing those documents into case files would bloat the repository. A generator is a template
with ``${NAME}`` placeholders plus named fills:

* ``{"repeat": TEXT, "count": N, "separator": SEP}``  TEXT repeated N times, joined by SEP, where
  ``${INDEX}`` in TEXT becomes the 0-based repetition number (for distinct property names);
* ``{"nest": [OPEN, CLOSE], "count": N, "inner": TEXT}``  OPEN*N + TEXT + CLOSE*N;

fill texts may contain placeholders themselves (expanded recursively, no cycles). ``padToBytes``
then appends spaces (insignificant JSON whitespace) up to an exact UTF-8 size. The runner expands
generators itself, so implementations behind ``--impl`` only ever see plain ``moduleText``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dotboxd.conformance.errors import CaseFormatError

PLACEHOLDER = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")
INDEX = "INDEX"  # reserved: the repetition number inside a ``repeat`` text
GENERATOR_KEYS = frozenset({"template", "fills", "padToBytes"})
MAX_OUTPUT_BYTES = 8 * 1024 * 1024  # far above every budget; stops a typo from eating memory
MAX_COUNT = 10_000_000


def check_generator(spec: Any, where: str) -> None:
    """Validate a generator's shape (cheaply: without expanding it)."""
    if not isinstance(spec, dict):
        raise CaseFormatError(where, "must be an object")
    unknown = sorted(set(spec) - GENERATOR_KEYS)
    if unknown:
        raise CaseFormatError(where, f"unknown key(s) {', '.join(map(repr, unknown))}")
    if not isinstance(spec.get("template"), str):
        raise CaseFormatError(where, "needs a string 'template'")
    fills = spec.get("fills", {})
    if not isinstance(fills, dict):
        raise CaseFormatError(where, "'fills' must be an object")
    for name, fill in fills.items():
        if not PLACEHOLDER.fullmatch("${" + name + "}") or name == INDEX:
            raise CaseFormatError(where, f"fill name {name!r} must match [A-Z][A-Z0-9_]* and not be {INDEX}")
        _check_fill(fill, f"{where} fills.{name}")
    pad = spec.get("padToBytes")
    if pad is not None and (not isinstance(pad, int) or isinstance(pad, bool) or pad < 0):
        raise CaseFormatError(where, "'padToBytes' must be a non-negative integer")


def _check_fill(fill: Any, where: str) -> None:
    if not isinstance(fill, dict):
        raise CaseFormatError(where, "must be an object")
    count = fill.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_COUNT:
        raise CaseFormatError(where, f"'count' must be an integer in 0..{MAX_COUNT}")
    if "repeat" in fill:
        allowed = {"repeat", "count", "separator"}
        texts = [fill["repeat"], fill.get("separator", "")]
    elif "nest" in fill:
        allowed = {"nest", "count", "inner"}
        nest = fill["nest"]
        if not (isinstance(nest, list) and len(nest) == 2):
            raise CaseFormatError(where, "'nest' must be [OPEN, CLOSE]")
        texts = [*nest, fill.get("inner", "")]
    else:
        raise CaseFormatError(where, "a fill is either {'repeat': ...} or {'nest': [...]}")
    unknown = sorted(set(fill) - allowed)
    if unknown:
        raise CaseFormatError(where, f"unknown key(s) {', '.join(map(repr, unknown))}")
    if not all(isinstance(text, str) for text in texts):
        raise CaseFormatError(where, "fill texts must be strings")


def expand_generator(spec: Mapping[str, Any], where: str = "moduleTextGenerator") -> str:
    """The exact module text a generator describes (shape must already be checked)."""
    fills: Mapping[str, Any] = spec.get("fills", {})
    text = _expand(str(spec["template"]), fills, where, ())
    pad = spec.get("padToBytes")
    if pad is not None:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > pad:
            raise CaseFormatError(where, f"the text is already {size} bytes, more than padToBytes {pad}")
        text += " " * (pad - size)
    return text


def _expand(text: str, fills: Mapping[str, Any], where: str, active: tuple[str, ...]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == INDEX:
            return match.group(0)  # left for the enclosing ``repeat`` to number
        if name in active:
            raise CaseFormatError(where, f"fill {name!r} refers to itself through {' -> '.join(active)}")
        if name not in fills:
            raise CaseFormatError(where, f"placeholder ${{{name}}} has no fill")
        return _fill(fills[name], fills, where, (*active, name))

    result = PLACEHOLDER.sub(replace, text)
    if not active and "${" + INDEX + "}" in result:
        raise CaseFormatError(where, "${INDEX} is only meaningful inside a 'repeat' text")
    if len(result) > MAX_OUTPUT_BYTES:
        raise CaseFormatError(where, f"expands past {MAX_OUTPUT_BYTES} characters")
    return result


def _fill(fill: Mapping[str, Any], fills: Mapping[str, Any], where: str, active: tuple[str, ...]) -> str:
    count = int(fill["count"])
    if "repeat" in fill:
        item = _expand(str(fill["repeat"]), fills, where, active)
        separator = _expand(str(fill.get("separator", "")), fills, where, active)
        numbered = "${" + INDEX + "}"
        size = count * (len(item) + len(separator) + (len(str(count)) if numbered in item else 0))
        _guard(size, where)
        if numbered in item:
            return separator.join(item.replace(numbered, str(index)) for index in range(count))
        return separator.join([item] * count)
    open_text, close_text = (_expand(str(part), fills, where, active) for part in fill["nest"])
    inner = _expand(str(fill.get("inner", "")), fills, where, active)
    _guard(count * (len(open_text) + len(close_text)) + len(inner), where)
    return open_text * count + inner + close_text * count


def _guard(size: int, where: str) -> None:
    if size > MAX_OUTPUT_BYTES:
        raise CaseFormatError(where, f"expands past {MAX_OUTPUT_BYTES} characters")
