"""The closed forms owned lists settle with (``core.costs.list_adds_*``) against the per-add
functions they sum: the optimized backend charges the same numbers in one step as the reference
charges add by add."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


@pytest.mark.parametrize("length", [0, 1, 7, 20_000, 10**7])
@pytest.mark.parametrize("piece", [0, 1, 2, 11])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 64, 2048])
def test_text_append_closed_forms_equal_the_sum_of_single_concatenations(
    length: int, piece: int, count: int
) -> None:
    """The chunk bound of owned-string loops: the results' units and the fuel of ``count``
    concatenations, each the concatenation's own charge on its result plus a fixed part."""
    concat = costs.BUILTIN_COSTS["string.concatBudgeted"]
    results = [length + piece * k for k in range(1, count + 1)]
    assert costs.text_appends_result_units(length, piece, count) == sum(results)
    for fixed in (0, 16, 23):
        per_op = sum(fixed + concat.fuel(0, costs.string_bytes(r)) - concat.base for r in results)
        assert costs.text_appends_fuel(length, piece, count, fixed) == per_op


@given(size=st.integers(min_value=0, max_value=10**7), count=st.integers(min_value=0, max_value=700))
def test_flat_adds_fuel_is_the_sum_of_single_adds(size: int, count: int) -> None:
    """The chunk charge of ``count`` adds (``list_adds_flat_fuel``, what a fast list chunk reserves
    and what its fault sites subtract) is the per-add fuel summed, for any start and any count
    (counts cross several 64-node walk boundaries)."""
    expected = sum(costs.list_add_flat_fuel(t) for t in range(size, size + count))
    assert costs.list_adds_flat_fuel(size, count) == expected


@pytest.mark.parametrize("size", [0, 1, 61, 62, 63, 64, 126, 127, 128])
def test_flat_adds_fuel_prefixes_add_up(size: int) -> None:
    """A prefix of a chunk plus the rest is the whole chunk (a fault site's fuel is a prefix)."""
    whole = costs.list_adds_flat_fuel(size, 300)
    for head in range(301):
        rest = costs.list_adds_flat_fuel(size + head, 300 - head)
        assert costs.list_adds_flat_fuel(size, head) + rest == whole
