"""Generated predicates over a host event, on the fast lane, against the reference at swept limits.

Why: the lane's event path (``event_lane.run_event``: the one-pass reader of ``core.event_maps``, the
input's charges kept per key set, the fused literal reads of ``literal_reads``, the pending counters
handed to a meter built part way) is held to the reference on hand-picked kernels elsewhere
(``test_fast_lane_charged.py``, ``tests/optimized/test_literal_reads.py``); the fast-form fuzzers
(``tests/optimized/chunk_fuzz.py``) feed integer vectors only, so no generated kernel ever reached
that path. Here seeded kernels read a ``Map<String, I32|I64>`` event - ``map.get`` and
``map.containsKey`` at literals (fused), ``map.count``, ``map.keys`` walked in a loop, a
``map.set`` version read back, text literals measured, early returns, missing keys (an error) - and
each event runs under the fuel budgets around what it needs and the text, allocation, element and
map-size limits around its usage, three times on the optimized backend (compiling, binding the
lane, on the lane), every observable compared (``differential.observe``).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest

from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized.codegen import generate
from dotboxd.runtime.optimized.inline_reads import fallback_of
from dotboxd.validator.plan import ExecutionPlan

from ..optimized.differential import differences, observe
from ..optimized.kernels import prepare

FIELDS = ("hp", "level", "x", "a", "zz", "k0", "armor")
"""The keys events hold and kernels read (a kernel may read one an event lacks)."""

ROOM = {"max_fuel": 10**9, "max_wall_time_ms": 60_000}
"""No run reaches these: the swept limit is the one that refuses."""


class _Kernel:
    """One seeded predicate ``check(ev Map<String, T>) -> Bool`` (``T`` I32 or I64)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.kind = self.r.choice(("I32", "I32", "I64"))
        self.zero = "0" if self.kind == "I32" else "numeric.toI64(0)"
        body = [f"t = {self.zero};", *(self.statement() for _ in range(self.r.randrange(1, 6)))]
        body.append(f"return t > {self.zero} || {self.test(1)};")
        lines = "\n    ".join(body)
        self.text = (
            f'module "f" version "1.0.0";\nentrypoint fn check(ev Map<String, {self.kind}>) -> Bool {{\n'
            f"    {lines}\n}}\n"
        )

    def literal(self) -> str:
        return f'"{self.r.choice(FIELDS)}"'

    def number(self, depth: int) -> str:
        r = self.r
        choice = r.randrange(11 if depth > 0 else 4)
        if choice == 0:
            constant = r.randrange(-3, 20)
            return str(constant) if self.kind == "I32" else f"numeric.toI64({constant})"
        if choice in (1, 2, 3):
            return f"map.get(ev, {self.literal()})"
        if choice == 4:
            return "t"
        if choice == 5 and self.kind == "I32":
            return r.choice(("map.count(ev)", f"string.length({self.literal()})"))
        if choice == 6:
            return f"map.get(map.set(ev, {self.literal()}, {self.number(0)}), {self.literal()})"
        op = r.choice(("+", "-", "*", "/"))
        return f"({self.number(depth - 1)} {op} {self.number(depth - 1)})"

    def test(self, depth: int) -> str:
        choice = self.r.randrange(4 if depth > 0 else 2)
        if choice == 0:
            return f"map.containsKey(ev, {self.literal()})"
        if choice == 2:
            return f"({self.test(depth - 1)} && {self.test(depth - 1)})"
        if choice == 3:
            return f"!({self.test(depth - 1)})"
        op = self.r.choice((">", "<", "==", ">=", "!="))
        return f"({self.number(1)} {op} {self.number(1)})"

    def statement(self) -> str:
        choice = self.r.randrange(5)
        if choice == 0:
            return f"t = t + {self.number(2)};"
        if choice == 1:
            return f"if {self.test(2)} {{ t = t + {self.number(1)}; }} else {{ t = t - {self.zero}; }}"
        if choice == 2:
            reps = self.r.randrange(0, 80)
            return f"for i in 0 .. {reps} {{ if {self.test(1)} {{ t = t + {self.number(1)}; }} }}"
        if choice == 3:
            return f"if {self.test(1)} {{ return {self.test(1)}; }}"
        return "ks = map.keys(ev); for i in 0 .. list.count(ks) { t = t + map.get(ev, list.get(ks, i)); }"

    def events(self, count: int) -> list[dict[str, Any]]:
        r = self.r
        made = []
        for _ in range(count):
            keys = list(FIELDS) if r.random() < 0.75 else [r.choice(FIELDS) for _ in range(r.randrange(7))]
            if r.random() < 0.3:
                keys.append("q" * r.randrange(1, 30))  # a longer key: another shape
            if r.random() < 0.1:
                keys.append("\u00e9")  # a non-ASCII key: the general reader, a UTF-16 scope
            r.shuffle(keys)
            made.append({key: r.randrange(-5, 40) for key in keys})
        return made


