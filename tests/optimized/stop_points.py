"""Where a deadline or cancellation stops an optimized run, held to the reference exactly (issue 16).

``cadence_fuzz`` checks a stopped run's invariants (the stop's code, no counter past the whole run's)
but not *where* it stopped: the optimized backend reads the clock at other charges than the
reference (spec/optimized.md 4.5: chunk reservations and work ticks, once per 65,536 work units), so
its k-th read is not the reference's k-th read. What both backends do promise is that a run stops
between two operations - never in the middle of one - with exactly the usage the run had there
(spec/semantics.md section 11, spec/costs.md section 9). That can be compared exactly:

1. the reference runs once with a meter that checks the deadline at *every* fuel and loop charge
   (the cadence constants set to 1 for that run: the charges themselves are unchanged) and a clock
   and token that never stop it but note, at each read, the usage and per-binding calls a stop there
   reports - every point between two charges is such a read (cancellation is read before every fuel,
   loop, allocation and host-call charge), and so is the run's end;
2. the optimized run is stopped at its k-th clock read (and, apart, at its k-th token read) for every
   k of a small run, and around the first and last reads and at sampled ones of a longer one;
3. each optimized stop must be one of the reference's points, at or after the previous stop's point
   (in run order), and equal - value, error, location, usage, binding calls, commands and audit -
   to the reference stopped at that very point (its code aside when the reference's read there is
   of the other kind: a Timeout where the reference read the token, or the reverse).

A stop that matches no point is a stop in the middle of an operation, a charge counted that the
reference had not made yet, or a reservation not given back. ``python -m
tests.optimized.stop_points --seeds 0:200`` runs seeded kernels of all three generators.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from dotboxd.host import SandboxHost
from dotboxd.runtime import meter as meter_module
from dotboxd.runtime.meter import ResourceUsage
from dotboxd.validator.plan import ExecutionPlan

from .chunk_fuzz import ROOM, fuzz_policy
from .chunk_programs import Chooser, Kernel, RandomChooser, build_kernel
from .differential import Observation, backend, observe
from .edge_programs import build_edge_kernel
from .kernels import prepare
from .value_programs import build_value_kernel

STOPS = {"clock": "R-TIMEOUT", "cancel": "R-CANCELLED"}
"""The error a stop at each kind of read ends a run with."""

EVERY_READ = 40
"""A run with at most this many reads of a kind is stopped at every one of them (and one past)."""

USAGE_FIELDS = tuple(field.name for field in fields(ResourceUsage))
"""The meter's counters a run's usage reports, in ``ResourceUsage`` order (read straight off the
meter at each read of the oracle's run: building the record there would cost more than the run)."""

USAGE_KEYS = tuple(ResourceUsage().to_json())
"""The same counters' keys in an observed usage, in the same order."""

Usage = tuple[int, ...]
Calls = tuple[tuple[str, int], ...]
Point = tuple[str, Usage, Calls]
"""A reference read: its kind, the usage (``USAGE_FIELDS``) and the per-binding calls a stop there
reports."""


class Reads:
    """One clock and one token for every meter built while it is installed: each read is counted
    (per kind and overall) and, when ``noting``, noted with the meter's usage then; from the ``turn``-th read of a
    kind in ``turns`` on (overall when ``turns`` holds both) the read says stop (0: never)."""

    def __init__(self, turns: tuple[str, ...] = (), turn: int = 0, noting: bool = False) -> None:
        self.turns = turns
        self.turn = turn
        self.noting = noting
        self.counts: Counter[str] = Counter()
        self.points: list[Point] = []
        self.meter: meter_module.Meter | None = None

    def _read(self, kind: str) -> bool:
        counts = self.counts
        counts[kind] += 1
        if self.noting:  # the oracle's run: what a stop here would report (the meter is exact there)
            meter = self.meter
            assert meter is not None, "a read before the meter was built"
            usage = tuple([getattr(meter, name) for name in USAGE_FIELDS])
            self.points.append((kind, usage, tuple(sorted(meter.calls_by_binding.items()))))
        seen = counts.total() if len(self.turns) > 1 else counts[kind]
        return kind in self.turns and 0 < self.turn <= seen

    def clock(self) -> float:
        return 1e12 if self._read("clock") else 0.0

    @property
    def cancelled(self) -> bool:
        return self._read("cancel")


@contextmanager
def installed(reads: Reads, every_charge: bool = False) -> Iterator[Reads]:
    """Every meter built inside reads ``reads``' clock and token; with ``every_charge`` it checks
    the deadline at every fuel and loop charge (what the reference's oracle run needs)."""
    original = meter_module.Meter.__init__
    cadences = ("_DEADLINE_EVERY_FUEL_CHARGES", "_DEADLINE_EVERY_LOOP_CHARGES")
    saved = [getattr(meter_module, name) for name in cadences]

    def init(self: meter_module.Meter, limits: Any, *_: Any, **__: Any) -> None:
        original(self, limits, reads, reads.clock, 0.0)  # type: ignore[arg-type]
        reads.meter = self

    meter_module.Meter.__init__ = init  # type: ignore[method-assign]
    if every_charge:
        for name in cadences:
            setattr(meter_module, name, 1)
    try:
        yield reads
    finally:
        meter_module.Meter.__init__ = original  # type: ignore[method-assign]
        for name, value in zip(cadences, saved, strict=True):
            setattr(meter_module, name, value)


class StopFault(AssertionError):
    """An optimized run stopped by its clock or token somewhere the reference never is between two
    operations, or reported there what the reference stopped there does not."""


def point_of(seen: Observation) -> tuple[Usage, Calls]:
    """The usage and per-binding calls of an observed run, as a ``Point`` holds them."""
    return tuple(seen["usage"][key] for key in USAGE_KEYS), tuple(sorted(seen["bindingCalls"].items()))


def _stops(reads: int, c: Chooser) -> list[int]:
    """The reads to stop at: every one of a short run (and one past the last); around the first and
    the last and three sampled of a longer one."""
    if reads <= EVERY_READ:
        return list(range(1, reads + 2))
    return sorted({1, 2, 3, reads - 1, reads, reads + 1, *(c.choice(range(4, reads - 1)) for _ in range(3))})


def match_point(points: list[Point], start: int, point: tuple[Usage, Calls]) -> int | None:
    """The first of ``points`` from ``start`` on with ``point``'s usage and binding calls (None: the
    reference never checks there)."""
    return next((j for j in range(start, len(points)) if points[j][1:] == point), None)


@dataclass
class Oracle:
    """The reference's points of one run and how to stop the reference at any of them."""

    run: Callable[[str, Reads, bool], Observation]
    points: list[Point]
    whole: Observation
    stopped: dict[int, Observation]

    def at(self, index: int) -> Observation:
        """The reference stopped at its ``index``-th point (0-based, the run order of ``points``)."""
        if index not in self.stopped:
            kind = self.points[index][0]
            self.stopped[index] = self.run("reference", Reads(tuple(STOPS), index + 1), True)
            seen = self.stopped[index]
            if (
                seen["error"] is None
                or seen["error"][1] != STOPS[kind]
                or point_of(seen) != self.points[index][1:]
            ):
                raise StopFault(f"the oracle itself: a stop at point {index} ({kind}) reported {seen}")
        return self.stopped[index]


def sweep_stops(
    host: SandboxHost, plan: ExecutionPlan, args: list[Any], c: Chooser, what: str, outcomes: Counter[str]
) -> int:
    """The optimized run stopped at each chosen read of each kind, matched to the reference's
    points (module docstring); returns how many optimized runs it made."""

    def run(name: str, reads: Reads, every_charge: bool = False) -> Observation:
        with installed(reads, every_charge):
            return observe(host.execute(plan, "main", list(args), backend=name))

    whole = observe(host.execute(plan, "main", list(args)))
    recording = Reads(noting=True)
    if run("reference", recording, True) != whole:
        raise StopFault(f"{what}\nthe reference checking at every charge changed the run")
    end: Point = ("end", *point_of(whole))
    oracle = Oracle(run, [*recording.points, end], whole, {})
    for _ in range(2):  # compile and bind the lane first: the counted runs take the lane's path
        host.execute(plan, "main", list(args), backend="optimized")
    counting = Reads()
    if run("optimized", counting) != whole:
        raise StopFault(f"{what}\noptimized: a clock and token that never stop changed the run")
    runs = 0
    for kind, code in STOPS.items():
        index = 0
        for at in _stops(counting.counts[kind], c):
            seen = run("optimized", Reads((kind,), at))
            runs += 1
            if seen["error"] is None or seen["error"][1] != code:
                if seen != whole or at <= counting.counts[kind]:
                    raise StopFault(
                        f"{what}\n{kind} read {at} of {counting.counts[kind]} did not stop the run: {seen}"
                    )
                outcomes[f"{kind}: ran through"] += 1
                continue
            point = point_of(seen)
            found = match_point(oracle.points, index, point)
            if found is None:
                fuel = seen["usage"]["fuelUsed"]
                before = [p for p in oracle.points[index:] if p[1][USAGE_FIELDS.index("fuel_used")] <= fuel][
                    -2:
                ]
                raise StopFault(
                    f"{what}\n{kind} read {at}: the optimized run stopped at {seen['usage']} {point[1]},"
                    f" no point the reference checks at from point {index} on (the nearest before: {before})"
                )
            index = found
            expected = oracle.at(found) if found < len(oracle.points) - 1 else None
            if expected is not None:
                same_kind = oracle.points[found][0] == kind
                keys = [key for key in seen if same_kind or key not in ("error", "audit")]
                wrong = {key: (seen[key], expected[key]) for key in keys if seen[key] != expected[key]}
                if wrong:
                    raise StopFault(f"{what}\n{kind} read {at} stopped at reference point {found}: {wrong}")
            outcomes[f"{kind}: matched"] += 1
    return runs


GENERATORS: dict[str, Callable[[Chooser], Kernel]] = {
    "chunk": build_kernel,
    "edge": build_edge_kernel,
    "value": build_value_kernel,
}
"""The kernel generators the stop sweep draws from."""


def sweep_kernel_stops(kernel: Kernel, c: Chooser, outcomes: Counter[str]) -> int:
    """Every vector of ``kernel`` through ``sweep_stops`` (the fuzz policy with room for it)."""
    plan = prepare(kernel.text, fuzz_policy(**ROOM))
    host = SandboxHost(backends={"optimized": backend()})
    return sum(
        sweep_stops(host, plan, vector, c, f"kernel:\n{kernel.text}\nvector: {vector}", outcomes)
        for vector in kernel.vectors
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="0:50", help="a range start:stop of kernel seeds")
    parser.add_argument("--generators", default="chunk,edge,value", help="which generators, comma separated")
    options = parser.parse_args(argv)
    start, stop = (int(part) for part in options.seeds.split(":"))
    names = options.generators.split(",")
    outcomes: Counter[str] = Counter()
    failures = runs = kernels = 0
    began = time.process_time()
    for seed in range(start, stop):
        for name in names:
            chooser = RandomChooser(seed)
            kernel = GENERATORS[name](chooser)
            kernels += 1
            try:
                runs += sweep_kernel_stops(kernel, chooser, outcomes)
            except StopFault as error:
                failures += 1
                print(f"== {name} seed {seed}: STOP FAULT\n{error}\n", flush=True)
    print(
        f"kernels {kernels}, optimized stopped runs {runs}, failures {failures}, "
        f"cpu {time.process_time() - began:.1f}s\noutcomes {dict(outcomes.most_common())}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
