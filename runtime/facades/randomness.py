"""``random.nextI32(minInclusive, maxExclusive)``: a uniform I32 draw in ``[min, max)``.

Two sources, chosen by the policy:

* **deterministic** (``randomSeed``): the ``k``-th call of a run (``k`` = 1, 2, ...) returns
  ``seeded_draw(seed, k, min, max)``, a counter-based generator: SHA-256 of the ASCII text
  ``"dotboxd.random.nextI32:<seed>:<k>:<attempt>"``, its first 8 bytes read as an unsigned
  big-endian integer ``x``, accepted when ``x < 2**64 - 2**64 % span`` (rejection sampling, so every
  value of the range is equally likely) and mapped to ``min + x % span``; a rejected ``x`` retries
  with the next ``attempt`` (starting at 0). Every run starts the sequence afresh from the seed, and
  its only state is the run's own call count, so concurrent runs of one plan never share or disturb
  a generator - and another implementation can reproduce the sequence from this paragraph.
* otherwise ``secrets.randbelow`` (the operating system's CSPRNG): unpredictable, even to a kernel
  that has seen earlier draws.

``min >= max`` is InvalidInput (``R-BINDING-INVALID``), checked before anything is drawn.
"""

from __future__ import annotations

import hashlib
import secrets

from dotboxd.core.values import I32_MAX, I32_MIN
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.facades.run_view import call_ordinal, determinism

CAPABILITY = "random"
_WORD = 1 << 64


def seeded_draw(seed: int, ordinal: int, minimum: int, maximum: int) -> int:
    """The deterministic draw number ``ordinal`` (1-based) of a run seeded with ``seed``."""
    span = maximum - minimum
    if span <= 0:
        raise ValueError("the range is empty")
    accept_below = _WORD - _WORD % span
    attempt = 0
    while True:
        digest = hashlib.sha256(f"dotboxd.random.nextI32:{seed}:{ordinal}:{attempt}".encode("ascii")).digest()
        x = int.from_bytes(digest[:8], "big")
        if x < accept_below:
            return minimum + x % span
        attempt += 1


def next_i32(ctx: BindingContext, minimum: int, maximum: int) -> int:
    """A uniform I32 in ``[minimum, maximum)`` (see the module docstring for the two sources)."""
    if (
        type(minimum) is not int
        or type(maximum) is not int
        or not (I32_MIN <= minimum <= I32_MAX and I32_MIN <= maximum <= I32_MAX)
    ):
        raise BindingError("InvalidInput", "random.nextI32 takes two I32 bounds")
    if minimum >= maximum:
        raise BindingError("InvalidInput", "random.nextI32 needs minInclusive < maxExclusive")
    settings = determinism(ctx)
    if settings.deterministic:
        if settings.random_seed is None:
            raise BindingError("PermissionDenied", "the deterministic policy has no random seed")
        return seeded_draw(settings.random_seed, call_ordinal(ctx), minimum, maximum)
    return minimum + secrets.randbelow(maximum - minimum)
