"""Each built-in is one record, and the record is complete: cost, rule, codes, spec entries.

The engines' own tests check that they resolve every record (``tests/runtime/test_builtin_registry.py``,
``tests/optimized/test_builtin_forms.py``, ``tests/prover/test_builtin_rules_registry.py``) and the
conformance coverage test that the corpus runs each one; this file checks the record itself and
that the spec describes it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dotboxd.core import costs
from dotboxd.core.builtins import BUILTINS, SHARED_RULES, BuiltinKind
from dotboxd.core.codes import all_codes

SPEC = Path(__file__).resolve().parents[2] / "spec"


def _spec(name: str) -> str:
    return (SPEC / name).read_text(encoding="utf-8")


def _named_in(text: str) -> set[str]:
    return set(re.findall(r"`([a-z0-9]+\.[A-Za-z0-9]+)", text))


def test_every_pure_function_has_a_cost_and_only_collections_lack_one() -> None:
    for name, b in BUILTINS.items():
        if b.kind is BuiltinKind.PURE_FUNCTION:
            assert b.cost is not None and b.arity is not None, name
        assert (b.cost is None) == (name in costs.COLLECTION_INTRINSICS), name
    assert dict(costs.BUILTIN_COSTS) == {n: b.cost for n, b in BUILTINS.items() if b.cost is not None}


def test_failure_codes_are_registered_runtime_codes() -> None:
    registered = set(all_codes())
    for name, b in BUILTINS.items():
        for code in b.codes:
            assert code.startswith("R-") and code in registered, (name, code)


def test_only_records_with_codes_or_charges_that_can_fail_are_kept_in_order() -> None:
    """The and/or reordering rule reads ``can_fail`` from the record alone."""
    for name, b in BUILTINS.items():
        assert b.can_fail == bool(b.codes or b.counts_as_host_call or b.allocates), name


def test_shared_rules_carry_their_semantics() -> None:
    for name, b in BUILTINS.items():
        if b.rule in SHARED_RULES:
            assert b.semantics is not None and b.arity is not None, name


@pytest.mark.parametrize("document", ["validation.md", "semantics.md", "costs.md"])
def test_every_builtin_is_described_in_the_spec(document: str) -> None:
    missing = set(BUILTINS) - _named_in(_spec(document))
    assert missing == set(), f"spec/{document} does not name {sorted(missing)}"
