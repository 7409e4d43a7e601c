"""Did-you-mean suggestions, worded one way for every diagnostic that offers them.

Why a module: unknown locals, calls, keywords, entrypoints and policy keys all suggest the closest
known spellings; one helper keeps the matching (``difflib``'s ratio, the same cutoff) and the
wording the same everywhere, so a reader learns the form once.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6
"""``difflib.get_close_matches``' default: close enough that a typo matches, not any short word."""


def close_matches(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The up to ``n`` candidates closest to ``word``, best first (``word`` itself excluded)."""
    pool = sorted({c for c in candidates if c != word})
    return difflib.get_close_matches(word, pool, n=n, cutoff=CUTOFF)


def did_you_mean(word: str, candidates: Iterable[str], n: int = 3) -> str:
    """``"did you mean 'x'?"`` (or ``'x', 'y'``) for the closest candidates, or ``""`` if none is close."""
    close = close_matches(word, candidates, n)
    return f"did you mean {', '.join(repr(c) for c in close)}?" if close else ""
