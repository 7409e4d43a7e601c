"""The wall-time deadline holds on the optimized backend whatever a kernel's code costs in real time.

The attack: inline operations whose charge is constant but whose real cost grows with their input
(``string.length`` on non-ASCII text re-encodes it). Sized by fuel alone, one bulk chunk (or one tree
of calls between two deadline checks) spent the whole fuel budget: a 100 ms limit ran for seconds.
Each test gives the run plenty of fuel and a 100 ms limit and requires it to stop with ``R-TIMEOUT``
within a small multiple of that limit (the bound leaves room for a loaded machine; before the fix
these runs took 3 s and more).
"""

from __future__ import annotations

import time

import pytest

from dotboxd.host import ExecutionResult, SandboxHost
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.optimized.work import CHUNK_WORK, chunk_limit, heavy_weight
from dotboxd.validator.policy import Policy

WALL_MS = 100
STOP_WITHIN_S = 0.75
TEXT = "\u00e9" * 60_000
"""Non-ASCII text near the default ``maxStringLength``. ``string.length`` re-encoded all of it when
this attack was found; it is O(1) now (``core/utf16.py``), but the work model still weighs it by the
string limit, so these kernels keep checking that chunks and call trees are cut by real time."""

_TWENTY = " + ".join(["string.length(s)"] * 20)
_TEN_CALLS = " + ".join(["h(s)"] * 10)


def _loop_kernel(prelude: str) -> str:
    return f"""module "slow" version "1.0.0";
fn h(s String) -> I32 {{ return {_TWENTY}; }}
entrypoint fn main(s String, n I32) -> I32 {{
    acc = 0;
    for i in 0 .. n {{
        {prelude}
        acc = (acc + {_TEN_CALLS}) % 1000;
    }}
    return acc;
}}
"""


def _outer_loop_kernel() -> str:
    """A loop with a loop inside runs iteration by iteration (the meter checks the deadline every 64
    of them), with the text operations inline in its own body."""
    lines = " ".join([f"acc = (acc + {_TWENTY}) % 1000;"] * 100)
    return f"""module "outer" version "1.0.0";
entrypoint fn main(s String, n I32) -> I32 {{
    acc = 0;
    for i in 0 .. n {{
        for j in 0 .. 0 {{ acc = acc + j; }}
        {lines}
    }}
    return acc;
}}
"""


def _call_tree_kernel() -> str:
    lines = [f"fn h0(s String) -> I32 {{ return {_TWENTY} % 100; }}"]
    for level in range(1, 7):
        calls = " + ".join([f"h{level - 1}(s)"] * 6)
        lines.append(f"fn h{level}(s String) -> I32 {{ return ({calls}) % 100; }}")
    body = "\n".join(lines)
    return f"""module "tree" version "1.0.0";
{body}
entrypoint fn main(s String) -> I32 {{ return h6(s); }}
"""


def _timed_run(kernel: str, args: list[object]) -> tuple[ExecutionResult, float]:
    policy = (
        Policy.builder()
        .with_limits(
            max_wall_time_ms=WALL_MS,
            max_fuel=1_000_000_000,
            max_loop_iterations=1_000_000,
            max_host_calls=1_000_000_000,  # string.length is a pure binding: every call is a host call
        )
        .build()
    )
    backend = OptimizedBackend(cache=ArtifactCache())
    host = SandboxHost(backends={"opt": backend})
    plan = host.prepare(kernel, policy)
    backend.cache.get_or_compile(plan, backend.options)  # compile outside the timed run
    started = time.perf_counter()
    result = host.execute(plan, "main", args, backend="opt")
    return result, time.perf_counter() - started


@pytest.mark.parametrize(
    "prelude",
    [
        pytest.param("", id="fast-chunk-with-inlined-calls"),
        pytest.param('x = "a";', id="checked-chunk-with-real-calls"),
    ],
)
def test_deadline_stops_a_bulk_chunk_of_costly_inline_text_operations(prelude: str) -> None:
    result, elapsed = _timed_run(_loop_kernel(prelude), [TEXT, 1_000_000])
    assert result.error is not None and result.error.code == "R-TIMEOUT", result.error
    assert elapsed < STOP_WITHIN_S, f"a {WALL_MS} ms limit stopped the loop only after {elapsed:.2f} s"


def test_deadline_stops_a_per_iteration_loop_of_costly_inline_text_operations() -> None:
    result, elapsed = _timed_run(_outer_loop_kernel(), [TEXT, 1_000_000])
    assert result.error is not None and result.error.code == "R-TIMEOUT", result.error
    assert elapsed < STOP_WITHIN_S, f"a {WALL_MS} ms limit stopped the loop only after {elapsed:.2f} s"


def test_deadline_stops_a_call_tree_of_costly_inline_text_operations() -> None:
    result, elapsed = _timed_run(_call_tree_kernel(), [TEXT])
    assert result.error is not None and result.error.code == "R-TIMEOUT", result.error
    assert elapsed < STOP_WITHIN_S, f"a {WALL_MS} ms limit stopped the calls only after {elapsed:.2f} s"


def test_chunk_limit_weighs_text_operations_by_the_string_limit() -> None:
    assert chunk_limit(10, 0, 65_536) == CHUNK_WORK // 10
    assert chunk_limit(10, 2, 65_536) == CHUNK_WORK // (10 + 2 * heavy_weight(65_536))
    assert chunk_limit(10, 2, 16) < chunk_limit(10, 0, 16)
    assert chunk_limit(CHUNK_WORK * 4, 0, 0) == 1  # a huge body still progresses, one iteration a chunk
