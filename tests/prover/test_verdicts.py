"""Verdicts on hand-written kernels: what is PROVED, what is REFUTED (and that the witness really
fails), what stays UNKNOWN, and the evidence each carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dotboxd.core.bindings import Cost, Int32, host_binding
from dotboxd.core.effects import Effect
from dotboxd.grammar.source import load_module
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import ProofReport, Verdict, prove_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _module(body: str, signature: str = "(n I32) -> I32", extra: str = "") -> str:
    return f'module "t" version "1.0.0";\n{extra}\nentrypoint fn main{signature} {{\n{body}\n}}\n'


def _policy(**limits: int) -> Policy:
    limits.setdefault("max_wall_time_ms", 60_000)
    return Policy.builder().with_limits(**limits).build()


def _prove(
    source: Any, policy: Policy, host: SandboxHost | None = None
) -> tuple[ProofReport, SandboxHost, Any]:
    host = host or SandboxHost()
    plan = host.prepare(source, policy)
    return prove_plan(plan), host, plan


QUADRATIC = "acc = 0;\nfor i in 0 .. n { for j in 0 .. n { acc = acc + 1; } }\nreturn acc;"


def test_unbounded_quadratic_loop_is_refuted_with_a_small_runnable_witness() -> None:
    report, host, plan = _prove(_module(QUADRATIC), _policy())
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.REFUTED
    assert fuel.witness is not None and fuel.reached is not None and fuel.limit is not None
    assert fuel.reached > fuel.limit
    assert "inputBounds" in fuel.hint and "maxFuel" in fuel.hint
    (n,) = fuel.witness.args
    assert 0 < n < 1000  # the search finds a small counterexample, not 2^31 - 1
    result = host.execute(plan, "main", list(fuel.witness.args), encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-FUEL"
    # one less than the witness still fits: the witness is the smallest one the bisection found
    smaller = host.execute(plan, "main", [n - 1], encoding="json")
    assert smaller.ok


def test_input_bounds_turn_the_same_kernel_into_a_proof() -> None:
    policy = (
        Policy.builder().with_limits(max_wall_time_ms=60_000).with_input_bounds("main", n=(0, 50)).build()
    )
    report, host, plan = _prove(_module(QUADRATIC), policy)
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.PROVED
    assert fuel.bound_max is not None and fuel.bound_max <= 100_000
    assert report.all_proved()
    worst = host.execute(plan, "main", [50], encoding="json")
    assert worst.ok and worst.usage.fuel_used <= fuel.bound_max
    refused = host.execute(plan, "main", [51], encoding="json")
    assert refused.error is not None and refused.error.code == "R-INPUT-BOUND"


def test_counter_while_loop_is_proved_terminating_with_its_ranking_function() -> None:
    body = "i = 0;\nwhile i < n { i = i + 2; }\nreturn i;"
    policy = (
        Policy.builder().with_limits(max_wall_time_ms=60_000).with_input_bounds("main", n=(0, 1000)).build()
    )
    report, _, _ = _prove(_module(body), policy)
    proof = report.function("main")
    (loop,) = proof.loops
    assert loop.kind == "while" and loop.verdict is Verdict.PROVED
    assert "ranking function r = n - i" in loop.method
    assert loop.obligations
    assert proof.verdict is Verdict.PROVED


def test_a_loop_without_a_ranking_function_is_unknown_and_metered() -> None:
    body = "x = n;\nwhile x != 1 { if x % 2 == 0 { x = x / 2; } else { x = 3 * x + 1; } }\nreturn x;"
    report, host, plan = _prove(_module(body), _policy())
    proof = report.function("main")
    assert proof.loops[0].verdict is Verdict.UNKNOWN
    fuel = proof.budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.UNKNOWN and fuel.bound == "unbounded"
    assert host.execute(plan, "main", [27], encoding="json").ok  # the meter, not the prover, decides


def test_over_budget_example_is_refuted_and_its_witness_exhausts_the_budget() -> None:
    report, host, plan = _prove(load_module(EXAMPLES / "over-budget.json")[0], Policy.default())
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.REFUTED and fuel.witness is not None
    assert fuel.estimated_factor is not None and fuel.estimated_factor > 10
    assert "proved that the input" in fuel.message() and "exceeds the budget by" not in fuel.message()
    result = host.execute(plan, "main", list(fuel.witness.args), encoding="json")
    assert result.error is not None and result.error.category == "QuotaExceeded"
    loop = report.function("main").loops[0]
    assert loop.kind == "while" and loop.verdict is Verdict.PROVED


def test_loot_score_overflow_is_refuted_per_operation() -> None:
    report, host, plan = _prove(load_module(EXAMPLES / "loot-score.json")[0], _policy())
    proof = report.function("main")
    assert proof.verdict is Verdict.PROVED  # its budgets are constant
    first = proof.safety[0]
    assert first.op == "mul" and first.verdict is Verdict.REFUTED and first.witness is not None
    result = host.execute(plan, "main", list(first.witness.args), encoding="json")
    assert result.error is not None and result.error.code == "R-ARITH-OVERFLOW"
    bounded = Policy.builder().with_input_bounds("main", level=(0, 100), rarity=(0, 10)).build()
    safe, _, _ = _prove(load_module(EXAMPLES / "loot-score.json")[0], bounded)
    assert all(s.verdict is Verdict.PROVED for s in safe.function("main").safety)
    assert len(safe.safe_nodes) == 3


def test_division_guarded_by_the_path_condition_is_proved() -> None:
    body = "if d != 0 { return 100 / d; }\nreturn 0;"
    report, _, _ = _prove(_module(body, "(d I32) -> I32"), _policy())
    (div,) = report.function("main").safety
    assert div.op == "div" and div.verdict is Verdict.PROVED  # d != 0 and (d == -1 => 100 != MIN)


def test_unguarded_division_is_refuted_with_zero() -> None:
    report, _, _ = _prove(_module("return 100 / d;", "(d I32) -> I32"), _policy())
    (div,) = report.function("main").safety
    assert div.verdict is Verdict.REFUTED and div.witness is not None and div.witness.args == (0,)


def test_list_index_inside_a_for_loop_over_its_count_is_proved() -> None:
    body = "acc = 0;\nfor i in 0 .. list.count(xs) { acc = acc + list.get(xs, i) % 10; }\nreturn acc;"
    report, _, _ = _prove(_module(body, "(xs List<I32>) -> I32"), _policy())
    ops = {s.op: s.verdict for s in report.function("main").safety}
    assert ops["list.get"] is Verdict.PROVED
    assert ops["add"] is Verdict.PROVED  # |acc| <= 9 * 10,000 iterations at most


@host_binding(
    id="demo.ping",
    cost=Cost(5, max_calls_per_run=3),
    effects=Effect.CPU | Effect.HOST_STATE_READ,
    capability="demo.ping.read",
)
def ping() -> Int32:
    return 1


def test_host_calls_per_binding_and_total() -> None:
    host = SandboxHost(bindings=[ping])
    policy = Policy.builder().with_limits(max_wall_time_ms=60_000).grant("demo.ping.read").build()
    body = "acc = 0;\nfor i in 0 .. n { acc = acc + demo.ping(); }\nreturn acc;"
    plan = host.prepare(_module(body, extra='requires "demo.ping.read";'), policy)
    report = prove_plan(plan)
    proof = report.function("main")
    per = proof.budget("bindingCalls:demo.ping")
    # a binding may fail, so no must path goes through it: no counterexample, and no proof either
    assert per is not None and per.limit == 3 and per.verdict is Verdict.UNKNOWN
    total = proof.budget("hostCalls")
    assert total is not None and total.bound == "max(0, n)"
    bounded = (
        Policy.builder()
        .with_limits(max_wall_time_ms=60_000)
        .grant("demo.ping.read")
        .with_input_bounds("main", n=(0, 3))
        .build()
    )
    proved = prove_plan(host.prepare(_module(body, extra='requires "demo.ping.read";'), bounded))
    assert proved.all_proved()


def test_loop_iteration_limit_is_a_separate_verdict() -> None:
    body = "acc = 0;\nfor i in 0 .. n { acc = acc + 1; }\nreturn acc;"
    policy = Policy.builder().with_limits(max_wall_time_ms=60_000, max_loop_iterations=10).build()
    report, host, plan = _prove(_module(body), policy)
    loops = report.function("main").budget("loopIterations")
    assert loops is not None and loops.verdict is Verdict.REFUTED and loops.witness is not None
    assert loops.witness.args == (11,)
    result = host.execute(plan, "main", [11], encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-LOOP"


def test_private_functions_are_summarised_and_inlined() -> None:
    helper = "fn twice(k I32) -> I32 { acc = 0; for i in 0 .. k { acc = acc + 2; } return acc; }"
    body = "return twice(n) + twice(3);"
    policy = (
        Policy.builder().with_limits(max_wall_time_ms=60_000).with_input_bounds("main", n=(0, 100)).build()
    )
    report, host, plan = _prove(_module(body, extra=helper), policy)
    assert report.function("main").verdict is Verdict.PROVED
    assert report.function("main").call_depth == 2
    private = report.function("twice")
    assert not private.entrypoint and private.verdict is not Verdict.REFUTED  # never refuted: not runnable
    run = host.execute(plan, "main", [100], encoding="json")
    bound = report.bound_at("main", "fuel", [100])
    assert run.ok and bound is not None and run.usage.fuel_used <= bound


def test_a_counterexample_never_relies_on_an_operation_that_would_fail_first() -> None:
    """f(n) overflows for every n > 21, and only n >= 141 would exhaust the fuel: every input that
    exceeds the budget fails earlier with an overflow, so the budget must not be REFUTED. With a
    factor that leaves a window of inputs, the counterexample comes from that window."""
    helper = "fn f(x I32) -> I32 { return x * 100000000; }"
    body = "a = f(n);\nfor i in 0 .. n { for j in 0 .. n { } }\nreturn a;"
    report, _, _ = _prove(_module(body, extra=helper), _policy())
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.UNKNOWN
    window = helper.replace("100000000", "10000000")  # overflows only above 214
    report, host, plan = _prove(_module(body, extra=window), _policy())
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.REFUTED and fuel.witness is not None
    (n,) = fuel.witness.args
    assert 141 <= n <= 214  # 141 is the smallest (a run at 140 uses 99,132 fuel)
    result = host.execute(plan, "main", [n], encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-FUEL"


def test_assumptions_made_in_one_branch_survive_the_merge() -> None:
    body = "a = 0;\nif flag { a = n * 100000000; }\nfor i in 0 .. n { for j in 0 .. n { } }\nreturn a;"
    report, host, plan = _prove(_module(body, "(n I32, flag Bool) -> I32"), _policy())
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.REFUTED and fuel.witness is not None
    assert fuel.witness.args[1] is False  # with flag = true every such n overflows first
    result = host.execute(plan, "main", list(fuel.witness.args), encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-FUEL"


def test_what_a_branch_learned_before_the_merge_is_kept() -> None:
    """With flag true the inner branch returns, so the loop is reached only with flag false: a
    counterexample must say so (found by the loop-heavy generator)."""
    body = "acc = 0;\nif flag {\nif flag { return acc; }\n}\nfor i in 0 .. n { acc = acc; }\nreturn acc;"
    report, host, plan = _prove(_module(body, "(n I32, flag Bool) -> I32"), _policy(max_fuel=300))
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.REFUTED and fuel.witness is not None
    assert fuel.witness.args[1] is False
    result = host.execute(plan, "main", list(fuel.witness.args), encoding="json")
    assert result.error is not None and result.error.code == "R-QUOTA-FUEL"


def _assert_inexact_branch_leaves_fuel_unknown(body: str) -> None:
    """``body`` (over ``n I32, s String``) guards a fuel-hungry loop behind ``string.equals``, which
    the prover cannot evaluate: no REFUTED verdict may come from the loop, and a huge ``n`` runs."""
    policy = (
        Policy.builder()
        .with_limits(max_wall_time_ms=60_000, max_fuel=300)
        .with_input_bounds("main", s=(0, 10))
        .build()
    )
    report, host, plan = _prove(_module(body, "(n I32, s String) -> I32"), policy)
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.UNKNOWN
    assert host.execute(plan, "main", [10**6, "x"], encoding="json").ok


def test_an_inexact_branch_that_may_return_ends_the_must_path() -> None:
    """The prover cannot evaluate string.equals, and here it is always true: every run returns
    before the loop, so the loop's cost must not count toward a counterexample."""
    _assert_inexact_branch_leaves_fuel_unknown(
        "if string.equals(s, s) { return 0; }\nfor i in 0 .. n { }\nreturn 1;"
    )


