"""Differential runs of the value kinds the fast-form fuzz did not make (issue 16): F64 arithmetic
and the F64 math built-ins at their edges, records (nested, in lists and maps, compared) and maps
keyed by SandboxPath, SandboxUri and I64 - each kernel returning ``Record<I32, F64>`` so the sign
of a zero and every bit of a double show (``value_programs``) - under fuel budgets and every limit
around what they need, with the cadence fakes (``chunk_fuzz.sweep_kernel``).

The quick test runs a few derandomized kernels; the slow one (``tests/slow_tests.txt``) runs 150.
``python -m tests.optimized.chunk_fuzz --values --cadence --seeds 0:1000`` is the long local run.
"""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotboxd.host import SandboxHost

from .chunk_fuzz import ROOM, compare, fuzz_policy, sweep_kernel
from .chunk_programs import DrawChooser, RandomChooser
from .differential import backend
from .kernels import prepare
from .value_programs import build_value_kernel


def _fuzz_settings(examples: int) -> settings:
    """Derandomized (a failure reproduces on every machine), no per-example deadline."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _sweep(data: st.DataObject, samples: int) -> None:
    chooser = DrawChooser(data.draw)
    sweep_kernel(build_value_kernel(chooser), chooser, samples=samples, cadence=True)


@_fuzz_settings(6)
@given(st.data())
def test_value_kernels_agree_under_swept_budgets_clocks_and_cancels(data: st.DataObject) -> None:
    _sweep(data, samples=1)


@_fuzz_settings(150)
@given(st.data())
def test_value_kernels_agree_under_swept_budgets_clocks_and_cancels_long(data: st.DataObject) -> None:
    _sweep(data, samples=3)


def test_the_value_generator_holds_every_block_and_every_key_kind() -> None:
    """Seeded kernels hold every block and key kind (else the sweeps above miss what they are for),
    and each validates."""
    blocks: Counter[str] = Counter()
    for seed in range(30):
        kernel = build_value_kernel(RandomChooser(seed))
        prepare(kernel.text, fuzz_policy())
        blocks.update(kernel.blocks)
    wanted = ("f64/loop", "f64/edge", "record", "keyed/SandboxPath", "keyed/SandboxUri", "keyed/I64")
    assert all(blocks[name] >= 2 for name in wanted), blocks


def test_value_kernels_reach_non_finite_results_and_computed_negative_zeros() -> None:
    """Seeded kernels, each agreeing on both backends, fault with ``R-ARITH-NOT-FINITE`` in some runs
    and return a computed ``-0.0`` (``fkeep`` starts at 0.5) in others - the edges the generator is
    for (a generator that never got there would agree trivially)."""
    outcomes: Counter[str] = Counter()
    host = SandboxHost(backends={"optimized": backend()})
    for seed in range(30):
        kernel = build_value_kernel(RandomChooser(seed))
        plan = prepare(kernel.text, fuzz_policy(**ROOM))
        for vector in kernel.vectors:
            seen = compare(host, plan, vector, f"kernel:\n{kernel.text}\nvector: {vector}")
            if seen["error"] is not None:
                outcomes[seen["error"][1]] += 1
            elif json.dumps(seen["value"]).endswith("-0.0]"):
                outcomes["-0.0"] += 1
    assert outcomes["R-ARITH-NOT-FINITE"] >= 2 and outcomes["-0.0"] >= 4, outcomes
