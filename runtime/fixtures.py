"""Declarative fixture bindings: the ``behavior`` of a conformance-case or CLI binding entry.

A case file (and ``dotboxd run --bindings``) declares host bindings as data; this module turns a
``behavior`` object into the Python callable the runtime invokes, so that declared bindings can be
exercised without writing host code. Kinds (see ``conformance/README.md``):

``return {value}``, ``echo {arg}``, ``sequence {values}`` (then the last value again),
``raise {message}`` (a host exception; its message must never reach the result), ``pending`` (an
awaitable that never completes), ``async-return {value}`` (an awaitable that completes after one
suspension), ``sleep {ms, value}``, ``foreign`` (returns a host object of an unrelated type) and
``malformed {value}`` (returns the raw JSON value without decoding it, e.g. ``"../x"`` for a path).

Values are in the conformance typed encoding and decoded by the binding's declared return type.
Each invoker counts its invocations in ``calls`` (over its lifetime; a run's own count is in the run
result's ``binding_calls``).

Fixture state is per run: a ``sequence`` indexes its values by the calls *of the current run*, which
it reads from the binding context (``BindingContext.calls_so_far``, counted by the runtime on every
backend), not by a counter of its own. So one catalogue can serve any number of runs, on any backend,
in any order or concurrently, and every run replays the sequence from its start. Invokers that want
the context say so with ``takes_context``; ``BindingCatalog.with_invokers`` honours it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from dotboxd.core import literal_rules
from dotboxd.core.types import SandboxType, to_type_ref
from dotboxd.core.values import SandboxFault, decode_typed
from dotboxd.runtime.context import BindingContext

BEHAVIOR_KINDS = frozenset(
    {"return", "echo", "sequence", "raise", "pending", "async-return", "sleep", "foreign", "malformed"}
)


class _Foreign:
    """A host object of an unrelated type (what a careless binding might hand back)."""

    def __repr__(self) -> str:
        return "<host object>"


class FixtureInvoker:
    """A callable binding implementation built from a ``behavior`` object."""

    def __init__(self, behavior: Mapping[str, Any], return_type: SandboxType) -> None:
        kind = behavior.get("kind")
        if kind not in BEHAVIOR_KINDS:
            raise ValueError(f"unknown behavior kind {kind!r}")
        self.kind: str = str(kind)
        self.behavior = dict(behavior)
        self.return_type = return_type
        self.calls = 0
        #: a ``sequence`` is called with the run's binding context first (see the module docstring)
        self.takes_context = self.kind == "sequence"

    def _decode(self, data: Any) -> Any:
        try:
            return decode_typed(data, to_type_ref(self.return_type), literal_rules)
        except SandboxFault:
            return data  # not a valid encoded value: hand it over raw, the runtime must refuse it

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        b = self.behavior
        kind = self.kind
        if kind == "return":
            return self._decode(b.get("value"))
        if kind == "echo":
            return args[int(b["arg"])]
        if kind == "sequence":
            context = args[0]
            if not isinstance(context, BindingContext):
                raise TypeError("a sequence fixture is called with its binding context first")
            values = list(b.get("values", []))
            if not values:
                return None
            index = context.calls_so_far - 1  # the runtime counted this call before invoking it
            return self._decode(values[min(index, len(values) - 1)])
        if kind == "raise":
            raise RuntimeError(str(b.get("message", "fixture failure")))
        if kind == "pending":
            return _never()
        if kind == "async-return":
            return _later(self._decode(b.get("value")))
        if kind == "sleep":
            time.sleep(max(0, int(b.get("ms", 0))) / 1000.0)
            return self._decode(b.get("value"))
        if kind == "foreign":
            return _Foreign()
        return b.get("value")  # malformed: the raw value, undecoded


def _never() -> Coroutine[Any, Any, Any]:
    async def wait_forever() -> Any:
        await asyncio.Event().wait()

    return wait_forever()


def _later(value: Any) -> Coroutine[Any, Any, Any]:
    async def complete() -> Any:
        await asyncio.sleep(0)
        return value

    return complete()


def fixture_invokers(
    entries: list[Mapping[str, Any]], return_types: Mapping[str, SandboxType]
) -> dict[str, Callable[..., Any]]:
    """Invokers for every entry with a ``behavior``, by binding id."""
    out: dict[str, Callable[..., Any]] = {}
    for entry in entries:
        behavior = entry.get("behavior")
        bid = entry.get("id")
        if isinstance(behavior, Mapping) and isinstance(bid, str) and bid in return_types:
            out[bid] = FixtureInvoker(behavior, return_types[bid])
    return out
