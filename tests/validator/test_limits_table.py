"""The one limits table (``dotboxd.core.limits``) against everything that used to spell limits on
its own: the policy schema, the spec's limits table, the code registry, the meter and the policy
reader. A limit added to the table and forgotten in one of them fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from dotboxd.core.codes import all_codes
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.limits import LIMIT_CEILING, LIMITS, Limits
from dotboxd.runtime.meter import STATE_COUNTERS, Meter, MeterLimits
from dotboxd.validator.policy import Policy
from dotboxd.validator.prover.budgets import LIMIT_NAMES

REPO = Path(__file__).resolve().parents[2]


def test_policy_schema_declares_every_limit_with_its_null_rule() -> None:
    schema = json.loads((REPO / "spec/schema/policy.schema.json").read_text("utf-8"))
    declared = schema["properties"]["limits"]["properties"]
    assert set(declared) == {spec.json_name for spec in LIMITS}
    for spec in LIMITS:
        kinds = declared[spec.json_name]["type"]
        assert kinds == (["integer", "null"] if spec.null_is_default else "integer"), spec.json_name


def test_case_schema_accepts_null_exactly_for_the_limits_that_take_it() -> None:
    schema = json.loads((REPO / "spec/schema/conformance-case.schema.json").read_text("utf-8"))
    limits = schema["$defs"]["casePolicy"]["properties"]["limits"]
    nullable = {name for name, rule in limits.get("properties", {}).items() if "null" in rule["type"]}
    assert nullable == {spec.json_name for spec in LIMITS if spec.null_is_default}


def _spec_rows() -> dict[str, list[str]]:
    text = (REPO / "spec/validation.md").read_text("utf-8")
    section = text[text.index("**Limits**") : text.index("**JSON form**")]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `(max\w+)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


def _number(text: str) -> int:
    powers = {"2^63-1": LIMIT_CEILING, "2^31-1": 2**31 - 1}
    return powers.get(text) or int(text.replace(",", ""))


def test_the_spec_limits_table_is_the_code_table() -> None:
    rows = _spec_rows()
    assert list(rows) == [spec.json_name for spec in LIMITS]
    for spec in LIMITS:
        default, ceiling, unit, code, _note = rows[spec.json_name]
        assert (_number(default), _number(ceiling), unit, code) == (
            spec.default,
            spec.ceiling,
            spec.unit,
            f"`{spec.quota_code}`",
        ), spec.json_name


def test_every_limit_stops_a_run_with_a_registered_quota_or_timeout_code() -> None:
    codes = all_codes()
    for spec in LIMITS:
        assert spec.quota_code in codes, spec.quota_code
        assert codes[spec.quota_code].category.value in ("QuotaExceeded", "Timeout"), spec.quota_code


def test_every_counted_limit_bounds_a_meter_counter_that_travels_with_the_state() -> None:
    meter = Meter(MeterLimits())
    for spec in LIMITS:
        if spec.counter is not None:
            assert spec.counter in STATE_COUNTERS and isinstance(getattr(meter, spec.counter), int)


def test_the_prover_names_its_limits_by_the_table() -> None:
    assert set(LIMIT_NAMES.values()) <= {spec.json_name for spec in LIMITS}


def test_meter_limits_copy_every_limit_and_refuse_a_record_missing_one() -> None:
    """Threat: the meter quietly enforcing a default where the policy set a limit (it used to copy
    limits by attribute name and keep its own default for any it did not find)."""
    values = {spec.name: spec.default + 1 for spec in LIMITS}
    copied = MeterLimits.from_object(Limits(**values))
    assert {spec.name: getattr(copied, spec.name) for spec in LIMITS} == values
    missing = SimpleNamespace(**{k: v for k, v in values.items() if k != "max_commands"})
    with pytest.raises(AttributeError):
        MeterLimits.from_object(missing)


@pytest.mark.parametrize("spec", LIMITS, ids=lambda spec: spec.json_name)
def test_each_limit_is_read_checked_and_written_by_the_policy_json(spec: object) -> None:
    from dotboxd.core.limits import LimitSpec

    assert isinstance(spec, LimitSpec)
    policy = Policy.from_json({"limits": {spec.json_name: 7}})
    assert getattr(policy.limits, spec.name) == 7 and policy.to_json()["limits"][spec.json_name] == 7
    for bad, code in ((-1, "E-POLICY-LIMIT"), (spec.ceiling + 1, "E-POLICY-LIMIT"), ("7", "E-POLICY-SCHEMA")):
        with pytest.raises(DotBoxDError) as info:
            Policy.from_json({"limits": {spec.json_name: bad}})
        diagnostic = info.value.diagnostics[0]
        assert (diagnostic.code, diagnostic.pointer) == (code, f"/limits/{spec.json_name}")
