"""A fixed, seeded sample of generated programs shared by the generator tests (drawn once)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dotboxd.conformance.generator import GeneratedProgram, build_program
from dotboxd.conformance.generator.cases import plan_program, program_source
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.validator.plan import ExecutionPlan

SAMPLE_SIZE = 300
SAMPLE_SEED = 20_240_501


@dataclass(frozen=True)
class Validated:
    program: GeneratedProgram
    plan: ExecutionPlan | None
    error: DotBoxDError | None


def validate_program(program: GeneratedProgram) -> Validated:
    try:
        plan = plan_program(program)
    except DotBoxDError as refused:
        return Validated(program, None, refused)
    return Validated(program, plan, None)


@pytest.fixture(scope="session")
def validated_sample() -> list[Validated]:
    return [validate_program(build_program(program_source(SAMPLE_SEED, i))) for i in range(SAMPLE_SIZE)]
