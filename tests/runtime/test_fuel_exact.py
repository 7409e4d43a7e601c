"""Fuel and usage pinned exactly. Every expected number is derived by hand from spec/costs.md (the
derivation is in each comment), never copied from the interpreter's output."""

from __future__ import annotations

from dotboxd.host import Cost, Policy
from tests.probes import read_probe

from .kernels import module, policy, run


def _usage(body: str, signature: str = "main() -> I32", args: tuple[object, ...] = ()):  # type: ignore[no-untyped-def]
    result = run(module(body, signature), args, policy())
    assert result.ok, result.error
    return result.usage


def test_return_sum() -> None:
    # stmt 1 + binary 1 + two literals 2
    assert _usage("return 1 + 2;").fuel_used == 4


def test_string_literal_is_charged_as_a_new_value() -> None:
    u = _usage('s = "ab"; return s;', "main() -> String")
    # set 1 + literal 1; return 1 + var 1; "ab" = 2 units = 4 string bytes, also 4 allocated
    assert (u.fuel_used, u.string_bytes, u.allocated_bytes) == (4, 4, 4)


def test_list_of_and_count() -> None:
    u = _usage("return list.count(list.of(1, 2, 3));")
    # stmt 1, count node 1, of node 1, literals 3, list.of 2+3, list.count 2+3 -> 16; alloc 16*3; 3 elements
    assert (u.fuel_used, u.allocated_bytes, u.collection_elements) == (16, 48, 3)


def test_for_range_charges() -> None:
    u = _usage("for i in 0 .. 3 { i; } return 0;")
    # for 1 + bounds 2 + 3 x (iteration 5 + stmt 1 + var 1) = 24; return 2
    assert (u.fuel_used, u.loop_iterations) == (26, 3)


def test_while_charges_the_final_false_condition() -> None:
    u = _usage("i = 0; while i < 3 { i = i + 1; } return i;")
    # set 2; while 1; condition (3 nodes) x 4 evaluations = 12; 3 x (5 + set 4) = 27; return 2
    assert (u.fuel_used, u.loop_iterations) == (44, 3)


def test_module_call() -> None:
    src = """module "t" version "1.0.0";
fn sq(x I32) -> I32 { return x * x; }
entrypoint fn main() -> I32 { return sq(3); }
"""
    result = run(src, (), policy())
    # stmt 1 + call 1 + literal 1 + callee (stmt 1 + binary 1 + var 1 + var 1)
    assert result.usage.fuel_used == 7


def test_short_circuit_skips_the_second_operand() -> None:
    # authored order (the right operand is not smaller): stmt 1 + and 1 + false 1
    assert _usage("return false && (1 == 1);", "main() -> Bool").fuel_used == 3
    # right operand smaller and both pure: it runs first and decides: stmt 1 + or 1 + true 1
    assert _usage("return (1 == 1) || true;", "main() -> Bool").fuel_used == 3


def test_concat_charges_shape_then_bytes() -> None:
    u = _usage('return string.concatBudgeted("ab", "c");', "main() -> String")
    # stmt 1, call 1, literals 2 (8 + ... bytes: "ab" 4, "c" 2); base 2; result 3 units = 6 bytes; 6 fuel
    assert (u.fuel_used, u.string_bytes, u.allocated_bytes) == (12, 12, 12)


def test_list_add_on_empty() -> None:
    u = _usage("return list.count(list.add(list.empty[I32](), 5));")
    # stmt 1, count 1, add 1, empty node 1 + 2 (alloc 8), literal 1, add 2+0+1 (alloc 16), count 2+1
    assert (u.fuel_used, u.allocated_bytes, u.collection_elements) == (13, 24, 1)


def test_map_set_and_get() -> None:
    u = _usage("m = map.set(map.empty[Map<I32, I32>](), 1, 2); return map.get(m, 1);")
    # set stmt 1, set node 1, empty node 1 + 2 (alloc 16), literals 2, map.set 2+0+1 (alloc 32 x 1) = 10
    # return 1, get node 1, var 1, literal 1, map.get 2+1 = 7
    assert (u.fuel_used, u.allocated_bytes, u.collection_elements) == (17, 48, 1)


def test_composite_equality_charges_both_shapes() -> None:
    u = _usage("return list.of(1) == list.of(1);", "main() -> Bool")
    # stmt 1, eq 1, each side: of node 1 + literal 1 + list.of 3 = 5 (x2); equality 2 nodes + 2 nodes
    assert u.fuel_used == 16


def test_shape_walk_fuel_for_64_nodes() -> None:
    items = ", ".join(["1"] * 63)
    u = _usage(f"x = list.of({items}); return 0;")
    # set 1, of node 1, 63 literals, list.of 2+63; the new list has 64 nodes -> 1 walk fuel; return 2
    assert u.fuel_used == 1 + 1 + 63 + 65 + 1 + 2


def test_string_equals_charges_both_lengths() -> None:
    # stmt 1, call 1, literals 2 (6 + 4 string bytes), base 2, 3 + 2 units
    u = _usage('return string.equals("abc", "ab");', "main() -> Bool")
    assert (u.fuel_used, u.string_bytes) == (11, 10)


def test_binding_charges() -> None:
    @read_probe("probe.text", cost=Cost(base_fuel=10, per_byte_fuel=1))
    def text() -> str:
        return "xy"

    pol = Policy.builder().grant("probe.text").with_max_wall_time_ms(60_000).build()
    result = run(module("return probe.text();", "main() -> String"), (), pol, [text])
    u = result.usage
    # stmt 1, call 1, base 10, result "xy" = 4 string bytes (shape), then 1 fuel per byte = 4
    assert (u.fuel_used, u.host_calls, u.string_bytes) == (16, 1, 4)
    assert result.binding_calls == {"probe.text": 1}


def test_inputs_are_charged_before_the_run() -> None:
    u = _usage("return 0;", "main(xs List<I32>) -> I32", ([1] * 100,))
    # the input has 101 nodes -> 1 walk fuel and 100 elements; the body costs 2
    assert (u.fuel_used, u.collection_elements) == (3, 100)


def test_game_world_demo_fuel() -> None:
    from .examples_loader import load_demo

    demo = load_demo()
    report = demo.run_demo(print_line=lambda _line: None)
    ok, killed, fuel, left = report["granted"]
    # killed = 0: 2; for 1 + start 1 + end (call 1 + var 1 + list.count 2+4) = 10
    # per iteration: 5 + if 1 + call node 1 + list.get (node 1 + var 1 + var 1 + 2+4) + kill base 10;
    #   a successful kill adds killed = killed + 1 (4); ids 1, 2, 3 exist, 4 does not
    # return 2
    per_miss = 5 + 1 + 1 + 9 + 10
    assert (ok, killed, left) == (True, 3, [7])
    assert fuel == 2 + 10 + 3 * (per_miss + 4) + per_miss + 2
