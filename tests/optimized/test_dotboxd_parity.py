"""DotBoxD parity at run time (issue 12), checked on both backends, which must also agree exactly.

* pure built-ins (``math.*``, ``string.*``, ``int32.toStringInvariant``) are pure bindings: every call
  is a host call, counted in ``usage.hostCalls`` and ``bindingCalls`` and refused past
  ``maxHostCalls``; ``list.*``, ``map.*``, ``record.*`` and ``numeric.*`` are not;
* ``and``/``or`` move an operand only when neither can fail, so a quota or value error is never
  skipped by the reordering;
* ``maxWallTimeMs: 0`` is Timeout before the first statement;
* usage at a quota failure counts the refused attempt (host calls, loop iterations).
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.host import Policy, SandboxHost

from .differential import assert_agree, run_plan_both


def _both(body: str, signature: str = "main() -> I32", args: tuple[Any, ...] = (), **limits: int) -> Any:
    """Run on both backends, assert they agree on everything observable, return the reference's."""
    limits.setdefault("max_wall_time_ms", 60_000)
    source = f'module "t" version "1.0.0";\nentrypoint fn {signature} {{\n{body}\n}}\n'
    plan = SandboxHost().prepare(source, Policy.builder().with_limits(**limits).build())
    pairs = run_plan_both(plan, "main", [list(args)])
    assert_agree(pairs, body)
    return pairs[0][0]


COUNTED = """
s = 0;
for i in 0 .. 3 {
  s = s + math.abs(i) + math.max(i, 1) + string.length(int32.toStringInvariant(i));
}
t = string.concatBudgeted("a", "b");
if string.isEmpty(t) { return 0; }
n = list.count(list.of(1, 2));
return s;
"""


def test_pure_builtin_calls_count_as_host_calls_and_binding_calls() -> None:
    seen = _both(COUNTED)
    assert seen["ok"], seen["error"]
    assert (
        seen["usage"]["hostCalls"] == 4 * 3 + 2
    )  # abs, max, length, toString per iteration; concat, isEmpty
    assert seen["bindingCalls"] == {
        "int32.toStringInvariant": 3,
        "math.abs": 3,
        "math.max": 3,
        "string.concatBudgeted": 1,
        "string.isEmpty": 1,
        "string.length": 3,
    }


@pytest.mark.parametrize(
    "call",
    [
        "math.abs(i)",
        "math.min(i, 2)",
        "math.clamp(i, 0, 9)",
        'string.length("ab")',
        'string.compareOrdinal("a", "b")',
    ],
)
def test_pure_builtin_calls_cannot_exceed_max_host_calls(call: str) -> None:
    # a hot loop of built-in calls is bounded by maxHostCalls, on the optimized backend's fast and
    # bulk paths as on the reference interpreter; the refused call is counted (hostCalls = N + 1)
    body = f"s = 0;\nfor i in 0 .. 500 {{ s = s + {call}; }}\nreturn s;"
    seen = _both(body, max_host_calls=40)
    assert seen["error"] is not None and seen["error"][1] == "R-QUOTA-HOST-CALLS", seen["error"]
    assert seen["usage"]["hostCalls"] == 41
    name = call.split("(")[0]
    assert seen["bindingCalls"] == {name: 40}


def test_collection_and_numeric_intrinsics_are_not_host_calls() -> None:
    body = (
        "m = map.set(map.empty[Map<I32, I32>](), 1, 2);\n"
        "l = list.add(list.of(1), 2);\n"
        "r = record.new[Record<I32, Bool>](1, true);\n"
        "if map.containsKey(m, 1) && record.get(r, 1) && numeric.toI64(1) == numeric.toI64(1) {\n"
        "  return list.get(l, 1) + map.get(m, 1) + list.count(l);\n"
        "}\n"
        "return 0;"
    )
    seen = _both(body, max_host_calls=0)
    assert seen["ok"] and seen["value"] == 6, seen
    assert seen["usage"]["hostCalls"] == 0 and seen["bindingCalls"] == {}


@pytest.mark.parametrize(
    "left",
    [
        "list.count(list.of(1, 2, 3)) > 0",  # exceeds maxListLength = 2
        "map.containsKey(map.set(map.set(map.set(map.empty[Map<I32, I32>](), 1, 1), 2, 2), 3, 3), 1)",
    ],
)
@pytest.mark.parametrize(("op", "decider"), [("&&", "false"), ("||", "true")])
def test_and_or_never_skips_a_left_operand_that_would_exceed_a_quota(
    left: str, op: str, decider: str
) -> None:
    # authored order: the left operand runs first and fails, although the cheaper right one decides
    seen = _both(
        f"if ({left}) {op} {decider} {{ return 1; }}\nreturn 0;", max_list_length=2, max_map_entries=2
    )
    assert seen["error"] is not None and seen["error"][0] == "QuotaExceeded", seen


def test_and_or_never_skips_a_left_operand_that_would_exceed_max_host_calls() -> None:
    seen = _both("if (math.abs(1) > 0) && false { return 1; }\nreturn 0;", max_host_calls=0)
    assert seen["error"] is not None and seen["error"][1] == "R-QUOTA-HOST-CALLS", seen
    assert seen["usage"]["hostCalls"] == 1


def test_and_or_still_runs_a_cheaper_operand_first_when_neither_can_fail() -> None:
    # (a > 7) == (a < 3) cannot fail; the right operand decides and the left is never evaluated:
    # statement 1 + and 1 + right literal 1 + return 1 + literal 1
    seen = _both("if ((a > 7) == (a < 3)) && false { return 1; }\nreturn 0;", "main(a I32) -> I32", (5,))
    assert seen["ok"] and seen["value"] == 0 and seen["usage"]["fuelUsed"] == 5, seen


@pytest.mark.parametrize("body", ["return 1;", "s = 0;\nfor i in 0 .. 100000 { s = s + 1; }\nreturn s;"])
def test_zero_wall_time_is_timeout_before_the_first_statement(body: str) -> None:
    seen = _both(body, max_wall_time_ms=0)
    assert seen["error"] is not None and seen["error"][:2] == ("Timeout", "R-TIMEOUT"), seen
    assert seen["usage"]["fuelUsed"] == 0


def test_loop_refused_by_max_loop_iterations_counts_the_refused_iteration() -> None:
    # a bulk loop on the optimized backend, per-iteration charges on the reference
    seen = _both("s = 0;\nfor i in 0 .. 10 { s = s + i; }\nreturn s;", max_loop_iterations=4)
    assert seen["error"] is not None and seen["error"][1] == "R-QUOTA-LOOP", seen
    assert seen["usage"]["loopIterations"] == 5
