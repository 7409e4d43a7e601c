"""Hypothesis strategies over generated programs (shrinkable: every choice goes through a draw).

``modules()`` draws one ``GeneratedProgram`` (module, policy, fixtures, entrypoint, one input
vector); ``programs_with_inputs()`` draws a program with several input vectors for its entrypoint.
Both use exactly the generator ``generate_cases`` uses, with Hypothesis as the source of choices, so
a property that fails shrinks towards option 0 of every choice (fewer statements, literals, no
bindings). Importing this module needs Hypothesis; nothing else in the package does.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .program import GeneratedProgram, ProgramWithInputs, build_program, draw_inputs
from .source import DrawSource


def _source(draw: st.DrawFn) -> DrawSource:
    return DrawSource(lambda lo, hi: draw(st.integers(lo, hi)))


@st.composite
def _programs(draw: st.DrawFn) -> GeneratedProgram:
    return build_program(_source(draw))


@st.composite
def _programs_with_inputs(draw: st.DrawFn, max_extra: int) -> ProgramWithInputs:
    src = _source(draw)
    program = build_program(src)
    return ProgramWithInputs(
        program, (program.args_json, *draw_inputs(src, program, src.integer(0, max_extra)))
    )


def modules() -> st.SearchStrategy[GeneratedProgram]:
    """Well-typed, well-scoped programs with their policy, fixture bindings and one input."""
    return _programs()


def programs_with_inputs(max_extra: int = 3) -> st.SearchStrategy[ProgramWithInputs]:
    """A program and 1 + up to ``max_extra`` input vectors for its entrypoint (its own first)."""
    return _programs_with_inputs(max_extra)
