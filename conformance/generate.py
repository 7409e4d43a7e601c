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

A generator is a compression format, so it is bounded like one (``conformance serve`` expands the
generators of requests it did not write): every ``count`` is at most ``MAX_COUNT``, ``padToBytes``
at most ``MAX_OUTPUT_BYTES``, there are at most ``MAX_FILLS`` fills, each fill is expanded once,
and every text is sized and charged against ``MAX_WORK_CHARS`` before it is built.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dotboxd.conformance.errors import CaseFormatError

PLACEHOLDER = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")
INDEX = "INDEX"  # reserved: the repetition number inside a ``repeat`` text
NUMBERED = "${" + INDEX + "}"
GENERATOR_KEYS = frozenset({"template", "fills", "padToBytes"})
MAX_OUTPUT_BYTES = 8 * 1024 * 1024  # the expanded text, padding included: far above every budget
MAX_WORK_CHARS = 2 * MAX_OUTPUT_BYTES  # every text built on the way (intermediate fills included)
MAX_COUNT = 1_000_000  # ten times the largest count a budget case needs
MAX_FILLS = 64
_CHUNK = 4096  # numbered copies joined per chunk, so no list of a million strings is ever built


def check_generator(spec: Any, where: str) -> None:
    """Validate a generator's shape and bound every number in it (cheaply: without expanding it)."""
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
    if len(fills) > MAX_FILLS:
        raise CaseFormatError(where, f"at most {MAX_FILLS} fills")
    for name, fill in fills.items():
        if not PLACEHOLDER.fullmatch("${" + name + "}") or name == INDEX:
            raise CaseFormatError(where, f"fill name {name!r} must match [A-Z][A-Z0-9_]* and not be {INDEX}")
        _check_fill(fill, f"{where} fills.{name}")
    pad = spec.get("padToBytes")
    if pad is not None and (
        not isinstance(pad, int) or isinstance(pad, bool) or not 0 <= pad <= MAX_OUTPUT_BYTES
    ):
        raise CaseFormatError(where, f"'padToBytes' must be an integer in 0..{MAX_OUTPUT_BYTES}")


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
    """The exact module text a generator describes. The shape is checked again here (it is cheap),
    so a generator that reached this point unchecked (a ``serve`` request) is bounded too."""
    check_generator(spec, where)
    text = _Expansion(spec.get("fills", {}), where).text(str(spec["template"]), ())
    if NUMBERED in text:
        raise CaseFormatError(where, "${INDEX} is only meaningful inside a 'repeat' text")
    if len(text) > MAX_OUTPUT_BYTES:  # a character is at least one UTF-8 byte
        raise CaseFormatError(where, f"expands past {MAX_OUTPUT_BYTES} bytes")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_OUTPUT_BYTES:
        raise CaseFormatError(where, f"expands past {MAX_OUTPUT_BYTES} bytes")
    pad = spec.get("padToBytes")
    if pad is not None:
        if size > pad:
            raise CaseFormatError(where, f"the text is already {size} bytes, more than padToBytes {pad}")
        text += " " * (pad - size)
    return text


class _Expansion:
    """One expansion: each fill is expanded once (its text does not depend on where it is used:
    ``${INDEX}`` stays literal until the enclosing ``repeat`` numbers it), and the size of every
    text is computed and charged against ``MAX_WORK_CHARS`` *before* it is built, so a recipe
    that asks for gigabytes is refused having allocated almost nothing, and a chain of fills that
    refer to each other twice costs linear, not exponential, time."""

    def __init__(self, fills: Mapping[str, Any], where: str) -> None:
        self.fills = fills
        self.where = where
        self.done: dict[str, str] = {}
        self.work = 0

    def charge(self, size: int) -> None:
        self.work += size
        if self.work > MAX_WORK_CHARS:
            raise CaseFormatError(
                self.where, f"expands past {MAX_WORK_CHARS} characters (intermediate texts included)"
            )

    def text(self, text: str, active: tuple[str, ...]) -> str:
        parts = PLACEHOLDER.split(text)  # literal, name, literal, name, ..., literal
        if len(parts) == 1:
            return text
        for index in range(1, len(parts), 2):
            name = parts[index]
            parts[index] = NUMBERED if name == INDEX else self.fill(name, active)
        self.charge(sum(map(len, parts)))
        return "".join(parts)

    def fill(self, name: str, active: tuple[str, ...]) -> str:
        done = self.done.get(name)
        if done is not None:
            return done
        if name in active:
            raise CaseFormatError(self.where, f"fill {name!r} refers to itself through {' -> '.join(active)}")
        if name not in self.fills:
            raise CaseFormatError(self.where, f"placeholder ${{{name}}} has no fill")
        fill = self.fills[name]
        inside = (*active, name)
        count = int(fill["count"])
        if "repeat" in fill:
            item = self.text(str(fill["repeat"]), inside)
            separator = self.text(str(fill.get("separator", "")), inside)
            # a number has at most 7 digits (count <= 1,000,000), fewer than "${INDEX}"'s 8
            # characters, so a numbered copy is never longer than the item
            self.charge(count * len(item) + max(count - 1, 0) * len(separator))
            result = (
                _numbered(item, separator, count) if NUMBERED in item else _repeated(item, separator, count)
            )
        else:
            open_text, close_text = (self.text(str(part), inside) for part in fill["nest"])
            inner = self.text(str(fill.get("inner", "")), inside)
            self.charge(count * (len(open_text) + len(close_text)) + len(inner))
            result = open_text * count + inner + close_text * count
        self.done[name] = result
        return result


def _repeated(item: str, separator: str, count: int) -> str:
    if count == 0:
        return ""
    return (item + separator) * (count - 1) + item


def _numbered(item: str, separator: str, count: int) -> str:
    chunks = [
        separator.join(
            item.replace(NUMBERED, str(index)) for index in range(start, min(start + _CHUNK, count))
        )
        for start in range(0, count, _CHUNK)
    ]
    return separator.join(chunks)
