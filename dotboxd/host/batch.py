"""``BatchResults``: the per-row results of ``SandboxHost.execute_many``, built when read.

Why lazily: an event stream runs one small kernel per row, and the ``ExecutionResult`` of a row (a
17-field record, its usage record, its audit trail) costs more than the run itself. A row that ran
on the optimized backend's fast lane and consumed only fuel is kept in a compact form (run id
number, value, error, fuel used, summary timestamp) and turned into its ``ExecutionResult`` - equal
to the one ``execute`` would have returned for that run - on first read (and that result builds its
usage, audit trail and run id text only when they are read: ``host.settled``); ``values()`` and
``errors()`` read the compact form directly. Every other row is an ``ExecutionResult`` from the
start.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any, overload

from dotboxd.core.values import Value
from dotboxd.host.result import DeferredBuilder, ExecutionResult, ResultBuilder
from dotboxd.runtime.errors import ErrorInfo


class BatchResults(Sequence[ExecutionResult]):
    """The results of ``execute_many``, one per row that ran, in row order (an immutable sequence).

    ``results[i]`` is row ``i``'s ``ExecutionResult``; ``values()`` every row's value (None for a
    failed row) and ``errors()`` every row's error (None for a row that succeeded), without building
    the result objects."""

    __slots__ = ("_build", "_defer", "_lock", "_rows")

    def __init__(self, rows: list[Any], build: ResultBuilder | None, defer: DeferredBuilder | None) -> None:
        """``rows``: per row an ``ExecutionResult``, a lane's full ``RunRecord`` (9 fields, made a
        result by ``build``) or compact row (6, made one by ``defer``): the entry's builders
        (``sandbox_host._Dispatch``), None when every row is a result."""
        self._build = build
        self._rows = rows
        self._defer = defer
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def _result(self, index: int) -> ExecutionResult:
        row = self._rows[index]
        if type(row) is ExecutionResult:
            return row
        with self._lock:  # one result object per row, however many threads read it first
            row = self._rows[index]
            if type(row) is not ExecutionResult:
                if len(row) == 9:
                    assert self._build is not None
                    row = self._build(*row)
                else:
                    assert self._defer is not None
                    row = self._defer(row[1], row[2], row)
                self._rows[index] = row
            return row

    @overload
    def __getitem__(self, index: int) -> ExecutionResult: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ExecutionResult, ...]: ...

    def __getitem__(self, index: int | slice) -> ExecutionResult | tuple[ExecutionResult, ...]:
        if isinstance(index, slice):
            return tuple(self._result(i) for i in range(*index.indices(len(self._rows))))
        if index < 0:
            index += len(self._rows)
        if not 0 <= index < len(self._rows):
            raise IndexError("row index out of range")
        return self._result(index)

    def __iter__(self) -> Iterator[ExecutionResult]:
        for index in range(len(self._rows)):
            yield self._result(index)

    def values(self) -> list[Value]:
        """Each row's value (None where the row failed), in row order."""
        return [row.value if type(row) is ExecutionResult else row[1] for row in self._rows]

    def errors(self) -> list[ErrorInfo | None]:
        """Each row's error (None where the row succeeded), in row order."""
        return [row.error if type(row) is ExecutionResult else row[2] for row in self._rows]

    def __repr__(self) -> str:
        return f"BatchResults({len(self._rows)} rows)"

    def __reduce__(self) -> tuple[type[BatchResults], tuple[list[ExecutionResult], None, None]]:
        """Pickled and copied as the list of its results, every one built: the builders and the
        lock are this process's (``ExecutionResult`` pickles itself)."""
        return (BatchResults, (list(self), None, None))
