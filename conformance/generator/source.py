"""Where the generator's choices come from: Hypothesis (shrinkable) or a seeded ``random.Random``.

Every decision the generator makes goes through one primitive, ``integer(lo, hi)``. Behind it sits
either a Hypothesis ``draw`` (inside a strategy, so failing examples shrink: option 0 of every
choice is the simplest one) or a ``random.Random`` seeded from text (``generate_cases`` and the
measurement tool: deterministic across processes and independent of ``PYTHONHASHSEED``, and no
Hypothesis needed at run time). The two sources therefore explore exactly the same programs.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


class Source(ABC):
    """Choices for the generator. Subclasses implement :meth:`integer`; the rest derives from it."""

    @abstractmethod
    def integer(self, lo: int, hi: int) -> int:
        """A whole number in ``[lo, hi]`` (inclusive)."""

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options`` (the first is the one a shrinker drifts to)."""
        return options[self.integer(0, len(options) - 1)]

    def weighted(self, options: Sequence[tuple[int, T]]) -> T:
        """One of ``options`` with probability proportional to its weight (weights > 0)."""
        total = sum(w for w, _ in options)
        pick = self.integer(0, total - 1)
        for weight, option in options:
            if pick < weight:
                return option
            pick -= weight
        raise AssertionError("unreachable: weights are positive")

    def chance(self, percent: int) -> bool:
        """True with probability ``percent``/100 (False is the simpler outcome)."""
        return self.integer(0, 99) >= 100 - percent


class RandomSource(Source):
    """A ``random.Random`` seeded from ``seed`` text: the same text gives the same program."""

    def __init__(self, seed: str) -> None:
        self._rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)


class DrawSource(Source):
    """Choices taken from a Hypothesis draw function (see ``strategies``); ``draw_int`` is
    ``lambda lo, hi: draw(st.integers(lo, hi))``, kept abstract so this module needs no Hypothesis."""

    def __init__(self, draw_int: Callable[[int, int], int]) -> None:
        self._draw_int = draw_int

    def integer(self, lo: int, hi: int) -> int:
        return self._draw_int(lo, hi)
