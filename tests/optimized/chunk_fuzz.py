"""Running ``chunk_programs`` kernels on both backends under many fuel budgets and tight limits.

Why sweeps rather than one run: the fast forms are chosen per chunk from the meter (a chunk runs
pre-checked only when its worst case fits), so one kernel takes different code paths under
different budgets; a disagreement typically hides at the budget where a chunk stops fitting, at
the exact charge that exhausts, or at a limit reached part way through a chunk. Each kernel's
vectors first run under limits no run reaches (``ROOM``), which gives what the run needs; then
the fuel budget and each limit are set around that need (just below, at, above, and sampled
below) and every observable is compared (``differential.observe``).

``python -m tests.optimized.chunk_fuzz --seeds 0:500`` runs seeded kernels (the long local run);
a disagreement prints the kernel, the vector and the policy that reproduce it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from dotboxd.host import SandboxHost
from dotboxd.runtime.optimized import compile_plan
from dotboxd.runtime.optimized.codegen import GenOptions
from dotboxd.runtime.optimized.small_fuel import SMALL_INT_MAX
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.policy import Policy

from .block_programs import build_block_kernel
from .cadence_fuzz import CadenceFault, sweep_cadence
from .chunk_programs import Chooser, Kernel, RandomChooser, build_kernel
from .differential import Observation, backend, differences, observe
from .edge_programs import build_edge_kernel
from .kernels import prepare
from .value_programs import build_value_kernel

ROOM = {
    "max_fuel": 10**12,
    "max_allocated_bytes": 10**12,
    "max_total_collection_elements": 10**12,
    "max_loop_iterations": 200_000,
    "max_list_length": 10**7,
    "max_map_entries": 10**7,
    "max_string_length": 10**7,
    "max_total_string_bytes": 10**12,
    "max_host_calls": 10**7,
}
"""Limits no kernel reaches: the swept limit is the only one that refuses."""

BRAND = "Tag"
"""The opaque-id type the generated kernels may key maps by (``edge_programs``)."""


def fuzz_policy(**limits: int) -> Policy:
    """A policy with ``limits`` (a wall-time budget no run reaches) that declares ``BRAND``."""
    return (
        Policy.builder()
        .with_limits(**{"max_wall_time_ms": 60_000, **limits})
        .declare_opaque_id_type(BRAND)
        .build()
    )


COUNTED = {
    "max_fuel": "fuelUsed",
    "max_loop_iterations": "loopIterations",
    "max_total_collection_elements": "collectionElements",
    "max_allocated_bytes": "allocatedBytes",
    "max_total_string_bytes": "stringBytes",
    "max_host_calls": "hostCalls",
}
"""Limits whose counter the usage reports: swept around what the unlimited run used."""

CALL_DEPTHS = (2, 3, 4, 5, 6, 7, 8)
"""``maxCallDepth`` values around what the generated call chains need (no usage counter reports it)."""

SIZED = ("max_list_length", "max_map_entries", "max_string_length")
"""Limits on one value's size (no usage counter): swept over small sizes and the loop's length."""


@dataclass
class Tally:
    """What a sweep ran and saw (for the report and the long run's summary)."""

    kernels: int = 0
    runs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    blocks: Counter[str] = field(default_factory=Counter)
    forms: Counter[str] = field(default_factory=Counter)


FORMS = {
    "owned list": "_s_lown(",
    "owned map": "_s_mown(",
    "owned text-keyed map": "_s_mtown(",
    "owned text": "_s_sown(",
    "pre-checked map chunk": "_p_mcfit(",
    "fast text chunk": "_s_strfits(",
    "fast list chunk": "_p_lcadds(",
    "list-read view": "_p_lbuf(",
    "iteration block": "_s_bkit(",
}
"""The fast forms, by a stub only that form's generated code calls."""


def forms_of(plan: ExecutionPlan, options: GenOptions | None = None) -> set[str]:
    """Which fast forms the optimized backend generated for ``plan`` (so a run says what it hit)."""
    source = compile_plan(plan, options, keep_module=True).source()
    return {name for name, marker in FORMS.items() if marker in source}


class Disagreement(AssertionError):
    """Both backends ran the same kernel, vector and policy and something observable differed."""


def _values(c: Chooser, used: int, samples: int) -> list[int]:
    """Limits around ``used``: just below, at and past it, and ``samples`` sampled below."""
    values = {max(0, used - 1), used, used + 1}
    for _ in range(samples):
        values.add(max(0, used - c.choice((2, 3, 5, 17, 64, 1000, used // 2, used // 3 + 1))))
    return sorted(values)


def settings_for(
    c: Chooser, vector: list[int], usage: dict[str, int], samples: int
) -> Iterator[dict[str, int]]:
    """The policies (as limit overrides of ``ROOM``) one vector runs under."""
    for limit, counter in COUNTED.items():
        if limit != "max_fuel" and usage[counter] == 0:
            continue
        for value in _values(c, usage[counter], samples if limit == "max_fuel" else max(1, samples // 3)):
            yield {limit: value}
    for limit in SIZED:
        n = max(0, vector[0])
        for _ in range(max(1, samples // 3)):
            yield {limit: max(0, c.choice((0, 1, 2, 3, 16, n // 2, n - 1, n, n + 1, n + 3)))}
    if c.chance(50):
        yield {"max_fuel": c.choice((100_000, 20_000, 5_000))}  # the default-sized budgets
    # just past the largest small fuel start (``small_fuel``: a budget of 256 or less starts as is)
    yield {"max_fuel": c.choice((SMALL_INT_MAX + 1, usage["fuelUsed"] + SMALL_INT_MAX))}
    for depth in sorted({0, 1, c.choice(CALL_DEPTHS), c.choice(CALL_DEPTHS)}):
        yield {"max_call_depth": depth}


def compare(host: SandboxHost, plan: ExecutionPlan, args: list[int], what: str) -> Observation:
    """Run ``main(*args)`` on the reference and three times on the optimized backend: the first run
    compiles, the second binds the host's fast lane and the third takes the lane's own entry
    (``fastlane``: a lazily built run state, pending counters, small fuel starts), so each path an
    optimized run can take is held to the reference."""
    reference = observe(host.execute(plan, "main", list(args)))
    for attempt in ("compiling", "binding the lane", "on the lane"):
        optimized = observe(host.execute(plan, "main", list(args), backend="optimized"))
        diff = differences(reference, optimized)
        if diff:
            raise Disagreement(f"{what}\noptimized run: {attempt}\n  " + "\n  ".join(diff))
    return reference


def sweep_kernel(
    kernel: Kernel,
    c: Chooser,
    samples: int,
    tally: Tally | None = None,
    cadence: bool = False,
    options: GenOptions | None = None,
) -> Tally:
    """Every vector of ``kernel`` unlimited, then under each policy of ``settings_for`` (and, with
    ``cadence``, under fake clocks and cancel tokens turning at sampled reads, ``cadence_fuzz``);
    ``options``: the optimized backend's generation options (default ``GenOptions()``)."""
    tally = tally if tally is not None else Tally()
    base = prepare(kernel.text, fuzz_policy(**ROOM))
    host = SandboxHost(backends={"optimized": backend(options)})
    tally.kernels += 1
    tally.blocks.update(kernel.blocks)
    for vector in kernel.vectors:
        context = f"kernel:\n{kernel.text}\nvector: {vector}"
        first = compare(host, base, vector, f"{context}\npolicy: ROOM")
        tally.runs += 1
        tally.outcomes[first["error"][1] if first["error"] else "ok"] += 1
        usage = first["usage"]
        for limits in settings_for(c, vector, usage, samples):
            plan = dataclasses.replace(base, policy=fuzz_policy(**{**ROOM, **limits}))
            seen = compare(host, plan, vector, f"{context}\npolicy: ROOM + {limits}")
            tally.runs += 1
            tally.outcomes[seen["error"][1] if seen["error"] else "ok"] += 1
        if cadence:
            tally.runs += sweep_cadence(host, base, vector, c, context, tally.outcomes)
    tally.forms.update(
        forms_of(base, options)
    )  # after the runs: a module the verifier refuses is a disagreement there
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="0:50", help="a range start:stop of kernel seeds")
    parser.add_argument("--samples", type=int, default=6, help="sampled budgets per limit")
    parser.add_argument("--edge", action="store_true", help="kernels of edge_programs instead")
    parser.add_argument("--values", action="store_true", help="kernels of value_programs instead")
    parser.add_argument("--cadence", action="store_true", help="also fake clocks and cancel tokens")
    parser.add_argument(
        "--blocks", action="store_true", help="block-shaped kernels (block_programs), blocks on"
    )
    options = parser.parse_args(argv)
    generation = GenOptions(block_loops=True) if options.blocks else None
    start, stop = (int(part) for part in options.seeds.split(":"))
    tally = Tally()
    failures = 0
    began = time.process_time()
    for seed in range(start, stop):
        chooser = RandomChooser(seed)
        if options.blocks:
            build = build_block_kernel
        elif options.values:
            build = build_value_kernel
        else:
            build = build_edge_kernel if options.edge else build_kernel
        kernel = build(chooser)
        try:
            sweep_kernel(kernel, chooser, options.samples, tally, options.cadence, generation)
        except (Disagreement, CadenceFault) as error:
            failures += 1
            print(f"== seed {seed}: DISAGREEMENT\n{error}\n", flush=True)
        except Exception as error:  # a kernel the generator got wrong is its bug, not a finding
            failures += 1
            print(f"== seed {seed}: {type(error).__name__}: {error}\n{kernel.text}", flush=True)
    print(
        f"kernels {tally.kernels}, runs per backend {tally.runs}, failures {failures}, "
        f"cpu {time.process_time() - began:.1f}s\noutcomes {dict(tally.outcomes.most_common())}\n"
        f"blocks {dict(tally.blocks.most_common())}\nforms {dict(tally.forms.most_common())}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
