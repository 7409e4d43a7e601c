"""The one error type of the conformance tooling itself (a broken case file, a bad generator).

It is deliberately not a ``DotBoxDError``: a malformed *case* is a bug in the corpus, never an
outcome of the implementation under test, and the runner refuses to run until it is fixed.
"""

from __future__ import annotations


class CaseFormatError(ValueError):
    """A case file or case object that breaks the case format; ``where`` is ``file#/json/pointer``."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message
