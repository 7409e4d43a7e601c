"""Per-owner quotas: how many envelopes an owner may install, how much fuel it may burn per second,
how many messages may wait for it, and how many failures in a row suspend a plugin.

The fuel budget is a token bucket refilled continuously at ``fuel_per_second`` up to one second's
worth. A run is admitted only when the bucket holds at least the run's fuel limit (the policy's
``maxFuel``), then charged the fuel it really used, so an owner can never spend more than its budget
plus nothing: the worst case of the admitted run was already in the bucket. A run refused for lack
of fuel is not started at all (no kernel code runs, the event is counted in ``quota_skips``); the
owner's other events resume as the bucket refills. Because admission is decided before the run, one
owner's burning filter costs the hub at most ``fuel_per_second`` of work per second, which is what
keeps other owners' latency flat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dotboxd.events.outbox import Overflow


@dataclass(frozen=True)
class OwnerQuota:
    """The limits of one owner (``EventHub(default_quota=...)`` or ``hub.set_quota``)."""

    max_envelopes: int = 8
    fuel_per_second: int = 5_000_000
    outbox_capacity: int = 1000
    overflow: Overflow = "drop"
    max_consecutive_failures: int = 3

    def __post_init__(self) -> None:
        for name in ("max_envelopes", "fuel_per_second", "outbox_capacity", "max_consecutive_failures"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"OwnerQuota.{name} must be a positive int")
        if self.overflow not in ("drop", "disconnect"):
            raise ValueError("OwnerQuota.overflow must be 'drop' or 'disconnect'")


class FuelBucket:
    """A token bucket of fuel (see the module docstring); ``clock`` is the hub's, in seconds."""

    __slots__ = ("_clock", "_last", "rate", "tokens")

    def __init__(self, rate: int, clock: Callable[[], float]) -> None:
        self.rate = rate
        self.tokens = float(rate)
        self._clock = clock
        self._last = clock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self.tokens = min(float(self.rate), self.tokens + elapsed * self.rate)

    def admit(self, worst_case: int) -> bool:
        """True when a run that may use up to ``worst_case`` fuel fits in the bucket now."""
        self._refill()
        return self.tokens >= worst_case

    def charge(self, used: int) -> None:
        self.tokens -= used
