"""CPU time per fuel unit stays flat for every built-in, however big its inputs (issue 11, item 4).

Fuel is the run's CPU budget, so a built-in whose real work grows faster than its charge lets a
kernel buy far more CPU than the policy meant to give it: ``string.length`` used to re-encode the
whole string to UTF-16 for a flat 1 fuel, hundreds of times more CPU per fuel unit than an ordinary
statement on a long string.

For every built-in of the single table (``dotboxd.core.builtins.BUILTINS``; a new built-in fails
``test_every_builtin_has_a_workload`` until it gets one here), a kernel calls it in a loop, once
with small inputs and once with large ones (strings of about a megabyte of UTF-16, collections of
10,000 entries), on both backends. Setup (decoding the inputs, building an index once) is cancelled
out by subtracting a run without iterations; the CPU seconds per fuel unit of the large run may then
be at most ``RATIO_BOUND`` times that of the small run. The bound is about
proportionality, not speed: a re-encode of a megabyte string per call is a ratio in the hundreds.
Timings use ``time.process_time`` and the minimum of several repeats, so a loaded machine only
makes both sides slower.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from dotboxd.core.builtins import BUILTINS
from dotboxd.host import Policy, SandboxHost

RATIO_BOUND = 8.0
"""Large-input CPU per fuel may be at most this many times the small-input CPU per fuel."""

REPEATS = 3
TARGET_SECONDS = 0.015
"""Loops are made long enough for about this much CPU time, so setup noise stays small beside it."""
MAX_LOOPS = 160_000

_UNIT = "abcdefghij" * 20 + "é😀"  # 202 code points, 203 UTF-16 units: non-ASCII with astral characters
LONG_TEXT = _UNIT * 2600  # about 528,000 UTF-16 units: a megabyte of UTF-16
TEXT = LONG_TEXT[:100_000]  # for built-ins charged per unit: long enough, and quicker to run
SHORT_TEXT = "abc😀"
MIDDLE = len(LONG_TEXT) // 2 // len(_UNIT) * (len(_UNIT) + 1)  # a unit offset on a character boundary


def _copy(text: str) -> str:
    """An equal string that is a different object (comparisons cannot short-cut on identity)."""
    return "".join(list(text))


@dataclass(frozen=True)
class Workload:
    """How to call one built-in: its parameters, the call, and small and large arguments."""

    params: str
    call: str
    small: Callable[[], list[Any]]
    large: Callable[[], list[Any]]


def _same(params: str, call: str, args: list[Any]) -> Workload:
    """A built-in whose inputs have no size: the same arguments both times."""
    return Workload(params, call, lambda: list(args), lambda: list(args))


def _two_texts(name: str, small: Callable[[], list[Any]], large: Callable[[], list[Any]]) -> Workload:
    """A built-in ``name(s, t)`` over two texts."""
    return Workload("s String, t String", f"{name}(s, t)", small, large)


def _equal_texts(name: str) -> Workload:
    """A comparison of two equal texts held in distinct objects, so it must read every unit."""
    return _two_texts(name, lambda: [SHORT_TEXT, _copy(SHORT_TEXT)], lambda: [TEXT, _copy(TEXT)])


def _ints(count: int) -> list[int]:
    return list(range(count))


def _int_map(count: int) -> dict[int, int]:
    return {i: i for i in range(count)}


def _text_map(count: int) -> dict[str, int]:
    """Text keys sharing a 60-unit prefix, inserted in reverse of their canonical order."""
    return {f"{'é' * 60}{i:06d}": i for i in reversed(range(count))}


WORKLOADS: dict[str, Workload] = {
    "math.abs": _same("a I32", "math.abs(a)", [-5]),
    "math.min": _same("a I32, b I32", "math.min(a, b)", [3, 4]),
    "math.max": _same("a I32, b I32", "math.max(a, b)", [3, 4]),
    "math.clamp": _same("a I32, b I32, c I32", "math.clamp(a, b, c)", [5, 0, 3]),
    "math.sqrt": Workload("x F64", "math.sqrt(x)", lambda: [2.0], lambda: [1.7e308]),
    "math.floor": Workload("x F64", "math.floor(x)", lambda: [-0.5], lambda: [-1.5e300]),
    "math.ceil": Workload("x F64", "math.ceil(x)", lambda: [-0.5], lambda: [1.5e300]),
    "math.round": Workload("x F64", "math.round(x)", lambda: [-0.5], lambda: [2.5e300]),
    "int32.toStringInvariant": Workload(
        "a I32", "int32.toStringInvariant(a)", lambda: [7], lambda: [-(2**31)]
    ),
    "string.length": Workload("s String", "string.length(s)", lambda: [SHORT_TEXT], lambda: [LONG_TEXT]),
    "string.isEmpty": Workload("s String", "string.isEmpty(s)", lambda: [SHORT_TEXT], lambda: [LONG_TEXT]),
    "string.substringBudgeted": Workload(
        "s String, i I32",
        "string.substringBudgeted(s, i, 3)",
        lambda: [SHORT_TEXT, 0],
        lambda: [LONG_TEXT, MIDDLE],
    ),
    "string.concatBudgeted": _two_texts(
        "string.concatBudgeted",
        lambda: [SHORT_TEXT, SHORT_TEXT],
        lambda: [TEXT, TEXT],
    ),
    "string.equals": _equal_texts("string.equals"),
    "string.compareOrdinal": _equal_texts("string.compareOrdinal"),
    "string.contains": _two_texts(
        "string.contains",
        lambda: [SHORT_TEXT, "ab"],
        lambda: ["a" * 100_000, "a" * 60 + "z"],  # absent, a 60-unit near-match at every offset
    ),
    "string.indexOf": _two_texts(
        "string.indexOf",
        lambda: [SHORT_TEXT, "😀"],
        lambda: [TEXT, TEXT[-5:]],  # found near the end: the offset is converted to UTF-16 units
    ),
    "string.lastIndexOf": _two_texts(
        "string.lastIndexOf",
        lambda: [SHORT_TEXT, "b"],
        # absent; a reverse search that compares from the part's end re-reads the 50,000 "a"s at
        # nearly every offset (``str.rfind`` takes seconds here): the search must stay linear
        lambda: ["a" * 100_000, "ab" + "a" * 50_000],
    ),
    "string.startsWith": _equal_texts("string.startsWith"),
    "string.endsWith": _equal_texts("string.endsWith"),
    "string.toLowerInvariant": Workload(
        "s String",
        "string.toLowerInvariant(s)",
        lambda: [SHORT_TEXT],
        lambda: [TEXT.upper()],
    ),
    "string.toUpperInvariant": Workload(
        "s String",
        "string.toUpperInvariant(s)",
        lambda: [SHORT_TEXT],
        lambda: [TEXT],
    ),
    "parse.int": Workload(
        "s String",
        "parse.int(s)",
        lambda: ["-12"],
        lambda: ["-" + "0" * 100_000 + "2147483648"],  # long, and parsed digit by digit only up to 11
    ),
    "math.sin": Workload("x F64", "math.sin(x)", lambda: [0.5], lambda: [1.7e308]),
    "math.cos": Workload("x F64", "math.cos(x)", lambda: [0.5], lambda: [1.7e308]),
    "math.tan": Workload("x F64", "math.tan(x)", lambda: [0.5], lambda: [1.7e308]),
    "numeric.toI64": _same("a I32", "numeric.toI64(a)", [7]),
    "numeric.toF64": _same("a I32", "numeric.toF64(a)", [7]),
    "list.empty": _same("a I32", "list.count(list.empty[I32]())", [0]),
    "string.split": _two_texts(
        "string.split",
        lambda: [SHORT_TEXT, "b"],
        lambda: [TEXT, "a"],  # about 10,000 pieces of 10 units: the per-piece charge is measured
    ),
    "string.replace": Workload(
        "s String, t String, u String",
        "string.replace(s, t, u)",
        lambda: [SHORT_TEXT, "b", "xy"],
        lambda: [TEXT, "a", "xy😀"],  # about 10,000 replacements, each longer than what it replaces
    ),
    "format.simple": Workload(
        "s String, l List<String>",
        "format.simple(s, l)",
        lambda: ["{0}-{1}", ["a", "é"]],
        lambda: ["x{0}{1}" * 2000 + TEXT[:10_000], [TEXT[:100], "é😀"]],  # 4,000 placeholders, long literal
    ),
    "list.of": Workload("s String", "list.of(s, s, s)", lambda: [SHORT_TEXT], lambda: [LONG_TEXT]),
    "list.count": Workload("l List<I32>", "list.count(l)", lambda: [_ints(2)], lambda: [_ints(10_000)]),
    "list.get": Workload("l List<I32>", "list.get(l, 1)", lambda: [_ints(2)], lambda: [_ints(10_000)]),
    "list.add": Workload("l List<I32>", "list.add(l, 1)", lambda: [_ints(2)], lambda: [_ints(10_000)]),
    "list.slice": Workload(
        "l List<I32>, i I32",
        "list.slice(l, i, 2)",
        lambda: [_ints(4), 1],
        lambda: [_ints(10_000), 9_990],  # a short slice far into a long list: O(count), not O(start)
    ),
    "map.count": Workload(
        "m Map<I32, I32>", "map.count(m)", lambda: [_int_map(2)], lambda: [_int_map(10_000)]
    ),
    "map.keys": Workload(
        "m Map<String, I32>",
        "map.keys(m)",
        lambda: [_text_map(2)],
        lambda: [_text_map(10_000)],  # long shared prefixes: every comparison reads them
    ),
    "map.empty": _same("a I32", "map.empty[Map<I32, I32>]()", [0]),
    "map.containsKey": Workload(
        "m Map<I32, I32>", "map.containsKey(m, 1)", lambda: [_int_map(2)], lambda: [_int_map(10_000)]
    ),
    "map.get": Workload(
        "m Map<I32, I32>", "map.get(m, 1)", lambda: [_int_map(2)], lambda: [_int_map(10_000)]
    ),
    "map.set": Workload(
        "m Map<I32, I32>", "map.set(m, 1, 2)", lambda: [_int_map(2)], lambda: [_int_map(10_000)]
    ),
    "map.remove": Workload(
        "m Map<I32, I32>", "map.remove(m, 1)", lambda: [_int_map(2)], lambda: [_int_map(10_000)]
    ),
    "record.new": Workload(
        "s String", "record.new[Record<I32, String>](7, s)", lambda: [SHORT_TEXT], lambda: [LONG_TEXT]
    ),
    "record.get": Workload(
        "s String",
        "record.get(record.new[Record<I32, String>](7, s), 1)",
        lambda: [SHORT_TEXT],
        lambda: [LONG_TEXT],
    ),
}

_LIMITS = {
    "max_fuel": 2_000_000_000,
    "max_loop_iterations": 1_000_000,
    "max_host_calls": 1_000_000_000,  # math.* and string.* built-ins are pure bindings: each call is a host call
    "max_wall_time_ms": 600_000,
    "max_allocated_bytes": 2**40,
    "max_string_length": 2_000_000,
    "max_total_string_bytes": 2**40,
    "max_total_collection_elements": 2**40,
    "max_list_length": 20_000,
    "max_map_entries": 20_000,
}


def _kernel(workload: Workload) -> str:
    return (
        'module "t" version "1.0.0";\n'
        f"entrypoint fn main(n I32, {workload.params}) -> I32 {{\n"
        f"for k in 0 .. n {{ r = {workload.call}; }}\n"
        "return 0;\n}\n"
    )


def _best_run(host: SandboxHost, plan: Any, backend: str, args: list[Any]) -> tuple[float, int]:
    """The least CPU time of ``REPEATS`` runs, and the run's fuel."""
    best = float("inf")
    fuel = 0
    for _ in range(REPEATS):
        started = time.process_time()
        result = host.execute(plan, "main", args, backend=backend)
        best = min(best, time.process_time() - started)
        assert result.ok, result.error
        fuel = result.usage.fuel_used
    return best, fuel


