"""Soundness of every verdict, checked against the reference interpreter on generated programs.

Two generators: the conformance suite's type-directed generator (the whole language: every type,
built-in, binding fixture and statement shape) and the prover's loop-heavy generator (loops over
parameters, counter ``while`` loops, small limits, ``inputBounds``), so that PROVED, REFUTED and
UNKNOWN all occur often. ``harness.check_program`` lists every claim a run contradicts.
"""

from __future__ import annotations

from hypothesis import assume, given

from dotboxd.conformance.generator import ProgramWithInputs, programs_with_inputs
from dotboxd.grammar.text import parse_text

from .harness import check_program, prepare
from .loopgen import Kernel, kernels


@given(programs_with_inputs(max_extra=3))
def test_generated_programs_never_contradict_the_prover(pw: ProgramWithInputs) -> None:
    program = pw.program
    prepared = prepare(program.module, program.policy_json, program.bindings_json, program.entry)
    assume(prepared is not None)  # a generated program the validator refuses has nothing to prove
    assert prepared is not None
    findings = check_program(prepared, pw.inputs)
    assert findings.violations == []


@given(kernels())
def test_loop_kernels_never_contradict_the_prover(kernel: Kernel) -> None:
    prepared = prepare(parse_text(kernel.source), kernel.policy, [], "main")
    assert prepared is not None, kernel.source  # loopgen programs are valid by construction
    findings = check_program(prepared, [list(i) for i in kernel.inputs])
    assert findings.violations == []
