"""The static cost semantics charges what the reference interpreter charges.

For straight-line code and loops whose trip counts and sizes are exact functions of the inputs, the
prover's bound is not just an upper bound: it must equal the interpreter's ``ResourceUsage`` on
every input. Each case below is such a kernel; the bound is evaluated on each input and compared
with a real run. This pins every symbolic rule (built-ins, collections, shapes, loops, calls,
bindings) to the charges of ``dotboxd/core/costs.py`` as the runtime applies them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dotboxd.core.bindings import Cost, Int32, host_binding
from dotboxd.core.effects import Effect
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import prove_plan

RESOURCES = {
    "fuel": "fuel_used",
    "loopIterations": "loop_iterations",
    "hostCalls": "host_calls",
    "allocatedBytes": "allocated_bytes",
}


def _policy() -> Policy:
    return Policy.builder().with_limits(max_wall_time_ms=60_000).grant("demo.tick.read").build()


@host_binding(
    id="demo.tick", cost=Cost(3), effects=Effect.CPU | Effect.HOST_STATE_READ, capability="demo.tick.read"
)
def tick() -> Int32:
    return 1


def _module(body: str, signature: str, extra: str = "") -> str:
    return f'module "t" version "1.0.0";\n{extra}\nentrypoint fn main{signature} {{\n{body}\n}}\n'


CASES: list[tuple[str, str, str, list[list[Any]]]] = [
    ("return 1 + 2;", "() -> I32", "", [[]]),
    ('s2 = "ab";\nreturn s2;', "() -> String", "", [[]]),
    ("return list.count(list.of(1, 2, 3));", "() -> I32", "", [[]]),
    ("for i in 0 .. 3 { i; }\nreturn 0;", "() -> I32", "", [[]]),
    ("return list.count(list.add(xs, 1));", "(xs List<I32>) -> I32", "", [[[]], [[1, 2]], [list(range(70))]]),
    ("return list.get(xs, 0) + list.count(xs);", "(xs List<I32>) -> I32", "", [[[5]], [[1, 2, 3]]]),
    (
        'return string.length(string.concatBudgeted(s, "xy"));',
        "(s String) -> I32",
        "",
        [[""], ["abc"], ["é😀"]],
    ),
    ('return string.equals(s, "abc");', "(s String) -> Bool", "", [[""], ["abcd"]]),
    ('return string.compareOrdinal("zz", s);', "(s String) -> I32", "", [[""], ["abcd"]]),
    ('return string.contains(s, "bc");', "(s String) -> Bool", "", [[""], ["abcd"], ["é😀bc"]]),
    ('return string.indexOf(s, "c");', "(s String) -> I32", "", [[""], ["abcd"]]),
    ('return string.lastIndexOf(s, "c");', "(s String) -> I32", "", [[""], ["abcdc"], ["é😀c"]]),
    (
        'a = string.startsWith(s, "ab");\nb = string.endsWith(s, "d");\nreturn a == b;',
        "(s String) -> Bool",
        "",
        [[""], ["abcd"]],
    ),
    (
        "return string.toUpperInvariant(string.toLowerInvariant(s));",
        "(s String) -> String",
        "",
        [[""], ["AbÇ😀ß"]],
    ),
    ("return parse.int(s);", "(s String) -> I32", "", [["12"], ["-0042"], ["+2147483647"]]),
    ("return math.sin(x) + math.cos(x) + math.tan(x);", "(x F64) -> F64", "", [[0.5]]),
    (
        "return string.substringBudgeted(s, 0, string.length(s));",
        "(s String) -> String",
        "",
        [[""], ["hello"]],
    ),
    (
        "m2 = map.set(m, 1000, 1);\nreturn map.get(m2, 1000);",
        "(m Map<I32, I32>) -> I32",
        "",
        [[[]], [[[1, 2], [3, 4]]]],
    ),
    (
        "return list.count(list.slice(xs, 1, 2)) + map.count(m);",
        "(xs List<I32>, m Map<I32, I32>) -> I32",
        "",
        [[[1, 2, 3], []], [[5, 6, 7, 8], [[1, 2], [3, 4]]]],
    ),
    (
        'return list.slice(list.of("ab", "cé", "😀"), 1, n);',
        "(n I32) -> List<String>",
        "",
        [[0], [2]],
    ),
    ("return map.containsKey(m, 3);", "(m Map<I32, I32>) -> Bool", "", [[[]], [[[1, 2], [3, 4]]]]),
    (
        'r = record.new[Record<I32, String>](n, "q");\nreturn record.get(r, 0);',
        "(n I32) -> I32",
        "",
        [[0], [9]],
    ),
    (
        "acc = 0;\nfor i in 0 .. n { acc = acc + i; }\nreturn acc;",
        "(n I32) -> I32",
        "",
        [[-3], [0], [1], [17]],
    ),
    (
        "acc = 0;\nfor i in 0 .. n { for j in 0 .. n { acc = acc + 1; } }\nreturn acc;",
        "(n I32) -> I32",
        "",
        [[0], [3], [10]],
    ),
    ("i = 0;\nwhile i < n { i = i + 1; }\nreturn i;", "(n I32) -> I32", "", [[-2], [0], [7]]),
    ("if n > 3 { return n * 2; } else { return 0 - n; }", "(n I32) -> I32", "", [[1], [4], [100]]),
    (
        "return helper(n) + helper(2);",
        "(n I32) -> I32",
        "fn helper(k I32) -> I32 { return k + 1; }",
        [[1], [7]],
    ),
    ("t = demo.tick();\nreturn t + demo.tick();", "() -> I32", 'requires "demo.tick.read";', [[]]),
]


@pytest.mark.parametrize(("body", "signature", "extra", "inputs"), CASES)
def test_bound_equals_the_interpreters_usage(
    body: str, signature: str, extra: str, inputs: list[list[Any]]
) -> None:
    for where, bound, used in _bounds_and_usage(body, signature, inputs, extra):
        assert bound == used, where


def _bounds_and_usage(
    body: str, signature: str, inputs: list[list[Any]], extra: str = "", *, must_succeed: bool = True
) -> Iterator[tuple[tuple[str, list[Any]], int | None, int]]:
    """Prove the kernel once, run it on every input, and yield ``((resource, args), bound, used)``
    for each resource in RESOURCES: the static bound at those inputs next to the interpreter's usage."""
    host = SandboxHost(bindings=[tick])
    plan = host.prepare(_module(body, signature, extra), _policy())
    report = prove_plan(plan)
    for args in inputs:
        result = host.execute(plan, "main", args, encoding="json")
        if must_succeed:
            assert result.error is None, result.error
        values = _decoded(plan, args)
        for resource, attr in RESOURCES.items():
            yield (resource, args), report.bound_at("main", resource, values), getattr(result.usage, attr)


