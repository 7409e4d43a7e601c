"""The type-directed program generator (issue 5 item 3): random kernels that validate by construction.

Programs are drawn from a *typing context*, not from the grammar: the generator knows the locals in
scope and their types, the functions already defined and their signatures, the fixture bindings, the
declared opaque-id brands, the enclosing loops and a size budget, and only ever draws an expression
of the type it needs, a name that is in scope, a call to a function defined earlier (so the call
graph is acyclic) or a ``break`` inside a loop. ``spec/generator.md`` describes the design.

Public API:

* ``generate_cases(count, seed) -> list[dict]``: run cases in the shared case format whose ``expect``
  comes from the reference interpreter (deterministic per ``seed``); ``write_cases(out_dir, count,
  seed) -> Path`` writes them as one case file;
* ``modules()`` (Hypothesis strategy of ``GeneratedProgram``) and ``programs_with_inputs()``
  (``ProgramWithInputs``); these import Hypothesis lazily, so the CLI does not need it;
* ``build_program(src)`` with a ``RandomSource`` for seeded, Hypothesis-free drawing, and
  ``run_reference(program)`` to run one program the way the conformance runner does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cases import ReferenceOutcome, generate_cases, run_reference, write_cases
from .program import GeneratedProgram, ProgramWithInputs, build_program, draw_inputs
from .source import RandomSource, Source

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


def modules() -> SearchStrategy[GeneratedProgram]:
    """Hypothesis strategy: one generated program with its policy, fixtures and one input vector."""
    from .strategies import modules as strategy

    return strategy()


def programs_with_inputs(max_extra: int = 3) -> SearchStrategy[ProgramWithInputs]:
    """Hypothesis strategy: a generated program and 1 + up to ``max_extra`` input vectors."""
    from .strategies import programs_with_inputs as strategy

    return strategy(max_extra)


__all__ = [
    "GeneratedProgram",
    "ProgramWithInputs",
    "RandomSource",
    "ReferenceOutcome",
    "Source",
    "build_program",
    "draw_inputs",
    "generate_cases",
    "modules",
    "programs_with_inputs",
    "run_reference",
    "write_cases",
]
