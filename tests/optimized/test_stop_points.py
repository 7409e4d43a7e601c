"""Deadline and cancellation stops of the optimized backend held to the reference exactly (issue 16):
each stop at the k-th clock or token read - every k of a short run, around the first and last and
sampled ones of a longer one - is a point between two operations where the reference checks too,
reached in run order, and reports what the reference stopped there reports (``stop_points``).

The quick tests run a few seeded kernels of each generator and a Collatz walk whose clock reads are
chunk reservations; the slow ones (``tests/slow_tests.txt``) run 40 more seeds of each generator and
longer loops.
``python -m tests.optimized.stop_points --seeds 0:400`` is the long local run.
"""

from __future__ import annotations

from collections import Counter

from dotboxd.host import SandboxHost
from tests.benchmarks.workloads import COLLATZ

from .chunk_fuzz import ROOM, fuzz_policy
from .chunk_programs import RandomChooser
from .differential import backend, observe
from .kernels import prepare
from .stop_points import (
    GENERATORS,
    USAGE_FIELDS,
    Reads,
    installed,
    match_point,
    sweep_kernel_stops,
    sweep_stops,
)

LONG_LOOP = """module "m" version "1.0.0";
entrypoint fn main(n I32, m I32, k I32) -> I32 {
    acc = 0;
    xs = list.empty[I32]();
    for i in 0 .. n { acc = (acc + i * m) % 1000; xs = list.add(xs, acc); }
    return acc + list.count(xs);
}
"""


def test_stops_on_seeded_kernels_of_every_generator_are_reference_points() -> None:
    outcomes: Counter[str] = Counter()
    for seed in range(3):
        for build in GENERATORS.values():
            chooser = RandomChooser(seed)
            sweep_kernel_stops(build(chooser), chooser, outcomes)
    assert outcomes["clock: matched"] >= 5 and outcomes["cancel: matched"] >= 20, outcomes


def test_stops_at_chunk_reservations_of_a_reentered_loop_are_reference_points() -> None:
    """A Collatz walk (an inner loop entered again and again, spec/optimized.md 4.5): the optimized
    backend reads its clock at chunk reservations once per 65,536 work units, not at the
    reference's charges; each of those stops is a reference point, in run order, part way. Walked to
    300: with iteration blocks (4.2.8) the clock is read once per pool, so a walk to 100 reads it
    only once."""
    outcomes: Counter[str] = Counter()
    host = SandboxHost(backends={"optimized": backend()})
    collatz = prepare(COLLATZ, fuzz_policy(**ROOM))
    sweep_stops(host, collatz, [300], RandomChooser(1), "collatz", outcomes)
    assert outcomes["clock: matched"] >= 2 and outcomes["cancel: matched"] >= 5, outcomes


def test_stops_at_chunk_reservations_of_long_loops_are_reference_points_long() -> None:
    """The same over loops long enough for many reservation reads: a longer Collatz walk and an
    owned list built over 30,000 iterations."""
    outcomes: Counter[str] = Counter()
    host = SandboxHost(backends={"optimized": backend()})
    sweep_stops(host, prepare(COLLATZ, fuzz_policy(**ROOM)), [1000], RandomChooser(1), "collatz", outcomes)
    sweep_stops(
        host, prepare(LONG_LOOP, fuzz_policy(**ROOM)), [30_000, 7, 0], RandomChooser(2), "loop", outcomes
    )
    assert outcomes["clock: matched"] >= 12, outcomes


def test_stops_on_seeded_kernels_of_every_generator_are_reference_points_long() -> None:
    outcomes: Counter[str] = Counter()
    for seed in range(3, 43):
        for build in GENERATORS.values():
            chooser = RandomChooser(seed)
            sweep_kernel_stops(build(chooser), chooser, outcomes)
    assert outcomes["clock: matched"] >= 50, outcomes


def test_a_usage_between_two_reference_points_matches_none() -> None:
    """The oracle can refuse: a stop whose fuel falls strictly between two consecutive points of the
    reference (a charge half made, or a reservation not given back) matches no point, while each
    recorded point matches itself."""
    plan = prepare(LONG_LOOP)
    recording = Reads(noting=True)
    with installed(recording, every_charge=True):
        observe(SandboxHost().execute(plan, "main", [20, 3, 0]))
    points = recording.points
    gaps = 0
    fuel_at = USAGE_FIELDS.index("fuel_used")
    for index, (_, usage, calls) in enumerate(points):
        assert match_point(points, 0, (usage, calls)) is not None
        following = points[index + 1][1] if index + 1 < len(points) else None
        if following is not None and following[fuel_at] > usage[fuel_at] + 1:
            between = tuple(value + 1 if at == fuel_at else value for at, value in enumerate(usage))
            assert match_point(points, 0, (between, calls)) is None
            gaps += 1
    assert gaps >= 20 and match_point(points, len(points), (points[0][1], points[0][2])) is None


def test_the_reference_oracle_reads_at_every_charge() -> None:
    """With the cadence set to every charge the reference reads its clock at least once per fuel
    charge of a loop iteration, and the run it makes is the ordinary one."""
    plan = prepare(LONG_LOOP)
    host = SandboxHost()
    whole = observe(host.execute(plan, "main", [50, 3, 0]))
    recording = Reads(noting=True)
    with installed(recording, every_charge=True):
        assert observe(host.execute(plan, "main", [50, 3, 0])) == whole
    assert recording.counts["clock"] >= 2 * 50 and recording.counts["cancel"] >= recording.counts["clock"]
