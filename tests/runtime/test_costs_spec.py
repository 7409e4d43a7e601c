"""The cost table, its prose (spec/costs.md) and the built-in catalogue stay in step."""

from __future__ import annotations

import re
from pathlib import Path

from dotboxd.core import costs
from dotboxd.core.builtins import BUILTINS
from dotboxd.core.codes import all_codes
from dotboxd.runtime.intrinsics import INTRINSICS

SPEC = (Path(__file__).resolve().parents[2] / "spec" / "costs.md").read_text(encoding="utf-8")
SEMANTICS = (Path(__file__).resolve().parents[2] / "spec" / "semantics.md").read_text(encoding="utf-8")


def test_every_builtin_has_an_implementation_and_a_cost() -> None:
    assert set(INTRINSICS) == set(BUILTINS)
    assert set(costs.BUILTIN_COSTS) | costs.COLLECTION_INTRINSICS == set(BUILTINS)
    assert not set(costs.BUILTIN_COSTS) & costs.COLLECTION_INTRINSICS


def _base_fuel_rows() -> dict[str, int]:
    """`| built-in(s) | base fuel | more |` rows of spec/costs.md section 5."""
    section = SPEC[SPEC.index("## 5.") : SPEC.index("## 6.")]
    rows: dict[str, int] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].isdigit():
            for name in re.findall(r"`([a-z0-9]+\.[A-Za-z0-9]+)", cells[0]):
                rows[name] = int(cells[1])
    return rows


def test_spec_base_fuel_matches_the_table() -> None:
    rows = _base_fuel_rows()
    assert set(rows) == set(costs.BUILTIN_COSTS)
    for name, base in rows.items():
        assert costs.BUILTIN_COSTS[name].base == base, name


def test_spec_structural_numbers_match_the_table() -> None:
    assert "| 1 fuel, before it runs |" in SPEC and costs.STATEMENT_FUEL == 1
    assert "| 1 fuel, before its operands |" in SPEC and costs.EXPRESSION_FUEL == 1
    assert "1 loop iteration, then 5 fuel" in SPEC and costs.LOOP_ITERATION_FUEL == 5
    assert "`nodes // 64` fuel" in SPEC and costs.SHAPE_WALK_NODES_PER_FUEL == 64
    assert costs.list_empty() == costs.OpCost(2, 8) and "| `list.empty<T>()` | 2 | 8 |" in SPEC
    assert costs.map_empty() == costs.OpCost(2, 16) and "| `map.empty<Map<K,V>>()` | 2 | 16 |" in SPEC
    assert costs.list_of(3) == costs.OpCost(5, 48) and "| 2 + n | 16 n |" in SPEC
    assert costs.list_add(4) == costs.OpCost(7, 80) and "| 2 + c + 1 | 16 (c + 1) |" in SPEC
    assert costs.map_set(4, True) == costs.OpCost(7, 160) and costs.map_set(0, False) == costs.OpCost(3, 32)
    assert costs.map_remove(4, True) == costs.OpCost(6, 96) and costs.map_remove(1, True) == costs.OpCost(
        3, 32
    )
    assert costs.read_fuel(10) == 12


def test_every_runtime_code_is_registered_and_documented() -> None:
    codes = {c for c in all_codes() if c.startswith("R-")}
    assert codes
    documented = set(re.findall(r"R-[A-Z0-9-]+[A-Z0-9]", SEMANTICS))
    # the QuotaExceeded row abbreviates its family as "R-QUOTA-FUEL, -LOOP, ..."
    quota_row = next(line for line in SEMANTICS.splitlines() if line.startswith("| QuotaExceeded"))
    documented |= {f"R-QUOTA-{suffix}" for suffix in re.findall(r", -([A-Z-]+[A-Z])", quota_row)}
    assert codes <= documented, sorted(codes - documented)
    assert documented - {"R-"} <= codes | {"R-QUOTA-"}, sorted(documented - codes)


def test_the_plain_int_amounts_are_the_records_amounts() -> None:
    assert costs.list_empty() == costs.OpCost(costs.LIST_EMPTY_FUEL, costs.LIST_EMPTY_ALLOC)
    assert costs.map_empty() == costs.OpCost(costs.MAP_EMPTY_FUEL, costs.MAP_EMPTY_ALLOC)
    for size in range(0, 40):
        assert costs.list_get(size) == costs.list_count(size) == costs.OpCost(costs.read_fuel(size))
        assert costs.map_get(size) == costs.map_contains_key(size) == costs.OpCost(2 + size)
        assert costs.record_get(size).fuel == costs.read_fuel(size) == 2 + size
        assert costs.list_of(size) == costs.OpCost(costs.copy_fuel(size), costs.list_of_alloc(size))
        assert costs.list_of(size) == costs.OpCost(2 + size, 16 * size)
        assert costs.record_new(size) == costs.OpCost(costs.copy_fuel(size), costs.record_new_alloc(size))
        assert costs.list_add(size) == costs.OpCost(costs.copy_fuel(size, 1), costs.list_add_alloc(size))
        assert costs.list_add(size) == costs.OpCost(3 + size, 16 * (size + 1))
        for flag in (True, False):
            assert costs.map_set(size, flag) == costs.OpCost(3 + size, 32 * max(1, size + flag))
            assert costs.map_set(size, flag).alloc == costs.map_set_alloc(size, flag)
            assert costs.map_remove(size, flag) == costs.OpCost(2 + size, 32 * max(1, size - flag))
            assert costs.map_remove(size, flag).alloc == costs.map_remove_alloc(size, flag)
    assert costs.read_fuel(-3) == 2 and costs.copy_fuel(-3, -1) == 2  # sizes below 0 count as 0
