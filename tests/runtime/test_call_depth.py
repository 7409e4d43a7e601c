"""Call depth is bounded by ``maxCallDepth`` alone, on both backends, whatever the host's stack.

Issue 11, item 11: the reference interpreter spends several Python frames per kernel call, so with a
policy that allowed deep calls it failed on Python's recursion limit (at a depth that depended on how
deep the host's own stack already was) where the optimized backend succeeded. Now every run starts
with the stack headroom its plan may need (a fresh helper thread when the caller's stack is too
deep), the reference interpreter continues a long call chain on a fresh thread when its stack runs
low, and
``maxCallDepth`` has a ceiling (``costs.MAX_CALL_DEPTH_CEILING``) that keeps the optimized backend's
one-frame-per-call chain inside the headroom.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

from dotboxd.core.costs import MAX_CALL_DEPTH_CEILING
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.stack import HOST_RESERVE_FRAMES, RUN_FRAMES, has_headroom, run_frames
from dotboxd.validator.plan import ExecutionPlan

_T = TypeVar("_T")
BACKENDS = ("reference", "optimized")


def _chain(length: int, nesting: int = 0) -> str:
    """``main -> f1 -> ... -> f{length}``: ``length + 1`` frames; each call site sits ``nesting``
    additions deep, so every kernel frame costs the reference interpreter more Python frames."""
    functions = [f"fn f{length}(x I32) -> I32 {{ return x; }}"]
    for i in range(length - 1, 0, -1):
        call = f"f{i + 1}(x)" + " + 1" * nesting  # left-associative: the call is the deepest operand
        functions.append(f"fn f{i}(x I32) -> I32 {{ return {call}; }}")
    return (
        'module "t" version "1.0.0";\n'
        + "\n".join(functions)
        + "\nentrypoint fn main(x I32) -> I32 { return f1(x); }\n"
    )


def _policy(max_call_depth: int) -> Policy:
    return (
        Policy.builder()
        .with_limits(max_call_depth=max_call_depth, max_fuel=10_000_000, max_wall_time_ms=600_000)
        .build()
    )


def _from_depth(frames: int, fn: Callable[[], _T]) -> _T:
    """``fn()`` called from ``frames`` Python frames deeper than here (a host deep in its own stack)."""
    if frames <= 0:
        return fn()
    return _from_depth(frames - 1, fn)


def _with_headroom(frames: int, fn: Callable[[], _T]) -> _T:
    """``fn()`` called where just ``frames`` frames of headroom are left (a few more, never less)."""
    if has_headroom(frames + 10):
        return _with_headroom(frames, fn)
    return fn()


def _observed(result: ExecutionResult) -> tuple[object, ...]:
    error = result.error
    return (result.value, error.code if error else None, result.usage)


def _assert_both_backends_return(
    value: int, run: Callable[[str], ExecutionResult], context: object = None
) -> None:
    """``run(backend)`` succeeds with ``value`` on every backend, and the backends agree exactly."""
    results = [run(backend) for backend in BACKENDS]
    for result in results:
        assert result.ok, (context, result.error)
        assert result.value == value
    assert _observed(results[0]) == _observed(results[1])


@pytest.fixture(scope="module")
def deepest_chain() -> tuple[SandboxHost, ExecutionPlan]:
    host = SandboxHost()
    plan = host.prepare(_chain(MAX_CALL_DEPTH_CEILING - 1), _policy(MAX_CALL_DEPTH_CEILING))
    return host, plan


@pytest.mark.parametrize("host_stack", ["shallow", "600 frames deep", "only the host reserve left"])
def test_deep_call_chain_agrees_on_both_backends_from_any_host_stack_depth(
    deepest_chain: tuple[SandboxHost, ExecutionPlan], host_stack: str
) -> None:
    """T-RUN-06: the deepest chain a policy may allow runs to completion on both backends, with the
    same value and usage, whether the host calls from a shallow or an almost exhausted stack. The
    almost exhausted one is measured from where the test runs (a pytest-xdist worker starts deeper
    than plain pytest): exactly the ``HOST_RESERVE_FRAMES`` of headroom a host must leave."""
    host, plan = deepest_chain

    def call(backend: str) -> ExecutionResult:
        def run() -> ExecutionResult:
            return host.execute(plan, "main", [7], backend=backend)

        if host_stack == "only the host reserve left":
            return _with_headroom(HOST_RESERVE_FRAMES, run)
        return _from_depth(600 if host_stack == "600 frames deep" else 0, run)

    _assert_both_backends_return(7, call)


def test_one_frame_past_max_call_depth_is_the_same_quota_error_on_both_backends() -> None:
    """T-RUN-06: a chain one frame longer than maxCallDepth fails with R-QUOTA-CALL-DEPTH at the
    same charge on both backends (never a RecursionError-shaped failure at some other depth)."""
    host = SandboxHost()
    plan = host.prepare(_chain(MAX_CALL_DEPTH_CEILING), _policy(MAX_CALL_DEPTH_CEILING))
    results = [host.execute(plan, "main", [7], backend=backend) for backend in BACKENDS]
    for result in results:
        assert result.error is not None and result.error.code == "R-QUOTA-CALL-DEPTH"
    assert _observed(results[0]) == _observed(results[1])


def test_reference_frame_model_covers_nested_call_sites_with_the_least_headroom() -> None:
    """T-RUN-06: the reference interpreter's estimate of its own stack use (how often it checks,
    ``REFERENCE_CALL_FRAMES`` per check) is an upper bound: a chain whose call sites sit deep inside
    expressions, started with only ``RUN_FRAMES`` of headroom, still completes on both backends."""
    host = SandboxHost()
    # 56: about the deepest a call site can sit under the wire form's 64-level JSON nesting budget
    for length, nesting in [(120, 8), (40, 56)]:
        plan = host.prepare(_chain(length, nesting), _policy(MAX_CALL_DEPTH_CEILING))
        _assert_both_backends_return(
            (length - 1) * nesting,
            lambda backend, p=plan: _with_headroom(
                RUN_FRAMES, lambda: host.execute(p, "main", [0], backend=backend)
            ),  # type: ignore[misc]
            (length, nesting),
        )


def test_a_small_run_fits_in_the_headroom_the_host_must_leave() -> None:
    """T-RUN-06: a run whose estimated need fits in ``HOST_RESERVE_FRAMES`` starts without looking at
    the stack; the estimate must hold: with just that much headroom it completes on both backends."""
    host = SandboxHost()
    plan = host.prepare(_chain(2, 12), _policy(MAX_CALL_DEPTH_CEILING))
    assert run_frames(plan) <= HOST_RESERVE_FRAMES  # the case this test is about: no look, no thread
    _assert_both_backends_return(
        12,
        lambda backend: _with_headroom(
            HOST_RESERVE_FRAMES, lambda: host.execute(plan, "main", [0], backend=backend)
        ),
    )


def test_max_call_depth_above_the_ceiling_is_a_policy_error() -> None:
    """T-RUN-06: no policy can ask for a call depth the backends could not both honour."""
    assert _policy(MAX_CALL_DEPTH_CEILING).limits.max_call_depth == MAX_CALL_DEPTH_CEILING
    with pytest.raises(DotBoxDError) as info:
        _policy(MAX_CALL_DEPTH_CEILING + 1)
    assert info.value.code == "E-POLICY-LIMIT"
    assert "maxCallDepth" in str(info.value)
