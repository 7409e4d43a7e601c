"""The reference interpreter's semantics, kernel by kernel (spec/semantics.md)."""

from __future__ import annotations

import pytest

from dotboxd.core.values import ListValue, MapValue, OpaqueId, RecordValue, SandboxPath
from dotboxd.host import Int32, Policy
from tests.probes import read_probe

from .kernels import error, module, policy, run, value

I32_MAX = 2**31 - 1
I32_MIN = -(2**31)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("7 / 2", 3),
        ("-7 / 2", -3),
        ("7 / -2", -3),
        ("-7 % 2", -1),
        ("7 % -2", 1),
        ("-2147483647 - 1", I32_MIN),
        ("2147483646 + 1", I32_MAX),
        ("1 - 2 * 3", -5),
        ("(1 - 2) * 3", -3),
        ("-(5)", -5),
    ],
)
def test_i32_arithmetic(expr: str, expected: int) -> None:
    assert value(f"return {expr};") == expected


@pytest.mark.parametrize(
    ("expr", "code"),
    [
        ("2147483647 + 1", "R-ARITH-OVERFLOW"),
        ("-2147483647 - 2", "R-ARITH-OVERFLOW"),
        ("65536 * 65536", "R-ARITH-OVERFLOW"),
        ("1 / 0", "R-ARITH-DIVIDE-BY-ZERO"),
        ("1 % 0", "R-ARITH-DIVIDE-BY-ZERO"),
        ("(-2147483647 - 1) / -1", "R-ARITH-OVERFLOW"),
        ("(-2147483647 - 1) % -1", "R-ARITH-OVERFLOW"),
        ("-(-2147483647 - 1)", "R-ARITH-OVERFLOW"),
    ],
)
def test_i32_faults_are_invalid_input(expr: str, code: str) -> None:
    assert error(f"return {expr};") == ("InvalidInput", code)


def test_i64_is_a_separate_range() -> None:
    assert value("return 2147483647L + 1L;", "main() -> I64") == 2**31
    assert value("return numeric.toI64(2147483647) * 2L;", "main() -> I64") == 2 * I32_MAX
    assert error("return 9223372036854775807L + 1L;", "main() -> I64") == ("InvalidInput", "R-ARITH-OVERFLOW")


def test_f64_is_finite_only() -> None:
    assert value("return 1.5 * 2.0;", "main() -> F64") == 3.0
    assert value("return -7.5 % 2.0;", "main() -> F64") == -1.5
    assert error("return 1.0 / 0.0;", "main() -> F64") == ("InvalidInput", "R-ARITH-NOT-FINITE")
    assert error("return 1.0e308 * 10.0;", "main() -> F64") == ("InvalidInput", "R-ARITH-NOT-FINITE")
    assert error("return math.sqrt(-1.0);", "main() -> F64") == ("InvalidInput", "R-ARITH-NOT-FINITE")
    assert value("return numeric.toF64(3) / 2.0;", "main() -> F64") == 1.5


def test_comparisons_and_equality() -> None:
    assert value("return (1 < 2) && (2 <= 2) && (3 > 2) && (3 >= 3) && (1 != 2);", "main() -> Bool") is True
    assert value('return "a" == "a";', "main() -> Bool") is True
    assert value("return list.of(1, 2) == list.of(1, 2);", "main() -> Bool") is True
    assert value("return list.of(1, 2) == list.of(2, 1);", "main() -> Bool") is False
    body = """
    a = map.set(map.set(map.empty[Map<String, I32>](), "x", 1), "y", 2);
    b = map.set(map.set(map.empty[Map<String, I32>](), "y", 2), "x", 1);
    return a == b;
    """
    assert value(body, "main() -> Bool") is True
    assert (
        value(
            "return record.new[Record<I32, Bool>](1, true) != record.new[Record<I32, Bool>](1, false);",
            "main() -> Bool",
        )
        is True
    )


def _counter(counts: dict[str, int]):  # type: ignore[no-untyped-def]
    @read_probe("probe.tick")
    def tick(result: bool) -> bool:
        counts["tick"] = counts.get("tick", 0) + 1
        return result

    return tick


