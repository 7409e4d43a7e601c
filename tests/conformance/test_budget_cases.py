"""Every budget case sits exactly where it claims: at the limit, or exactly one unit over it.

The expansion is measured by the budget definitions of spec/ir.md (``docmetrics``), independently of
the importer, so the corpus cannot drift into testing N-1 or N+2 without a test failing.
"""

from __future__ import annotations

import pytest

from dotboxd.conformance.docmetrics import LIMITS, measure
from dotboxd.conformance.loader import CORPUS_ROOT, load_cases
from dotboxd.conformance.model import Case
from dotboxd.conformance.sources import module_source

CASES = [
    case
    for case in load_cases([CORPUS_ROOT / "import"])
    if "budget" in case.tags and ({"at-limit", "over-limit"} & set(case.tags))
]


def budget_of(case: Case) -> str:
    (metric,) = [tag.removeprefix("budget-") for tag in case.tags if tag.startswith("budget-")]
    return metric


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_budget_case_is_exactly_at_or_one_over_its_limit(case: Case) -> None:
    source = module_source(case.raw, case.source_key)
    text = source.data if isinstance(source.data, str) else source.data.decode("utf-8")
    metrics = measure(text)
    metric = budget_of(case)
    over = "over-limit" in case.tags
    assert metrics[metric] == LIMITS[metric] + (1 if over else 0)
    others = {name: value for name, value in metrics.items() if name != metric and value > LIMITS[name]}
    assert others == {}, "only the budget under test may be exceeded"
    if over:
        assert (case.expect.outcome, case.expect.diagnostic) == ("rejected", "E-JSON-LIMIT")


@pytest.mark.parametrize("metric", sorted(LIMITS))
def test_every_budget_is_tested_at_n_and_n_plus_one(metric: str) -> None:
    kinds = {tag for case in CASES if budget_of(case) == metric for tag in case.tags}
    assert {"at-limit", "over-limit"} <= kinds
    accepted = [case for case in CASES if budget_of(case) == metric and "at-limit" in case.tags]
    assert any(case.expect.outcome == "ok" for case in accepted)
