"""Builds a large, valid wire module (about 1 MiB, about 10k AST nodes) for import benchmarks."""

from __future__ import annotations

import json


def big_module_text(target_bytes: int = 1_000_000) -> str:
    """A module whose body is a long run of `set` statements with string padding up to ``target_bytes``."""
    body: list[object] = []
    pad = "p" * 200
    i = 0
    while True:
        body.append(
            {
                "op": "set",
                "name": f"local_{i}",
                "value": {
                    "op": "add",
                    "left": {"call": "string.length", "args": [{"string": f"{pad}{i}"}]},
                    "right": {"op": "mul", "left": {"i32": i}, "right": {"var": "seed"}},
                },
            }
        )
        i += 1
        if i % 100 == 0:
            doc = _module(body)
            if len(doc.encode("utf-8")) >= target_bytes:
                while len(doc.encode("utf-8")) > 1024 * 1024:
                    body.pop()
                    doc = _module(body)
                return doc


def _module(body: list[object]) -> str:
    module = {
        "id": "big",
        "version": "1.0.0",
        "functions": [
            {
                "id": "main",
                "visibility": "entrypoint",
                "parameters": [{"name": "seed", "type": "I32"}],
                "returnType": "I32",
                "body": [*body, {"op": "return", "value": {"i32": 0}}],
            }
        ],
    }
    return json.dumps(module, indent=2)
