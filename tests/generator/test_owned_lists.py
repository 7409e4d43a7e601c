"""The generator draws the owned-list shape, and the optimized backend takes the owned path on it.

Before ``generator.owned`` existed no program of the 300-program sample built a list the optimized
backend could append to in place, so the differential tests (``tests/optimized``,
``tests/runtime/test_generated_programs.py``) never ran that path. This counts, over the shared
sample, the programs whose compiled entrypoint takes an owned list's buffer (``_s_lown``): at least
one must (about 15% carry the block), and every program carrying the block must take the path (a
block the ownership proof refuses would test the exact stubs only).
"""

from __future__ import annotations

from dotboxd.runtime.optimized import compile_plan

from .conftest import Validated


def _owned_path(v: Validated) -> bool:
    assert v.plan is not None
    return "_s_lown(" in compile_plan(v.plan, keep_module=True).source()


def test_some_generated_programs_take_the_owned_list_path(validated_sample: list[Validated]) -> None:
    carrying = [v for v in validated_sample if "owned-list" in v.program.tags]
    assert all(v.plan is not None for v in carrying), [v.error for v in carrying if v.error is not None]
    owned = [v for v in carrying if _owned_path(v)]
    assert len(owned) > 0, f"no owned-list program in {len(validated_sample)} draws"
    assert len(owned) == len(carrying), "a program with the owned-list block that the backend does not own"
