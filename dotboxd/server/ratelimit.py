"""A token bucket per tenant: the run-rate limit of ``[limits] runs_per_second``.

A bucket holds at most ``max(1, rate)`` tokens and refills continuously at ``rate`` per second; a
run takes one token or is refused at once (E-SERVER-QUOTA, HTTP 429). Refusing rather than queueing
keeps a flooding tenant from building an unbounded backlog that would delay everyone else.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate)
        self._tokens = self.capacity
        self._clock = clock
        self._stamp = clock()
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Take one token if there is one (thread-safe)."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False
