"""Growing a collection in a loop does work in proportion to its size, on both backends.

Counted, never timed: ``dotboxd.core.values.copy_prefix`` is the one place a list version copies its
items, so counting its calls (and the items each copies) shows whether ``list.add`` in a loop is
linear. The optimized backend's fast ``list.add`` used to append to the shared buffer before asking
the meter; whenever the meter declined (every deadline-check interval), the exact path appended
again, found the buffer one item longer and copied the whole prefix: about n / 32 copies of up to n
items, quadratic in n.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.core import values
from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.validator.policy import Policy
from tests.benchmarks.workloads import LISTSUM

BRANCH = """module "branch" version "1.0.0";
entrypoint fn main(n I32) -> I32 {
    xs = list.empty[I32]();
    for i in 0 .. n { xs = list.add(xs, i); }
    total = 0;
    for i in 0 .. 3 { total = total + list.count(list.add(xs, i)); }
    return total;
}"""

HOST = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache())})
POLICY = (
    Policy.builder()
    .with_fuel(10**12)
    .with_max_loop_iterations(10**9)
    .with_max_wall_time_ms(2**31 - 1)
    .with_limits(max_allocated_bytes=10**12, max_total_collection_elements=10**10)
    .build()
)


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of items each prefix copy made during the test."""
    counts: list[int] = []
    real = values.copy_prefix

    def counting(buffer: list[Any], count: int, item: Any) -> list[Any]:
        counts.append(count)
        return real(buffer, count, item)

    monkeypatch.setattr(values, "copy_prefix", counting)
    return counts


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_list_add_in_a_loop_copies_no_prefix_so_growth_is_linear_not_quadratic(
    copied: list[int], backend: str
) -> None:
    n = 5_000  # ~150 meter refusals at one per 64 fuel charges: the old fast path copied each time
    plan = HOST.prepare(LISTSUM, POLICY)
    result = HOST.execute(plan, "main", [n], backend=backend)
    assert result.ok, result.error
    assert result.value == sum(i * 7 % 100 for i in range(n))
    assert copied == []


@pytest.mark.parametrize("backend", ["reference", "optimized"])
def test_list_add_on_an_older_version_copies_once_per_branch(copied: list[int], backend: str) -> None:
    """The copy still happens where it must (a second version grown from the same list), once per
    branch and of exactly the branch's prefix: the newest version is never overwritten."""
    n = 1_000
    plan = HOST.prepare(BRANCH, POLICY)
    result = HOST.execute(plan, "main", [n], backend=backend)
    assert result.ok, result.error
    assert result.value == 3 * (n + 1)
    assert copied == [n, n]  # the first branch appends in place; the next two copy n items each