def _cpu_per_fuel(host: SandboxHost, plan: Any, backend: str, args: list[Any]) -> float:
    """CPU seconds per fuel unit of the loop alone: a run without iterations is subtracted (input
    decoding, the run's setup), and the loop is made long enough to dwarf what noise remains."""
    host.execute(plan, "main", [1, *args], backend=backend)  # warm up (compile, caches)
    loops = 16
    while loops < MAX_LOOPS:
        started = time.process_time()
        result = host.execute(plan, "main", [loops, *args], backend=backend)
        if not result.ok:  # past the policy's fuel before TARGET_SECONDS (a fast, costly built-in)
            loops //= 2
            break
        if time.process_time() - started >= TARGET_SECONDS:
            break
        loops *= 2
    loops = min(loops, MAX_LOOPS)  # the last doubling may overshoot what the policy's fuel allows
    base_seconds, base_fuel = _best_run(host, plan, backend, [0, *args])
    seconds, fuel = _best_run(host, plan, backend, [loops, *args])
    return max(seconds - base_seconds, 1e-9) / (fuel - base_fuel)


def test_every_builtin_has_a_workload() -> None:
    """A built-in added to the table is measured too (it needs a workload here first)."""
    assert set(WORKLOADS) == set(BUILTINS)


@pytest.mark.parametrize("backend", ["reference", "optimized"])
@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtin_cpu_per_fuel_does_not_grow_with_input_size(name: str, backend: str) -> None:
    """T-RUN-03: CPU per fuel unit with large inputs is within RATIO_BOUND of that with small ones."""
    workload = WORKLOADS[name]
    host = SandboxHost()
    plan = host.prepare(_kernel(workload), Policy.builder().with_limits(**_LIMITS).build())
    small = _cpu_per_fuel(host, plan, backend, workload.small())
    large = _cpu_per_fuel(host, plan, backend, workload.large())
    ratio = large / small
    assert ratio <= RATIO_BOUND, (
        f"{name} on {backend}: {large * 1e9:.0f} ns/fuel with large inputs vs {small * 1e9:.0f} ns/fuel "
        f"with small ones ({ratio:.1f}x)"
    )
