"""Checks dropped on the strength of prover facts, the verifier's own budget, and run isolation."""

from __future__ import annotations

import ast
import threading

import pytest

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, GenOptions, OptimizedBackend, compile_plan
from dotboxd.runtime.optimized import verifier as verifier_module
from dotboxd.runtime.optimized.codegen import generate
from dotboxd.runtime.optimized.errors import VerifierFailure
from dotboxd.runtime.optimized.proofs import proof_facts
from dotboxd.validator import prover as prover_package
from dotboxd.validator.policy import Policy

from .differential import differences, observe, run_plan_both
from .kernels import FEATURES, LOOPS_AND_FAULTS, double, prepare

ARITH = """module "arith" version "1.0.0";
fn sq(x I32) -> I32 { return x * x + 1; }
entrypoint fn main(n I32) -> I32 {
    acc = 0;
    for i in 0 .. n {
        if i % 3 == 0 { acc = (acc + i * 2) % 1000003; } else { acc = acc - 1; }
        acc = (acc + sq(i % 100)) % 1000003;
        if n < 5000 { acc = acc + n * n; }
    }
    return acc;
}"""
"""``n * n`` is safe only under its branch's condition, which the prover reads and the generator's own
value ranges (``value_ranges.py``, flow-insensitive) do not: a check only proofs drop. ``acc`` then
has no range of its own, so ``acc + sq(..)`` keeps its check without proofs too."""


def _bounded(high: int, **limits: int) -> Policy:
    limits.setdefault("max_wall_time_ms", 60_000)
    return Policy.builder().with_limits(**limits).with_input_bounds("main", n=(0, high)).build()


def test_proofs_drop_checks_the_prover_proved() -> None:
    plan = prepare(ARITH, _bounded(10_000))
    plain = compile_plan(plan, keep_module=True).source()
    proved = compile_plan(plan, GenOptions(proofs=True), keep_module=True).source()
    assert proved.count("_s_c2(") < plain.count("_s_c2(")


def test_the_generator_reads_proof_facts_and_never_runs_the_prover(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proof facts are an input of ``generate``: given the prover's safe nodes it drops exactly the
    checks ``compile_plan`` drops, and asked for proofs with no facts it drops none (and loads no
    prover: a generator that called it would fail here)."""
    plan = prepare(ARITH, _bounded(10_000))
    facts = proof_facts(plan, GenOptions(proofs=True))
    assert facts
    monkeypatch.setattr(prover_package, "prove_plan", _no_prover)
    with_facts = ast.unparse(generate(plan, GenOptions(proofs=True), facts).module)
    without = ast.unparse(generate(plan, GenOptions(proofs=True)).module)
    plain = ast.unparse(generate(plan).module)
    assert without == plain
    assert with_facts.count("_s_c2(") < plain.count("_s_c2(")
    monkeypatch.undo()
    assert compile_plan(plan, GenOptions(proofs=True), keep_module=True).source() == with_facts


def _no_prover(*args: object) -> object:
    raise AssertionError("code generation called the prover")


@pytest.mark.parametrize("n", [0, 1, 7, 2_500, 10_000])
def test_proved_code_agrees_with_the_reference(n: int) -> None:
    plan = prepare(ARITH, _bounded(10_000))
    ((reference, optimized),) = run_plan_both(
        plan, "main", [[n]], encoding="python", options=GenOptions(proofs=True)
    )
    assert not differences(reference, optimized)


@pytest.mark.parametrize("fuel", [0, 37, 1_000, 5_000])
def test_proved_code_stops_at_the_same_charge(fuel: int) -> None:
    plan = prepare(ARITH, _bounded(10_000, max_fuel=fuel))
    ((reference, optimized),) = run_plan_both(
        plan, "main", [[400]], encoding="python", options=GenOptions(proofs=True)
    )
    assert not differences(reference, optimized)


def test_inputs_outside_the_proved_bounds_never_reach_the_kernel() -> None:
    plan = prepare(ARITH, _bounded(100))
    ((reference, optimized),) = run_plan_both(
        plan, "main", [[101]], encoding="python", options=GenOptions(proofs=True)
    )
    assert optimized["error"][1] == "R-INPUT-BOUND"
    assert not differences(reference, optimized)


def test_the_verifier_refuses_rather_than_walks_an_oversized_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verifier_module, "MAX_NODES", 50)
    with pytest.raises(VerifierFailure, match="too large"):
        compile_plan(prepare(FEATURES))


def test_concurrent_runs_of_one_artifact_are_independent() -> None:
    plan = prepare(LOOPS_AND_FAULTS)
    backend = OptimizedBackend(cache=ArtifactCache())
    host = SandboxHost(bindings=[double], backends={"optimized": backend})
    inputs = [[n, d] for n in (3, 6, 9, 40) for d in (-1, 2, 5)]
    expected = {tuple(args): observe(host.execute(plan, "main", args)) for args in inputs}
    failures: list[str] = []

    def worker(offset: int) -> None:
        for index in range(30):
            args = inputs[(index + offset) % len(inputs)]
            got = observe(host.execute(plan, "main", args, backend="optimized"))
            diff = differences(expected[tuple(args)], got)
            if diff:
                failures.append(f"{args}: {diff}")

    threads = [threading.Thread(target=worker, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
