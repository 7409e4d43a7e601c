"""Import of a 1 MiB, ~10k-node module, side by side with ``json.loads`` on the same bytes.

Run with ``make bench`` (pytest-benchmark); the ratio import/json.loads is reported in the README.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from dotboxd.grammar.wire import import_module

from .big_module import big_module_text


@functools.cache
def _doc() -> bytes:
    """The 1 MiB module, built on first use (not at collection, which every test run pays)."""
    return big_module_text().encode("utf-8")


@pytest.mark.benchmark(group="import-1MiB")
def test_bench_import_module(benchmark: Any) -> None:
    module = benchmark(import_module, _doc())
    assert module.id == "big"


@pytest.mark.benchmark(group="import-1MiB")
def test_bench_json_loads(benchmark: Any) -> None:
    data = benchmark(json.loads, _doc())
    assert data["id"] == "big"


def test_document_is_at_the_budget() -> None:
    """The benchmark document really is about 1 MiB and about 10k nodes (not a toy)."""
    assert 1_000_000 <= len(_doc()) <= 1024 * 1024
    body = import_module(_doc()).functions[0].body
    assert 9_000 <= 7 * len(body) <= 11_000
