"""Python stack headroom for a run: how deep a kernel may go never depends on the host's own stack.

Why: both backends walk or call Python functions as a kernel calls its functions and nests its
expressions, so each run needs some of the interpreter's recursion budget (``sys.getrecursionlimit``
frames per thread). How much the *host* has already used when it calls ``execute`` is none of the
kernel's business, yet without care it decides where a deep run fails: a host calling from 900
frames deep would make the reference interpreter fail at a call depth where the optimized backend
(one Python frame per kernel call) still succeeds. So:

* ``call_with_headroom(frames, fn, *args)`` runs ``fn`` where at least ``frames`` more frames are
  available: on the current thread when it has them, otherwise on a fresh helper thread (whose
  stack starts empty) that the caller waits for. The run's context variables go along, and the
  result or exception comes back as if ``fn`` had run in place;
* every run starts with the headroom its plan may need before the reference interpreter's first look
  at its stack (``run_frames``, at most ``RUN_FRAMES``: enough for the optimized backend at the
  deepest call depth a policy may allow, ``costs.MAX_CALL_DEPTH_CEILING``, and for the reference's
  first kernel calls at the deepest nesting the validator allows). A run whose need fits in
  ``HOST_RESERVE_FRAMES``, which the host must leave free, starts in place without looking;
* the reference interpreter asks for ``REFERENCE_CALL_FRAMES`` again every
  ``calls_between_stack_checks`` kernel calls, so a long call chain continues on a new helper thread
  whenever the current one runs low: its depth is bounded by ``maxCallDepth`` alone, never by
  Python's stack.

Only when the recursion limit is so low that even a fresh thread would not have the headroom does a
run go ahead in place; a ``RecursionError`` then fails it closed as QuotaExceeded
(``R-QUOTA-CALL-DEPTH``). Python's default limit (1000) leaves ample room.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Final, TypeVar, cast

from dotboxd.core import ast
from dotboxd.core.costs import MAX_CALL_DEPTH_CEILING
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.structure import MAX_NESTING

_T = TypeVar("_T")

FRAMES_PER_NESTING_LEVEL: Final = 3
"""The most Python frames the reference interpreter spends on one level of statement or expression
nesting (``eval`` -> ``_binary`` -> the operator rule -> ``eval``; ``eval`` -> ``_call`` -> the
argument generator -> ``eval``; ``_block`` -> ``_if`` -> ``_block`` is 2)."""

HELPER_FRAMES: Final = 100
"""Room for the non-recursive helpers below a kernel frame (meter charges, built-ins, the binding
call path, value equality on values of modest depth)."""

REFERENCE_CALL_FRAMES: Final = FRAMES_PER_NESTING_LEVEL * MAX_NESTING + HELPER_FRAMES
"""Headroom the reference interpreter makes sure of before it enters a kernel function: the body's
deepest nesting plus the helpers (700 with the validator's nesting limit of 200)."""

RUN_FRAMES: Final = max(REFERENCE_CALL_FRAMES, MAX_CALL_DEPTH_CEILING + HELPER_FRAMES)
"""The most headroom a run asks for when it starts (``run_frames`` is at most this): the reference's
first kernel calls, or the optimized backend's whole call chain (one generated-function frame per
kernel call) at the ceiling of ``maxCallDepth``."""

HOST_RESERVE_FRAMES: Final = 300
"""The headroom a host must leave when it calls ``execute`` (Python's default limit is 1000). A run
whose worst case fits in it runs in place without looking at the stack (``run_frames``): the look
costs about a microsecond, a noticeable share of a small run."""

FRESH_THREAD_FRAMES: Final = 16
"""Frames a helper thread uses before it calls ``fn`` (thread bootstrap, ``Context.run``)."""


def frames_per_call(plan: ExecutionPlan) -> int:
    """The most Python frames the reference interpreter spends per kernel call in ``plan``: a frame
    per nesting level of the plan's deepest function body down to a call site
    (``FRAMES_PER_NESTING_LEVEL`` each), plus ``invoke`` itself (``_call`` -> ``invoke`` ->
    ``_block`` -> the statement). The optimized backend spends one (the generated function)."""
    deepest = max((_nesting(info.function.body) for info in plan.functions.values()), default=0)
    return FRAMES_PER_NESTING_LEVEL * (deepest + 1) + 4


def calls_between_stack_checks(plan: ExecutionPlan) -> int:
    """How many kernel calls deep the reference interpreter may go between two looks at its stack:
    each look makes sure of ``REFERENCE_CALL_FRAMES`` of headroom, which must cover that many
    calls of the plan plus the helpers. A shallow plan is looked at rarely."""
    return max(1, (REFERENCE_CALL_FRAMES - HELPER_FRAMES) // frames_per_call(plan))


def run_frames(plan: ExecutionPlan) -> int:
    """The headroom a run of ``plan`` needs when it starts, on either backend (at most ``RUN_FRAMES``):
    the reference's calls up to its first look at the stack, or the optimized backend's whole chain
    (a call chain is at most as long as the plan has functions, recursion being forbidden, and at
    most ``maxCallDepth``), plus the helpers."""
    levels = min(plan.policy.limits.max_call_depth + 1, len(plan.functions))
    reference = min(levels, calls_between_stack_checks(plan)) * frames_per_call(plan)
    return max(reference, levels) + HELPER_FRAMES


def _nesting(body: tuple[ast.Stmt, ...]) -> int:
    """The deepest statement-and-expression nesting of a function body (a top-level statement is 1),
    measured without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(statement, 1) for statement in body]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children: tuple[object, ...] = ()
        if isinstance(node, ast.If):
            children = (node.condition, *node.then, *node.else_)
        elif isinstance(node, ast.While):
            children = (node.condition, *node.body)
        elif isinstance(node, ast.ForRange):
            children = (node.start, node.end, *node.body)
        elif isinstance(node, ast.Set | ast.Return | ast.ExprStmt):
            children = (node.value,)
        elif isinstance(node, ast.Binary):
            children = (node.left, node.right)
        elif isinstance(node, ast.Unary):
            children = (node.operand,)
        elif isinstance(node, ast.Call):
            children = node.args
        stack.extend((child, depth + 1) for child in children)
    return deepest


def has_headroom(frames: int) -> bool:
    """Whether the current thread can go ``frames`` frames deeper within the recursion limit.

    One look-up of the frame ``limit - frames`` levels up (``sys._getframe`` walks a C linked list;
    at the usual shallow depths it stops early and raises), so it is cheap enough for every call."""
    probe = sys.getrecursionlimit() - frames
    if probe <= 0:
        return False
    try:
        sys._getframe(probe)
    except ValueError:
        return True  # the stack is less than ``probe`` frames deep
    return False


def call_with_headroom(frames: int, fn: Callable[..., _T], *args: object) -> _T:
    """``fn(*args)``, run where at least ``frames`` frames of recursion headroom are available."""
    if has_headroom(frames) or sys.getrecursionlimit() - FRESH_THREAD_FRAMES < frames:
        return fn(*args)
    return _on_fresh_thread(fn, args)


ThreadWaiter = Callable[["concurrent.futures.Future[object]"], object]
"""Waits for a helper thread's outcome without blocking the calling thread (see ``waiting_with``)."""

_LOCAL = threading.local()


@contextlib.contextmanager
def waiting_with(waiter: ThreadWaiter) -> Iterator[None]:
    """Within this block, a hop to a helper thread on this thread waits through ``waiter``.

    Why: ``execute_async`` runs a run in a greenlet on the event loop's thread. Blocking that thread
    in ``join`` while the helper thread runs would stall the loop, and an async binding called from
    the helper thread (awaited on that loop) could never finish. The loop's driver sets a waiter
    that suspends the run's greenlet until the helper thread is done, so the loop stays free."""
    previous = getattr(_LOCAL, "waiter", None)
    _LOCAL.waiter = waiter
    try:
        yield
    finally:
        _LOCAL.waiter = previous


def _on_fresh_thread(fn: Callable[..., _T], args: tuple[object, ...]) -> _T:
    """Run ``fn`` on a new thread with a copy of the caller's context; wait; hand back the outcome.

    The caller waits meanwhile (blocked in ``join``, or suspended through the waiter
    ``waiting_with`` set), so the run stays single-threaded: the meter, the command queue and the
    audit trail are only ever used by one thread at a time."""
    context = contextvars.copy_context()
    outcome: concurrent.futures.Future[object] = concurrent.futures.Future()

    def target() -> None:
        try:
            outcome.set_result(context.run(fn, *args))
        except BaseException as exc:  # handed back to the caller, which re-raises it
            outcome.set_exception(exc)

    waiter: ThreadWaiter | None = getattr(_LOCAL, "waiter", None)
    worker = threading.Thread(target=target, name="dotboxd-stack", daemon=True)
    worker.start()
    if waiter is not None:
        return cast(_T, waiter(outcome))  # ``fn``'s own result
    worker.join()
    return cast(_T, outcome.result())  # ``fn``'s own result (or its exception)


__all__ = [
    "FRAMES_PER_NESTING_LEVEL",
    "HOST_RESERVE_FRAMES",
    "REFERENCE_CALL_FRAMES",
    "RUN_FRAMES",
    "call_with_headroom",
    "calls_between_stack_checks",
    "frames_per_call",
    "has_headroom",
    "run_frames",
    "waiting_with",
]
