"""The whole conformance corpus, loaded once per test process.

Loading and checking the corpus costs over a second of CPU, and eight test modules need it at
import (for their parametrization), so every pytest-xdist worker paid for it eight times during
collection. ``Case`` objects are frozen and their ``raw`` JSON is read-only by contract, so sharing
one load is safe; a test that wants its own copy still calls ``load_cases``.
"""

from __future__ import annotations

import functools

from dotboxd.conformance.loader import load_cases
from dotboxd.conformance.model import Case


@functools.cache
def corpus_cases() -> tuple[Case, ...]:
    """Every case of the corpus (``load_cases()``), in its order."""
    return tuple(load_cases())
