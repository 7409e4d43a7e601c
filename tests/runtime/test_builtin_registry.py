"""The reference implementation of every built-in comes from its record.

``runtime.intrinsics.RULES`` holds one factory per implementation rule: the shared rules, built from
a record's semantics function and cost alone, and one bespoke implementation per built-in whose rule
is its own name. Every record must resolve, and nothing may be registered that no record names.
"""

from __future__ import annotations

from dotboxd.core.builtins import BUILTINS, SHARED_RULES, Builtin
from dotboxd.core.values import ListValue
from dotboxd.runtime import intrinsics
from dotboxd.runtime.meter import Meter, MeterLimits


def test_every_record_resolves_to_a_reference_implementation() -> None:
    missing = {name: b.rule for name, b in BUILTINS.items() if b.rule not in intrinsics.RULES}
    assert missing == {}
    assert set(intrinsics.INTRINSICS) == set(BUILTINS)


def test_every_registered_rule_is_named_by_a_record() -> None:
    assert set(intrinsics.RULES) - {b.rule for b in BUILTINS.values()} == set()


def test_a_rule_is_shared_or_the_builtins_own_name() -> None:
    for name, b in BUILTINS.items():
        assert b.rule in SHARED_RULES or b.rule == name, name
        if b.rule in SHARED_RULES:
            assert b.semantics is not None and b.cost is not None and b.arity is not None, name


def _samples(b: Builtin) -> tuple[object, ...]:
    by_type = {"I32": 7, "I64": 7, "F64": 2.25, "String": "ab😀b", "List<String>": ListValue(("x",))}
    params = b.signature.split(")")[0].lstrip("(")
    return tuple(by_type[p.strip()] for p in params.split(","))


def test_a_shared_rule_returns_what_the_records_semantics_returns() -> None:
    """The implementation built from a record computes exactly the record's operation (charges are
    pinned by the conformance corpus and ``tests/prover/test_cost_semantics.py``)."""
    for name, b in BUILTINS.items():
        if b.rule not in SHARED_RULES or b.kind.value != "pure-function":
            continue
        args = _samples(b)
        assert b.semantics is not None
        meter = Meter(MeterLimits(max_wall_time_ms=60_000))
        assert intrinsics.INTRINSICS[name](meter, args) == b.semantics(*args), name  # type: ignore[arg-type]
        assert meter.host_calls == 1 and meter.fuel_used > 0, name
