"""CPU instructions per call of issue 16's dispatch paths, counted by ``valgrind --tool=cachegrind``.

    python -m tests.benchmarks.dispatch_instructions            # every path
    python -m tests.benchmarks.dispatch_instructions pred event # some of them

Why instructions: the machine is shared and its load moves every timing, not the instruction count.
Each path runs in a fresh interpreter under cachegrind: warmed up (compiled, dispatch record and
lane made), the heap frozen (``gc.freeze``: the session's objects are not walked by collections),
then N calls; the count for 1,000 calls is taken from the count for 3,000, so start-up, import and
warm-up cancel out, and the difference over 2,000 is what one call and its loop cost. The inputs are
a fixed set of rows cycled (built once, not per call) and the same loop without the call (``loop``)
is counted too and subtracted, so the number is the call's alone. Every run has the same hash seed
(``PYTHONHASHSEED=0``): with a random one, dict and set layouts moved the count of one path by
several hundred instructions per call from run to run. Same script before and after a
change (the README's dispatch rows; counts before issue 16's pred2 pass included each call's input
row and event, built at the measured size, and the loop).

Paths: ``pred`` (two-integer predicate per ``execute``), ``event`` (predicate over a dict event,
``Map<String, I32>``, per ``execute``), ``event2`` and ``event2l`` (the same predicate with an
``I32`` limit as a second parameter: the event first, then last - an entry whose parameters are not
just its event), ``many`` (the two-integer predicate per ``execute_many`` row,
values read) and ``manyr`` (the same, every row's ``ExecutionResult`` read).
"""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from itertools import cycle, islice
from typing import Any

PATHS = ("pred", "event", "event2", "event2l", "many", "manyr")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


_DISTINCT = 40
"""Distinct rows (and events) the calls cycle through: the benchmark's rows repeat every 40 too."""


def _inputs() -> tuple[Callable[[int], Iterator[list[int]]], Callable[[int], Iterator[Any]]]:
    """The rows and events of ``k`` calls: a fixed set of ``_DISTINCT`` made once, cycled in C
    (``islice(cycle(...))``), so that what the count grows by per call is the call and its loop,
    not the building of its input (a list or dict per call, built at the measured size, which the
    count used to include)."""
    rows = [[hp % 40 - 5, 12] for hp in range(_DISTINCT)]
    events = [{"hp": hp % 40 - 5, "level": 12} for hp in range(_DISTINCT)]
    return (lambda k: islice(cycle(rows), k)), (lambda k: islice(cycle(events), k))


def _workload(path: str) -> Callable[[int], int]:
    """The body that makes ``k`` calls of ``path``, returning the hits; ``loop`` is the same loop
    over the same rows without any call (what ``per_call`` subtracts)."""
    from .test_bench_dispatch_ratios import _EVENT, _EVENT_FIRST, _EVENT_LAST, _HOST, _LIMIT, _PRED

    rows, events = _inputs()
    execute, many = _HOST.execute, _HOST.execute_many

    def pred(k: int) -> int:
        return sum(bool(execute(_PRED, "check", row, backend="optimized").value) for row in rows(k))

    def event(k: int) -> int:
        return sum(bool(execute(_EVENT, "check", [ev], backend="optimized").value) for ev in events(k))

    def event2(k: int) -> int:
        return sum(
            bool(execute(_EVENT_FIRST, "check", [ev, _LIMIT], backend="optimized").value) for ev in events(k)
        )

    def event2l(k: int) -> int:
        return sum(
            bool(execute(_EVENT_LAST, "check", [_LIMIT, ev], backend="optimized").value) for ev in events(k)
        )

    def values(k: int) -> int:
        return sum(bool(v) for v in many(_PRED, "check", list(rows(k)), backend="optimized").values())

    def results(k: int) -> int:
        return sum(bool(r.value) for r in many(_PRED, "check", list(rows(k)), backend="optimized"))

    def loop(k: int) -> int:
        return sum(bool(row) for row in rows(k))

    return {
        "pred": pred,
        "event": event,
        "event2": event2,
        "event2l": event2l,
        "many": values,
        "manyr": results,
        "loop": loop,
    }[path]


def run_calls(path: str, calls: int) -> None:
    """What runs under cachegrind: warm-up, frozen heap, ``calls`` calls."""
    body = _workload(path)
    for _ in range(3):
        body(200)
    gc.collect()
    gc.freeze()
    body(calls)


def instructions(path: str, calls: int) -> int:
    """The instructions of a whole interpreter run of ``run_calls(path, calls)``."""
    done = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            "-m",
            "tests.benchmarks.dispatch_instructions",
            "--run",
            path,
            str(calls),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = _REFS.search(done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in cachegrind's output:\n{done.stderr}")
    return int(found.group(1).replace(",", ""))


def gross_per_call(path: str) -> float:
    """Instructions per call with its loop: (3,000 calls - 1,000 calls) / 2,000."""
    return (instructions(path, 3000) - instructions(path, 1000)) / 2000


def per_call(path: str, loop: float | None = None) -> float:
    """Instructions of the call alone: ``gross_per_call`` less that of the same loop without the
    call (``loop``; measured when not given)."""
    return gross_per_call(path) - (gross_per_call("loop") if loop is None else loop)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--run"]:
        run_calls(argv[1], int(argv[2]))
        return
    for path in argv:
        if path not in PATHS:
            raise SystemExit(f"unknown path {path!r}; one of {', '.join(PATHS)}")
    loop = gross_per_call("loop")
    print(f"(the loop alone: {loop:,.0f} instructions per call, subtracted below)", flush=True)
    for path in argv or PATHS:
        print(f"{path}: {per_call(path, loop):,.0f} instructions per call", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
