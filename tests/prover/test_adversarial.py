"""The prover is not attack surface: adversarial shapes end in a bounded, deterministic UNKNOWN.

Each module below is valid (the validator accepts it) but built to blow up a naive analysis: deep
loop nests (a bound of degree 40), huge polynomial expressions, thousands of loops, an exponential
inlining tree, many ``while`` loops each needing solver work. The prover must return a report
(never raise, never hang), give the same report twice, and stay inside its own budgets; where it
gives up, the verdict is UNKNOWN with a reason, so runtime metering decides.
"""

from __future__ import annotations

import json

from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import ProofReport, Verdict, prove_plan
from dotboxd.validator.prover.obligations import ObligationLog


def _prove(source: str) -> ProofReport:
    plan = SandboxHost().prepare(source, Policy.builder().with_limits(max_wall_time_ms=60_000).build())
    first = prove_plan(plan)
    second = prove_plan(plan)
    assert json.dumps(first.to_json()) == json.dumps(second.to_json())  # deterministic
    assert len(first.obligations) <= ObligationLog().max_recorded
    return first


def _module(body: list[str], signature: str = "(n I32) -> I32", functions: str = "") -> str:
    return "\n".join(
        ['module "adv" version "1.0.0";', functions, f"entrypoint fn main{signature} {{", *body, "}"]
    )


def test_deep_loop_nest() -> None:
    depth = 25
    body = ["acc = 0;"]
    body += [f"for i{k} in 0 .. n {{" for k in range(depth)]
    body += ["acc = acc + 1;"] + ["}"] * depth + ["return acc;"]
    proof = _prove(_module(body)).function("main")
    fuel = proof.budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.UNKNOWN
    assert "too" in fuel.reason  # a size cap stopped the analysis (degree 25), not a crash


def test_huge_polynomial_expression() -> None:
    product = " * ".join(["(n + m)"] * 30)
    body = [f"x = {product};", "for i in 0 .. x { }", "return 0;"]
    proof = _prove(_module(body, "(n I32, m I32) -> I32")).function("main")
    assert proof.verdict is Verdict.UNKNOWN


def test_thousands_of_loops() -> None:
    body = ["acc = 0;"] + ["for i in 0 .. n { acc = acc + 1; }"] * 1500 + ["return acc;"]
    proof = _prove(_module(body)).function("main")
    assert proof.verdict in (Verdict.UNKNOWN, Verdict.REFUTED)
    assert proof.budget("fuel") is not None


def test_exponential_inlining_tree() -> None:
    levels = 16
    functions = [f"fn f{levels}(x I32) -> I32 {{ return x + 1; }}"]
    for k in range(levels - 1, -1, -1):
        functions.append(f"fn f{k}(x I32) -> I32 {{ return f{k + 1}(x) + f{k + 1}(x); }}")
    report = _prove(_module(["return f0(n);"], functions="\n".join(functions)))
    # 2^17 calls really happen at run time; summaries keep the analysis linear and exact
    fuel = report.function("main").budget("fuel")
    assert fuel is not None and fuel.verdict is Verdict.REFUTED and fuel.bound_max is not None
    assert fuel.bound_max > 2**17


def test_many_while_loops_share_one_solver_budget() -> None:
    body = []
    for k in range(150):
        body += [f"k{k} = 0;", f"while k{k} < n {{ k{k} = k{k} + 1; }}"]
    body.append("return 0;")
    report = _prove(_module(body))
    loops = report.function("main").loops
    assert len(loops) == 150
    assert all(loop.verdict in (Verdict.PROVED, Verdict.UNKNOWN) for loop in loops)


def test_deep_expression_nesting() -> None:
    expr = "n"
    for k in range(28):
        expr = f"({expr} + {k % 3})"
    report = _prove(_module([f"return {expr};"]))
    assert report.function("main").budget("fuel") is not None