def _limits(usage: dict[str, int], event: dict[str, Any], r: random.Random) -> Iterator[dict[str, int]]:
    """The limits one event runs under, around what its unlimited run used."""
    fuel = usage["fuelUsed"]
    for budget in sorted({0, 1, fuel - 1, fuel, fuel + 1, *(r.randrange(fuel + 2) for _ in range(4))}):
        if budget >= 0:
            yield {"max_fuel": budget}
    for limit, counter in (
        ("max_total_string_bytes", "stringBytes"),
        ("max_allocated_bytes", "allocatedBytes"),
        ("max_total_collection_elements", "collectionElements"),
    ):
        for value in {usage[counter] - 1, usage[counter]}:
            if value >= 0:
                yield {limit: value}
    for entries in (len(event) - 1, len(event)):
        if entries >= 0:
            yield {"max_map_entries": entries}
    yield {"max_string_length": r.choice((1, 2, 4, 5))}


def _sweep(seed: int) -> tuple[int, int]:
    """Every event of kernel ``seed`` under every limit: (runs compared, runs the lane left pending)."""
    kernel = _Kernel(seed)
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache(capacity=8))})
    base: ExecutionPlan = host.prepare(kernel.text, Policy.builder().with_limits(**ROOM).build())
    runs = pending = 0
    for event in kernel.events(3):
        usage = observe(host.execute(base, "check", [event]))["usage"]
        for limits in _limits(usage, event, kernel.r):
            plan = dataclasses.replace(
                base, policy=Policy.builder().with_limits(**{**ROOM, **limits}).build()
            )
            reference = observe(host.execute(plan, "check", [event]))
            for attempt in ("compiling", "binding the lane", "on the lane"):
                result = host.execute(plan, "check", [event], backend="optimized")
                with contextlib.suppress(AttributeError):  # built eagerly: not a lane result
                    pending += (
                        object.__getattribute__(result, "_pending") is not None
                    )  # before ``observe`` settles it
                diff = differences(reference, observe(result))
                assert not diff, (
                    f"seed {seed}, {attempt}, limits {limits}, event {event}\n{kernel.text}\n"
                    + "\n".join(diff)
                )
                runs += 1
    return runs, pending


def test_generated_event_predicates_agree_with_the_reference_on_the_lane() -> None:
    runs = pending = 0
    for seed in range(12):
        done, lane = _sweep(seed)
        runs, pending = runs + done, pending + lane
    assert runs > 1000 and pending > runs // 3, (runs, pending)  # not vacuous: the lane took runs
    inline = [seed for seed in range(12) if _inline_reads(_Kernel(seed).text)]
    assert inline, "not vacuous: some kernels read their projected event inline (rule 29)"


def _inline_reads(text: str) -> int:
    """How many inline reads of a projected event (rule 29) the kernel's entry is generated with."""
    module = generate(prepare(text)).module
    return sum(fallback_of(node) is not None for node in ast.walk(module))


@pytest.mark.slow
def test_generated_event_predicates_agree_with_the_reference_on_the_lane_long() -> None:
    for seed in range(12, 400):
        _sweep(seed)
