"""Request bodies from the caller's values, as JSON text that never fails to encode.

An in-process ``execute(..., encoding="json")`` answers an input JSON cannot carry (a set, bytes, an
object, a NaN or an infinity, nested anywhere in the args) with a failed run, ``R-VALUE-TYPE`` at
its pointer. httpx's own ``json=`` encoding raised ``TypeError``/``ValueError`` in the client
instead, before anything was sent. Here such a value is written so that the server gives the
in-process answer: a non-finite float as the number ``1e999`` (read as too large for an F64: "F64
values must be finite", the message a NaN or an infinity gets in process), any other value as its
type's name (a string: "expected ..." at its pointer), a dict key that is not text as JSON spells
it (``1`` -> ``"1"``) or as its type's name. Nesting deeper than the server reads (64) is written
as it is up to one level past, where the server's depth refusal answers it.
"""

from __future__ import annotations

import json
import math

_DEEPEST = 66
"""One level past what the server reads (``httpio.REQUEST_MAX_DEPTH``): deeper values are not
walked (their type's name is written), so the walk stays bounded; the server refuses the depth."""


def request_json(value: object) -> bytes:
    """``value`` as JSON text (UTF-8): the caller's values, never an encoding error."""
    parts: list[str] = []
    _write(value, parts, 0)
    return "".join(parts).encode()


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(key)  # what json.dumps makes of such a key: 1 -> "1", True -> "true"
    return type(key).__name__


def _write(value: object, parts: list[str], depth: int) -> None:
    if value is None or isinstance(value, bool | str):
        parts.append(json.dumps(value))
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        finite = math.isfinite(value)
        parts.append(float.__repr__(value) if finite else ("-1e999" if value < 0 else "1e999"))
    elif isinstance(value, dict | list | tuple) and depth < _DEEPEST:
        if isinstance(value, dict):
            parts.append("{")
            for index, (key, item) in enumerate(value.items()):
                parts.append(("," if index else "") + json.dumps(_key(key)) + ":")
                _write(item, parts, depth + 1)
            parts.append("}")
        else:
            parts.append("[")
            for index, item in enumerate(value):
                if index:
                    parts.append(",")
                _write(item, parts, depth + 1)
            parts.append("]")
    else:
        parts.append(json.dumps(type(value).__name__))
