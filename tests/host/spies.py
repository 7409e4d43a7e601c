"""Spies on the host's internals that several host tests share (the dispatch cache's misses)."""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.host import SandboxHost


def count_preparations(host: SandboxHost, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Spy on the host's dispatch misses: each entry is the id of a plan that had to be prepared.

    Why a spy rather than a counter on the host: the dispatch cache is an internal the public API
    does not expose, and the tests must see every miss in order (LRU order, eviction, release)."""
    misses: list[int] = []
    prepare = host._prepare_dispatch

    def counting(plan: Any, *rest: Any) -> Any:
        misses.append(id(plan))
        return prepare(plan, *rest)

    monkeypatch.setattr(host, "_prepare_dispatch", counting)
    return misses
