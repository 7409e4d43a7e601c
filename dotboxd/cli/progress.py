"""Progress on a terminal for the long-running commands (``conformance run``, ``conformance
generate``, ``prove``): one line on stderr, rewritten in place, erased when the work is done.

Why only there and only then: stdout carries the result (text or ``--format json``) and must stay
byte-for-byte the same whether or not anyone watches; a progress line in a pipe or a log file is
noise, and in JSON mode a reader may be parsing stderr too. So progress is shown only when stderr
is a terminal and the output is not JSON (:func:`progress_for`), and it is throttled so a fast run
does not spend its time redrawing. Standard library only: a carriage return is all it takes.
"""

from __future__ import annotations

import time
from typing import TextIO

MIN_INTERVAL = 0.1
"""Seconds between redraws (the last step is always drawn)."""


class Progress:
    """A callable ``progress(done, total)`` for the work loops, and :meth:`close` to erase the line."""

    def __init__(self, stream: TextIO, label: str, enabled: bool) -> None:
        self.stream = stream
        self.label = label
        self.enabled = enabled
        self.width = 0
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self.last < MIN_INTERVAL:
            return
        self.last = now
        percent = 100 * done // total if total else 100
        line = f"{self.label}: {done}/{total} ({percent}%)"
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(line))

    def close(self) -> None:
        """Erase the progress line (if one was drawn), so the result that follows starts clean."""
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def progress_for(stream: TextIO, label: str, *, machine: bool) -> Progress:
    """Progress for ``stream`` (stderr): drawn only on a terminal and never with ``--format json``."""
    return Progress(stream, label, enabled=not machine and is_terminal(stream))
