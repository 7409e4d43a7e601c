"""The closed forms owned lists settle with (``core.costs.list_adds_*``) against the per-add
functions they sum: the optimized backend charges the same numbers in one step as the reference
charges add by add."""

from __future__ import annotations

import pytest

from dotboxd.core import costs


@pytest.mark.parametrize("size", [0, 1, 2, 61, 62, 63, 64, 100, 4095, 10**6])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 63, 64, 65, 500])
def test_closed_forms_equal_the_sum_of_single_adds(size: int, count: int) -> None:
    sizes = range(size, size + count)
    assert costs.list_adds_alloc(size, count) == sum(costs.list_add_alloc(t) for t in sizes)
    assert costs.list_adds_elements(size, count) == sum(t + 1 for t in sizes)
    charges = sum(2 if costs.shape_walk_fuel(t + 2) else 1 for t in sizes)
    assert costs.list_adds_charges(size, count) == charges


def test_flat_add_fuel_is_the_copy_and_the_walk() -> None:
    for size in (0, 1, 61, 62, 63, 4096):
        assert costs.list_add_flat_fuel(size) == costs.copy_fuel(size, 1) + costs.shape_walk_fuel(size + 2)