def test_an_inexact_branch_that_returns_on_some_paths_ends_the_must_path() -> None:
    """The loop only runs for n <= 5 (every larger n returns inside the inexact branch)."""
    _assert_inexact_branch_leaves_fuel_unknown(
        "if string.equals(s, s) {\nif n > 5 { return 0; }\n}\nfor i in 0 .. n { }\nreturn 1;"
    )


def test_pure_builtin_calls_count_in_the_host_call_bound() -> None:
    """``math.*`` and ``string.*`` calls are host calls (pure bindings): the prover's hostCalls bound
    counts them, so a loop of built-in calls is PROVED only within the maxHostCalls it fits."""
    body = 'acc = 0;\nfor i in 0 .. n { acc = acc + math.max(i, 1) + string.length("ab"); }\nreturn acc;'
    report, _, _ = _prove(_module(body), _policy())
    total = report.function("main").budget("hostCalls")
    assert total is not None and total.bound == "2*max(0, n)" and total.verdict is not Verdict.PROVED

    def host_calls(hi: int) -> Verdict:
        policy = Policy.builder().with_limits(max_wall_time_ms=60_000).with_input_bounds("main", n=(0, hi))
        proof = prove_plan(SandboxHost().prepare(_module(body), policy.build())).function("main")
        verdict = proof.budget("hostCalls")
        assert verdict is not None
        return verdict.verdict

    assert host_calls(50) is Verdict.PROVED  # 2 * 50 = 100 = the default maxHostCalls
    assert host_calls(51) is not Verdict.PROVED