def _probe_policy() -> Policy:
    return Policy.builder().grant("probe.tick").with_max_wall_time_ms(60_000).build()


def test_and_or_short_circuit_in_authored_order_when_impure() -> None:
    counts: dict[str, int] = {}
    src = module("return false && probe.tick(true);", "main() -> Bool")
    result = run(src, pol=_probe_policy(), bindings=[_counter(counts)])
    assert result.value is False and counts == {}
    src = module("return true || probe.tick(true);", "main() -> Bool")
    assert run(src, pol=_probe_policy(), bindings=[_counter(counts)]).value is True and counts == {}
    src = module("return probe.tick(false) && false;", "main() -> Bool")
    assert run(src, pol=_probe_policy(), bindings=[_counter(counts)]).value is False and counts == {"tick": 1}


def test_failure_free_cheaper_right_operand_runs_first() -> None:
    # neither operand can fail and the right one is smaller: it decides first, the left never runs
    # (statement, and, the literal: 3 fuel; the left operand would have cost 7 more)
    result = run(module("return ((a > 7) == (a < 3)) && false;", "main(a I32) -> Bool"), (5,), policy())
    assert result.ok and result.value is False and result.usage.fuel_used == 3


def test_an_operand_that_can_fail_is_never_moved_behind_a_cheaper_one() -> None:
    # division can fail, so the smaller right operand does not run first: the left fails
    assert error("return (1 / 0 == 1) && false;", "main() -> Bool")[1] == "R-ARITH-DIVIDE-BY-ZERO"
    assert (
        error("return (1 / 0 == 1) && (1 == 2 && 3 == 3);", "main() -> Bool")[1] == "R-ARITH-DIVIDE-BY-ZERO"
    )


def test_for_range_bounds_are_evaluated_once() -> None:
    counts: dict[str, int] = {}

    @read_probe("probe.bound")
    def bound() -> Int32:
        counts["bound"] = counts.get("bound", 0) + 1
        return 4

    src = module("n = 0; for i in 0 .. probe.bound() { n = n + 1; } return n;")
    pol = Policy.builder().grant("probe.bound").with_max_wall_time_ms(60_000).build()
    result = run(src, pol=pol, bindings=[bound])
    assert result.value == 4 and counts == {"bound": 1}
    assert result.usage.loop_iterations == 4


def test_empty_and_negative_ranges_do_not_iterate() -> None:
    assert value("n = 0; for i in 5 .. 5 { n = n + 1; } for j in 3 .. -3 { n = n + 1; } return n;") == 0


def test_break_continue_and_return_in_loops() -> None:
    body = """
    n = 0;
    for i in 0 .. 10 {
        if i % 2 == 0 { continue; }
        if i > 7 { break; }
        n = n + i;
    }
    return n;
    """
    assert value(body) == 1 + 3 + 5 + 7
    body = "i = 0; while true { i = i + 1; if i == 3 { return i * 10; } } return 0;"
    assert value(body) == 30
    body = """
    total = 0;
    for i in 0 .. 3 { for j in 0 .. 3 { if j == 1 { break; } total = total + 1; } }
    return total;
    """
    assert value(body) == 3


def test_while_loop() -> None:
    assert value("i = 0; s = 0; while i < 5 { s = s + i; i = i + 1; } return s;") == 10


def test_module_function_calls() -> None:
    src = """module "t" version "1.0.0";
fn sq(x I32) -> I32 { return x * x; }
fn add(a I32, b I32) -> I32 { return a + b; }
entrypoint fn main(a I32) -> I32 { return add(sq(a), sq(a + 1)); }
"""
    result = run(src, [3])
    assert result.value == 9 + 16


def test_collections_are_copy_on_write() -> None:
    body = """
    a = list.of(1, 2);
    b = list.add(a, 3);
    m = map.set(map.empty[Map<I32, I32>](), 1, 10);
    m2 = map.set(m, 1, 20);
    m3 = map.remove(m2, 1);
    gone = 0;
    if !map.containsKey(m3, 1) { gone = 1; }
    return list.count(a) * 1000 + list.count(b) * 100 + map.get(m, 1) + map.get(m2, 1) + gone;
    """
    assert value(body) == 2000 + 300 + 10 + 20 + 1


