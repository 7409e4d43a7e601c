"""Per-call cost of ``SandboxHost.execute`` when a host round-robins many tenants' plans.

    pytest tests/benchmarks/test_bench_plan_cache.py --benchmark-enable --benchmark-only

Group ``plan_cache``: one benchmarked round is one ``execute`` of each of N distinct plans in turn
(N = 1, 200, 1000), so the reported time divided by N is the per-call cost. The host keeps its
dispatch records (and the reference backend its per-plan node rules) in LRU caches of 1024 entries
by default: all three sizes stay hits. The ``evicting`` variant runs 1000 plans through a host whose
cache holds 256 - the old FIFO's size - where every call misses, to show what the cache is worth.

The N plans are identity-distinct copies of one prepared plan: both caches key on plan identity, so
to them the copies are N tenants, while preparing 1000 real modules (about 9 s) stays out of the
normal test run. With ``--benchmark-disable`` each round still runs once and every result is checked.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dotboxd.host import ExecutionPlan, SandboxHost

PREDICATE = """module "tenant" version "1.0.0";
entrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }"""

_ARGS = [7, 12]


def _plans(host: SandboxHost, count: int) -> list[ExecutionPlan]:
    plan = host.prepare(PREDICATE)
    return [copy.copy(plan) for _ in range(count)]


def _round(host: SandboxHost, plans: list[ExecutionPlan]) -> int:
    ok = 0
    for plan in plans:
        ok += host.execute(plan, "check", _ARGS).value is True
    return ok


@pytest.mark.parametrize("count", [1, 200, 1000])
def test_bench_plan_cache_round_robin(benchmark: Any, count: int) -> None:
    benchmark.group = "plan_cache"
    host = SandboxHost()
    plans = _plans(host, count)
    assert _round(host, plans) == count  # warm: every plan's dispatch record is now cached
    assert benchmark(_round, host, plans) == count


def test_bench_plan_cache_evicting(benchmark: Any) -> None:
    benchmark.group = "plan_cache"
    host = SandboxHost(dispatch_cache_size=256)
    plans = _plans(host, 1000)
    assert _round(host, plans) == 1000
    assert benchmark(_round, host, plans) == 1000
