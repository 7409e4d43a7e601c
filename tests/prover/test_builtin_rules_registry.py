"""The prover has a rule for every built-in record, or the record says it is opaque.

Every built-in names its prover rule by key (``Builtin.prover``, several built-ins share one): a
record whose key has no rule, or a rule no record uses, is a catalogue drift this test names. An
opaque built-in must still be sound: the prover gives up on every bound the call is part of.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dotboxd.core.builtins import BUILTINS, PROVER_OPAQUE
from dotboxd.host import Policy, SandboxHost
from dotboxd.validator.prover import builtin_rules, prove_plan


def test_every_record_has_a_prover_rule_or_is_opaque() -> None:
    missing = {name: b.prover for name, b in BUILTINS.items() if b.prover not in builtin_rules.RULES}
    assert missing == {}


def test_every_prover_rule_is_used_by_a_record() -> None:
    used = {b.prover for b in BUILTINS.values()} | {PROVER_OPAQUE}
    assert set(builtin_rules.RULES) - used == set()


def _fuel_bound(body: str, values: list[Any]) -> int | None:
    source = f'module "t" version "1.0.0";\nentrypoint fn main(s String) -> I32 {{\n{body}\n}}\n'
    host = SandboxHost()
    plan = host.prepare(source, Policy.builder().with_limits(max_wall_time_ms=60_000).build())
    bound: int | None = prove_plan(plan).bound_at("main", "fuel", values)
    return bound


def test_an_opaque_builtin_leaves_the_fuel_unbounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Soundness of the opaque marker: with ``string.indexOf`` declared opaque, the prover no longer
    bounds a kernel that calls it (its charges are unknown), where its own rule bounds it exactly."""
    body = 'return string.indexOf(s, "c");'
    assert _fuel_bound(body, ["abc"]) is not None
    opaque = dict(BUILTINS)
    opaque["string.indexOf"] = dataclasses.replace(BUILTINS["string.indexOf"], prover=PROVER_OPAQUE)
    monkeypatch.setattr(builtin_rules, "BUILTINS", opaque)
    assert _fuel_bound(body, ["abc"]) is None
