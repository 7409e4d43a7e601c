"""The generator's quality bar: generated modules pass the validator (>= 95%), and validation of any
generated module - against its own policy or a stricter default one - fails only with DotBoxDError."""

from __future__ import annotations

from collections import Counter

from hypothesis import given

from dotboxd.conformance.generator import GeneratedProgram, modules
from dotboxd.core.bindings import load_binding_manifest
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.wire import dumps_wire, import_module
from dotboxd.validator.api import validate
from dotboxd.validator.policy import Policy

from .conftest import SAMPLE_SIZE, Validated


def test_at_least_95_percent_of_a_fixed_seed_sample_validate(validated_sample: list[Validated]) -> None:
    assert len(validated_sample) == SAMPLE_SIZE
    valid = sum(1 for v in validated_sample if v.plan is not None)
    codes = Counter(v.error.code for v in validated_sample if v.error is not None)
    assert valid / SAMPLE_SIZE >= 0.95, f"only {valid}/{SAMPLE_SIZE} validate; rejections: {dict(codes)}"


def _validate_or_diagnose(program: GeneratedProgram, policy: Policy) -> None:
    try:
        validate(program.module, policy, load_binding_manifest(program.bindings_json))
    except DotBoxDError as refused:
        assert refused.diagnostics, "a DotBoxDError must carry at least one diagnostic"


@given(modules())
def test_validation_raises_nothing_but_dotboxd_error(program: GeneratedProgram) -> None:
    # Against the program's own policy (normally accepted) and the default policy (which declares no
    # brands and grants nothing, so modules using either are refused): any other exception escapes.
    _validate_or_diagnose(program, Policy.from_json(program.policy_json))
    _validate_or_diagnose(program, Policy.default())


@given(modules())
def test_generated_modules_survive_the_wire_round_trip(program: GeneratedProgram) -> None:
    assert import_module(dumps_wire(program.module)) == program.module
