"""Measuring a JSON document by the six import budgets of wire format v1 (spec/ir.md section 1).

The budget cases claim to sit exactly at a limit or one unit over it; this module measures a text
independently of the importer (with the standard library's parser, which is fine for the
well-formed, duplicate-free documents the budget cases generate) so a test can hold each claim to
the definition: a token is an opener, a closer, a property name or a scalar; depth counts nested
arrays and objects; string sizes are UTF-8 bytes of the decoded value, keys included.
"""

from __future__ import annotations

import json
from typing import Any

LIMITS: dict[str, int] = {
    "documentBytes": 1024 * 1024,
    "depth": 64,
    "tokens": 100_000,
    "items": 10_000,
    "stringBytes": 65_536,
    "totalStringBytes": 524_288,
}


def measure(text: str) -> dict[str, int]:
    """The budget metrics (keyed like ``LIMITS``) of a well-formed JSON text; iterative, so depth
    never recurses."""
    metrics = dict.fromkeys(LIMITS, 0)
    metrics["documentBytes"] = len(text.encode("utf-8"))
    stack: list[tuple[Any, int]] = [(json.loads(text), 1)]
    while stack:
        value, depth = stack.pop()
        metrics["tokens"] += 1
        if isinstance(value, dict | list):
            metrics["tokens"] += 1  # the closer
            metrics["depth"] = max(metrics["depth"], depth)
            metrics["items"] = max(metrics["items"], len(value))
            if isinstance(value, dict):
                for key, item in value.items():
                    metrics["tokens"] += 1
                    _string(metrics, key)
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            _string(metrics, value)
    return metrics


def _string(metrics: dict[str, int], text: str) -> None:
    size = len(text.encode("utf-8"))
    metrics["stringBytes"] = max(metrics["stringBytes"], size)
    metrics["totalStringBytes"] += size
