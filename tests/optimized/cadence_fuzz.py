"""The deadline and cancellation cadence of generated kernels, made deterministic (issue 16).

Why not a wall clock: a run stopped by time stops after a machine-dependent amount of work, so the
differential sweeps (``differential.differences``) skip its counters. Here the meter's clock and
cancel token are fakes that turn at their ``at``-th read (every read, on either backend, counts), so
each stop point is reproducible and what a stopped run reports can be held to what it must be:

* a stop code only: a run that stops ends ``R-TIMEOUT`` or ``R-CANCELLED`` - never an internal
  fault, never another error; a run that does not stop is the reference's run to the letter;
* a prefix: every usage counter of a stopped run is at most what the whole run uses (the chunk
  reservations that read the clock must have given back what they reserved for work not done);
* the stop is reached: the optimized run of a kernel that reads its clock at all reads it at least
  once more when asked to, i.e. the fakes' turn at read ``at`` stops it (no read past the last
  is lost).

The optimized backend reads the clock at other charges than the reference (chunk reservations read
it once per 65,536 work units, spec/optimized.md 4.5), so the stop points themselves are not
compared across backends; only these invariants are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dotboxd.host import SandboxHost
from dotboxd.runtime import meter as meter_module
from dotboxd.validator.plan import ExecutionPlan

from .chunk_programs import Chooser
from .differential import Observation, observe

STOPS = {"clock": "R-TIMEOUT", "cancel": "R-CANCELLED"}
"""The error each fake stops a run with."""


class TurningToken:
    """A cancel token that reports ``cancelled`` from its ``at``-th read on (0: never)."""

    __slots__ = ("at", "reads")

    def __init__(self, at: int) -> None:
        self.at = at
        self.reads = 0

    @property
    def cancelled(self) -> bool:
        self.reads += 1
        return 0 < self.at <= self.reads


class TurningClock:
    """A clock at 0 that jumps past every deadline from its ``at``-th read on (0: never)."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return 1e12 if 0 < self.at <= self.reads else 0.0


@contextmanager
def faked(kind: str, at: int) -> Iterator[TurningClock | TurningToken]:
    """Every meter built inside reads the one fake ``kind`` (``clock`` or ``cancel``) turning at ``at``."""
    fake: TurningClock | TurningToken = TurningClock(at) if kind == "clock" else TurningToken(at)
    original = meter_module.Meter.__init__

    def init(
        self: meter_module.Meter, limits: Any, cancel: Any = None, clock: Any = None, started: Any = None
    ) -> None:
        if kind == "clock":
            original(self, limits, cancel, fake, 0.0)  # type: ignore[arg-type]
        else:
            original(self, limits, fake, lambda: 0.0, 0.0)  # type: ignore[arg-type]
            fake.reads = 0  # the meter's construction reads nothing; start from the run's first check

    meter_module.Meter.__init__ = init  # type: ignore[method-assign]
    try:
        yield fake
    finally:
        meter_module.Meter.__init__ = original  # type: ignore[method-assign]


class CadenceFault(AssertionError):
    """A run stopped by a fake clock or token reported something a stop cannot explain."""


def _check(whole: Observation, seen: Observation, kind: str, at: int, what: str) -> None:
    error = seen["error"]
    if error is None or error[1] != STOPS[kind]:
        if seen != whole:
            raise CadenceFault(f"{what}\n{kind} at read {at}: not stopped, yet {seen} != {whole}")
        return
    over = {
        name: (value, whole["usage"][name])
        for name, value in seen["usage"].items()
        if isinstance(value, int) and value > whole["usage"][name]
    }
    if over:
        raise CadenceFault(f"{what}\n{kind} at read {at}: counters past the whole run's {over}")


def sweep_cadence(
    host: SandboxHost, plan: ExecutionPlan, args: list[int], c: Chooser, what: str, outcomes: Counter[str]
) -> int:
    """Both backends under each fake turning at sampled reads (the first, the last, one past the
    last, a few between): returns how many runs it made."""
    whole = observe(host.execute(plan, "main", list(args)))
    for _ in range(2):  # compile and bind the lane first: the counted run takes the path the sweep does
        host.execute(plan, "main", list(args), backend="optimized")
    runs = 0
    for kind in STOPS:
        for name in ("reference", "optimized"):
            with faked(kind, 0) as counting:
                if observe(host.execute(plan, "main", list(args), backend=name)) != whole:
                    raise CadenceFault(f"{what}\n{name}: a fake that never turns changed the run")
            reads = counting.reads
            stops = {1, reads, reads + 1, *(c.choice(range(1, reads + 2)) for _ in range(3))}
            for at in sorted(stops):
                with faked(kind, at):
                    seen = observe(host.execute(plan, "main", list(args), backend=name))
                _check(whole, seen, kind, at, f"{what}\nbackend: {name}")
                outcomes[f"{kind}: {seen['error'][1] if seen['error'] else 'ok'}"] += 1
                if 0 < at <= reads and (seen["error"] or (0, ""))[1] != STOPS[kind]:
                    raise CadenceFault(
                        f"{what}\n{kind} turned at read {at} of {reads}: the run never stopped"
                    )
                runs += 1
    return runs