def test_collection_faults() -> None:
    assert error("return list.get(list.of(1, 2), 2);") == ("InvalidInput", "R-LIST-INDEX")
    assert error("return list.get(list.of(1, 2), -1);") == ("InvalidInput", "R-LIST-INDEX")
    assert error('return map.get(map.empty[Map<String, I32>](), "k");') == ("NotFound", "R-MAP-KEY-MISSING")
    assert value("m = map.remove(map.empty[Map<I32, I32>](), 5); return 1;") == 1


def test_records() -> None:
    body = 'r = record.new[Record<I32, String, Bool>](7, "x", true); return record.get(r, 0);'
    assert value(body) == 7
    body = 'return record.new[Record<I32, String>](7, "x");'
    assert value(body, "main() -> Record<I32, String>") == RecordValue([7, "x"])


def test_strings_count_utf16_units() -> None:
    assert value('return string.length("a😀b");') == 4
    assert value('return string.substringBudgeted("a😀b", 1, 2);', "main() -> String") == "😀"
    assert error('return string.substringBudgeted("a😀b", 1, 1);', "main() -> String") == (
        "InvalidInput",
        "R-STRING-RANGE",
    )
    assert error('return string.substringBudgeted("abc", 2, 2);', "main() -> String")[1] == "R-STRING-RANGE"
    assert value('return string.compareOrdinal("😀", "\uff61");') == -1
    assert value('return string.concatBudgeted("ab", "cd");', "main() -> String") == "abcd"
    assert value('return string.equals("ab", "ab") && string.isEmpty("");', "main() -> Bool") is True
    assert value("return int32.toStringInvariant(-42);", "main() -> String") == "-42"


def test_math_builtins() -> None:
    assert (
        value("return math.abs(-5) + math.min(3, 4) + math.max(3, 4) + math.clamp(10, 0, 5);")
        == 5 + 3 + 4 + 5
    )
    assert error("return math.abs(-2147483647 - 1);") == ("InvalidInput", "R-ARITH-OVERFLOW")
    assert error("return math.clamp(1, 5, 0);") == ("InvalidInput", "R-ARITH-CLAMP-RANGE")
    assert (
        value("return math.round(2.5) + math.floor(-1.5) + math.ceil(1.2);", "main() -> F64")
        == 2.0 - 2.0 + 2.0
    )


def test_inputs_are_decoded_by_declared_types() -> None:
    src = module('return list.count(xs) + map.get(m, "k");', "main(xs List<I32>, m Map<String, I32>) -> I32")
    assert run(src, [[1, 2, 3], [["k", 4]]], encoding="json").value == 7
    assert run(src, [ListValue([1]), MapValue([("k", 1)])]).value == 2
    assert run(src, [[1, 2], {"k": 5}]).value == 7


def test_opaque_ids_and_paths() -> None:
    pol = Policy.builder().declare_opaque_id_type("PlayerId").with_max_wall_time_ms(60_000).build()
    src = module('return opaque PlayerId "p-1" == p;', "main(p PlayerId) -> Bool")
    assert run(src, [OpaqueId("PlayerId", "p-1")], pol).value is True
    assert run(src, [{"type": "PlayerId", "value": "p-2"}], pol, encoding="json").value is False
    src = module('return path"a/b.txt";', "main() -> SandboxPath")
    assert run(src).value == SandboxPath("a/b.txt")


def test_map_keys_of_one_type_are_distinct_values() -> None:
    body = """
    m = map.set(map.set(map.empty[Map<Bool, I32>](), true, 1), false, 2);
    return map.get(m, true) * 10 + map.get(m, false);
    """
    assert value(body) == 12


def test_value_json_encodes_maps_in_canonical_order() -> None:
    body = 'return map.set(map.set(map.empty[Map<String, I32>](), "b", 2), "a", 1);'
    result = run(module(body, "main() -> Map<String, I32>"), pol=policy())
    assert result.value_json() == [["a", 1], ["b", 2]]
