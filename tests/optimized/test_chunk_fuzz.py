"""Adversarial differential runs of the fast forms (issue 16): kernels from ``chunk_programs``
(owned lists, maps and texts with aliasing, early exits, nesting, edge values), each under fuel
budgets and tight limits around what it needs (``chunk_fuzz.sweep_kernel``), on both backends.

The quick test runs a few derandomized kernels with one sampled budget per limit (a few seconds);
the slow one (``tests/slow_tests.txt``) runs 150 kernels with four. A failure shrinks to a small
kernel and prints it with the vector and policy that disagree. ``python -m
tests.optimized.chunk_fuzz --seeds 0:1000`` is the long local run.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .block_programs import build_block_kernel
from .chunk_fuzz import forms_of, sweep_kernel
from .chunk_programs import DrawChooser, RandomChooser, build_kernel
from .kernels import policy, prepare

_SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=6, **_SETTINGS)  # type: ignore[arg-type]
@given(st.data())
def test_generated_chunk_kernels_agree_under_swept_budgets(data: st.DataObject) -> None:
    chooser = DrawChooser(data.draw)
    sweep_kernel(build_kernel(chooser), chooser, samples=1)


@settings(max_examples=150, **_SETTINGS)  # type: ignore[arg-type]
@given(st.data())
def test_generated_chunk_kernels_agree_under_swept_budgets_long(data: st.DataObject) -> None:
    chooser = DrawChooser(data.draw)
    sweep_kernel(build_kernel(chooser), chooser, samples=4)


def test_the_generator_reaches_every_fast_form() -> None:
    """Seeded kernels hit each fast form (else the sweeps above would test only the checked paths):
    counted over the generated source of 100 kernels, all of which validate."""
    forms: Counter[str] = Counter()
    for seed in range(100):
        forms.update(forms_of(prepare(build_kernel(RandomChooser(seed)).text, policy())))
    wanted = (
        "owned list",
        "owned map",
        "owned text",
        "pre-checked map chunk",
        "fast text chunk",
        "fast list chunk",
    )
    assert all(forms[name] >= 2 for name in wanted), forms


@settings(max_examples=8, **_SETTINGS)  # type: ignore[arg-type]
@given(st.data())
def test_block_kernels_agree_under_swept_budgets_clocks_and_cancels(data: st.DataObject) -> None:
    """Block-shaped kernels (``block_programs``: iteration blocks, spec/optimized.md 4.2.8) under
    swept budgets, and with fake clocks and cancel tokens turning at sampled reads."""
    chooser = DrawChooser(data.draw)
    tally = sweep_kernel(build_block_kernel(chooser), chooser, samples=2, cadence=True)
    assert tally.forms["iteration block"] == 1, tally.forms


@settings(max_examples=120, **_SETTINGS)  # type: ignore[arg-type]
@given(st.data())
def test_block_kernels_agree_under_swept_budgets_clocks_and_cancels_long(data: st.DataObject) -> None:
    chooser = DrawChooser(data.draw)
    tally = sweep_kernel(build_block_kernel(chooser), chooser, samples=6, cadence=True)
    assert tally.forms["iteration block"] == 1, tally.forms
