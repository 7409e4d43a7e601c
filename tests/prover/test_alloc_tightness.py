"""Allocation bounds follow the input's own string bytes, not the worst case of every text.

An input ``List<String>`` is charged, at entry, exactly the string bytes it holds. The prover used
to bound that charge by "every item a text of ``maxStringLength`` units" (131,072 bytes per item),
so on a list of two short texts the bound was 262,144 where the run allocated 6: that single term
made the allocatedBytes tightness p90 on the generated corpus 2,033x. Those bytes are now an atom of
the input model, which a bound evaluated on an input reads exactly; the budget questions still see
its whole range.
"""

from __future__ import annotations

from typing import Any

from dotboxd.core.types import to_type_ref
from dotboxd.core.values import Value, decode_typed
from dotboxd.grammar import literals
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.prover import Verdict, prove_plan

SOURCE = """module "t" version "1.0.0";
entrypoint fn main(xs List<String>, m Map<String, I32>) -> I32 {
  return list.count(xs) + map.count(m);
}
"""


def test_an_input_of_texts_is_bounded_by_its_own_string_bytes() -> None:
    """Threat: an unsound or useless allocation bound (T-PRV-01): the bound on each input is at
    least the run's allocation and, for this kernel, equal to it."""
    host = SandboxHost()
    plan = host.prepare(SOURCE, Policy.builder().with_limits(max_wall_time_ms=60_000).build())
    report = prove_plan(plan)
    budget = report.function("main").budget("allocatedBytes")
    assert budget is not None and budget.verdict is Verdict.PROVED
    for args in ([["ab", "c"], [["k", 1]]], [[], []], [["\U0001d11e" * 50] * 3, [["x" * 70, 2], ["y", 3]]]):
        result = host.execute(plan, "main", args, encoding="json")
        assert result.ok
        bound = report.bound_at("main", "allocatedBytes", _decoded(plan, args))
        assert bound == result.usage.allocated_bytes


def _decoded(plan: ExecutionPlan, args: list[Any]) -> list[Value]:
    types = plan.functions["main"].parameter_types
    return [decode_typed(a, to_type_ref(t), literals) for a, t in zip(args, types, strict=True)]
