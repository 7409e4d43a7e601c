"""Keeps the scaling benchmark (``tests/benchmarks/scaling.py``) working: every workload runs on both
backends at tiny sizes and agrees with its plain CPython twin. Nothing here is timed; the exponents
are reported by ``python -m tests.benchmarks.scaling`` (README, Measurements)."""

from __future__ import annotations

import math

import pytest

from tests.benchmarks import scaling


@pytest.mark.parametrize("backend", scaling.BACKENDS)
@pytest.mark.parametrize("workload", scaling.WORKLOADS, ids=lambda w: w.name)
def test_scaling_workload_agrees_with_its_twin_at_every_size(
    workload: scaling.Workload, backend: str
) -> None:
    row = scaling.measure(workload, backend, 40, 1, scaling.make_host())
    assert row.sizes == (40, 80, 160, 320)
    assert len(row.seconds) == 4 and math.isfinite(row.exponent)


def test_the_fit_recovers_a_known_exponent() -> None:
    sizes = (100, 200, 400, 800)
    assert scaling.fit_exponent(sizes, [n**1.0 for n in sizes]) == pytest.approx(1.0)
    assert scaling.fit_exponent(sizes, [3e-6 * n**2 for n in sizes]) == pytest.approx(2.0)
