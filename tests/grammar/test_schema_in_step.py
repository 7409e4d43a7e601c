"""spec/schema/kernel-module.schema.json names the same vocabulary as the AST and importer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dotboxd.core import ast
from dotboxd.grammar.wire import STATEMENT_OPS

SCHEMA: dict[str, Any] = json.loads(Path("spec/schema/kernel-module.schema.json").read_text("utf-8"))


def test_statement_ops_match() -> None:
    assert SCHEMA["$defs"]["statement"]["properties"]["op"]["enum"] == list(STATEMENT_OPS)
    shapes = SCHEMA["$defs"]["statement"]["oneOf"]
    assert [s["properties"]["op"]["const"] for s in shapes] == list(STATEMENT_OPS)


def test_operators_match() -> None:
    shapes = SCHEMA["$defs"]["expression"]["oneOf"]
    binary = next(s for s in shapes if "left" in s.get("properties", {}))
    unary = next(s for s in shapes if "unary" in s.get("properties", {}))
    assert binary["properties"]["op"]["enum"] == [op.value for op in ast.BinaryOp]
    assert unary["properties"]["unary"]["enum"] == [op.value for op in ast.UnaryOp]


def test_literal_keys_match() -> None:
    keys = [next(iter(s["properties"])) for s in SCHEMA["$defs"]["literal"]["oneOf"]]
    assert keys == [kind.value for kind in ast.LiteralKind]
