"""Kernels, policies and the heap fixture that several benchmarks (and a few exactness tests) share.

One text per workload so that the ratio table, the scaling fit and the tests that pin a backend's
behaviour on the same program measure the same program; one roomy policy so that no benchmark is
cut short by a limit the others do not have.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from dotboxd.validator.policy import Policy, PolicyBuilder

COLLATZ = """module "collatz" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    total = 0;
    for s in 1 .. n {
        x = s;
        while x != 1 {
            if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; }
            total = total + 1;
        }
    }
    return total;
}"""


def collatz_py(n: int) -> int:
    total = 0
    for s in range(1, n):
        x = s
        while x != 1:
            if x % 2 == 0:  # noqa: SIM108 - the kernel's own shape, statement for statement
                x = x // 2
            else:
                x = 3 * x + 1
            total = total + 1
    return total


LISTSUM = """module "listsum" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i * 7 % 100); }
    total = 0;
    for i in 0 .. list.count(xs) { total = total + list.get(xs, i); }
    return total;
}"""

STRBUILD = """module "strbuild" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    s = "";
    for i in 0 .. n { s = string.concatBudgeted(s, int32.toStringInvariant(i % 10)); }
    return string.length(s);
}"""


def roomy_policy() -> PolicyBuilder:
    """A policy builder whose limits no benchmark reaches (list.add and list.get charge 2 + c each:
    ~2.3e12 fuel for 1.5M items), so a benchmark measures work, not a refusal."""
    return (
        Policy.builder()
        .with_fuel(2**62)
        .with_max_loop_iterations(10**9)
        .with_max_wall_time_ms(2**31 - 1)
        .with_limits(
            max_allocated_bytes=2**62,
            max_total_string_bytes=2**62,
            max_total_collection_elements=2**62,
            max_list_length=10**8,
            max_map_entries=10**8,
            max_string_length=10**8,
            max_host_calls=10**9,
        )
    )


@pytest.fixture(scope="module", autouse=True)
def frozen_heap() -> Iterator[None]:
    """Move everything alive before the benchmarks (the test session's modules, cases, plans) out of
    the cyclic collector's reach: otherwise every full collection triggered by an allocating workload
    walks the whole pytest heap and the measurement says more about the session than the backend.
    A module that imports this fixture gets it for all its tests."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