def _decoded(plan: Any, args: list[Any]) -> list[Any]:
    from dotboxd.core.types import to_type_ref
    from dotboxd.core.values import decode_typed
    from dotboxd.grammar import literals

    types = plan.functions["main"].parameter_types
    return [decode_typed(a, to_type_ref(t), literals) for a, t in zip(args, types, strict=True)]


def test_spec_worked_examples() -> None:
    """spec/costs.md section 10, as bounds."""
    expected = {
        "return 1 + 2;": (4, 0),
        'x = "ab";\nreturn 0;': (4, 4),
        "return list.count(list.of(1, 2, 3));": (16, 48),
        "for i in 0 .. 3 { i; }\nreturn 0;": (24 + 2, 0),
    }
    host = SandboxHost(bindings=[tick])
    for body, (fuel, alloc) in expected.items():
        report = prove_plan(host.prepare(_module(body, "() -> I32"), _policy()))
        assert report.bound_at("main", "fuel", []) == fuel
        assert report.bound_at("main", "allocatedBytes", []) == alloc


UPPER_ONLY = [
    # digits of a number and key presence are not tracked
    ("m2 = map.set(m, 1, 1);\nreturn int32.toStringInvariant(n);", "(n I32, m Map<I32, I32>) -> String"),
    # a collection grown in a loop is charged at its largest size in every iteration
    (
        "ys = list.empty[I32]();\nfor i in 0 .. n { ys = list.add(ys, i); }\nreturn int32.toStringInvariant(list.count(ys));",
        "(n I32, m Map<I32, I32>) -> String",
    ),
]


@pytest.mark.parametrize(("body", "signature"), UPPER_ONLY)
def test_upper_bounds_where_charges_depend_on_data(body: str, signature: str) -> None:
    inputs: list[list[Any]] = [[5, [[1, 1]]], [-2147483648, []], [123456, [[2, 3]]], [40, []]]
    for where, bound, used in _bounds_and_usage(body, signature, inputs, must_succeed=False):
        assert bound is not None and bound >= used, where


TEXT_RESULT_CASES: list[tuple[str, str, list[list[Any]]]] = [
    # charges that depend on the text (occurrences, pieces, placeholders): upper bounds, never below
    (
        'return list.count(string.split(s, ","));',
        "(s String) -> I32",
        [[""], ["a,b,,c"], [",,,,"], ["é😀,x"]],
    ),
    ("return string.split(s, t);", "(s String, t String) -> List<String>", [["abc", ""], ["aaaa", "a"]]),
    (
        'return string.replace(s, "ab", t);',
        "(s String, t String) -> String",
        [["", "x"], ["ababab", "xyz😀"]],
    ),
    ('return string.replace(s, t, "");', "(s String, t String) -> String", [["abc", ""], ["abcabc", "c"]]),
    (
        'return format.simple(s, list.of(t, "é"));',
        "(s String, t String) -> String",
        [["", ""], ["{0}{1}{0}", "long text"], ["{{}}x{1}", "q"]],
    ),
    ("return map.keys(m);", "(m Map<I32, I32>) -> List<I32>", [[[]], [[[3, 1], [1, 2], [2, 3]]]]),
    (
        "return list.count(map.keys(m));",
        "(m Map<String, I32>) -> I32",
        [[[]], [[["bb", 1], ["a", 2]]], [[[str(i) * 7, i] for i in range(9)]]],
    ),
]


@pytest.mark.parametrize(("body", "signature", "inputs"), TEXT_RESULT_CASES)
def test_extension_text_builtins_bound_every_run(body: str, signature: str, inputs: list[list[Any]]) -> None:
    """string.split, string.replace, format.simple and map.keys: the static bound is at or above the
    interpreter's usage on every input (and exact for the host-call count)."""
    for (resource, args), bound, used in _bounds_and_usage(body, signature, inputs):
        assert bound is not None and bound >= used, (resource, args)
        if resource == "hostCalls":
            assert bound == used, args
