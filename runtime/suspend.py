"""Running a synchronous run on the caller's event loop, suspending it at async binding calls.

Why greenlets: both backends are synchronous Python (a recursive interpreter, generated code); an
async binding call deep inside one must pause the run until the awaitable completes on the caller's
loop. Rewriting both as resumable generators would touch every node of the interpreter and of the
generated code. A worker thread per run would leave the loop's thread, needs one thread per waiting
run (or a bounded pool that can starve) and hops every await across threads. A greenlet is a
separate Python stack on the *same* thread: ``drive`` starts the run in one, the run executes
inline on the loop's thread (sync bindings included) and, when a binding returns a pending
awaitable, the run's ``Awaiter`` switches back to ``drive``, which ``await``s it on the loop - other
tasks (other runs) proceed meanwhile - and switches the value (or the error) back in. Many
concurrent runs cost one small greenlet each, no threads.

What ``drive`` guarantees:

* the awaitable is awaited under ``asyncio.timeout`` set to the run's remaining wall time; on expiry
  the awaited work is cancelled and the run sees Timeout ``R-BINDING-TIMEOUT``;
* if the task awaiting ``drive`` is cancelled while the run waits, the run sees Cancelled
  ``R-CANCELLED`` at that call and ends (its commands are dropped: nothing is applied); ``drive``
  then reports ``cancelled=True`` so the caller can re-raise ``CancelledError``. Anything else that
  interrupts the wait (``GeneratorExit``, ``KeyboardInterrupt``) ends the run the same way before
  it propagates, so a run is never left suspended half way;
* an exception of the awaited work itself is thrown into the run at the binding call, where the
  binding-call sequence sanitizes it (``R-BINDING-FAILED``) as it does for a synchronous binding.

The run is CPU-bound between binding calls and holds the loop while it computes, exactly as a
synchronous call would; its ``maxWallTimeMs`` bounds that. Time spent waiting for the loop (while
other tasks run) is wall time and counts against the budget.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

import greenlet

from dotboxd.runtime.awaiting import (
    Awaiter,
    BindingAwaitCancelled,
    LoopAwaiter,
    await_value,
    binding_timeout,
)
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.stack import waiting_with

T = TypeVar("T")


class _Request:
    """What a suspended run asks ``drive`` for: await ``value`` for at most ``timeout`` seconds."""

    __slots__ = ("timeout", "value")

    def __init__(self, value: object, timeout: float) -> None:
        self.value = value
        self.timeout = timeout


class _Finished(Generic[T]):
    """The run's own return value, wrapped so it can never be mistaken for a ``_Request``."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


def _cancelled_error() -> SandboxError:
    return SandboxError("R-CANCELLED", "the run was cancelled")


async def drive(work: Callable[[Awaiter], T]) -> tuple[T, bool]:
    """Run ``work(awaiter)`` on the calling task's loop; (its result, whether the task was cancelled
    while the run waited). ``work`` must catch its own errors: an exception escaping it propagates."""
    driver = greenlet.getcurrent()
    home = threading.get_ident()
    from_helper_threads = LoopAwaiter(asyncio.get_running_loop())

    def awaiter(value: object, timeout: float) -> object:
        if threading.get_ident() != home:
            # the run continues on a helper thread (a deep stack, ``runtime/stack.py``) while its
            # greenlet waits for that thread through ``wait_for_thread``: this loop is free, so the
            # helper thread awaits on it the way the synchronous ``execute`` does
            return from_helper_threads(value, timeout)
        # inside the run's greenlet: hand the awaitable to ``drive`` and sleep until it answers
        return driver.switch(_Request(value, timeout))

    def wait_for_thread(outcome: object) -> object:
        # the helper thread's own meter bounds its wall time; this wait only needs to outlast it
        return awaiter(outcome, _THREAD_WAIT_SECONDS)

    def body() -> _Finished[T]:
        return _Finished(work(awaiter))

    def resume(step: Callable[..., object], *value: object) -> object:
        # the waiter is set only while the run's greenlet executes (a thread-local shared by every
        # greenlet of this thread, so it is set and restored around each switch into the run)
        with waiting_with(wait_for_thread):
            return step(*value)

    run = greenlet.greenlet(body, driver)
    message: object = resume(run.switch)
    cancelled = False
    while not isinstance(message, _Finished):
        request = cast(_Request, message)
        if cancelled:
            message = resume(run.throw, _cancelled_error())  # the run is ending: it awaits nothing more
            continue
        budget = asyncio.timeout(max(0.0, request.timeout))
        try:
            async with budget:
                result = await await_value(request.value)
        except asyncio.CancelledError:
            if not budget.expired() and _task_cancelling():
                cancelled = True
                message = resume(run.throw, _cancelled_error())
            elif budget.expired():
                message = resume(run.throw, binding_timeout())
            else:  # the awaited work was cancelled by someone else: the binding failed
                message = resume(run.throw, BindingAwaitCancelled())
        except TimeoutError as exc:
            message = resume(run.throw, binding_timeout() if budget.expired() else exc)
        except Exception as exc:
            message = resume(run.throw, exc)
        except BaseException:
            _end_now(run, resume)
            raise
        else:
            message = resume(run.switch, result)
    return cast(_Finished[T], message).value, cancelled


_THREAD_WAIT_SECONDS = 1e9
"""How long ``drive`` waits for a helper thread: without end in practice (its run has a deadline)."""


def _task_cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _end_now(run: Any, resume: Callable[..., object]) -> None:
    """Finish a suspended run as Cancelled without awaiting anything more."""
    message: object = resume(run.throw, _cancelled_error())
    while not run.dead and not isinstance(message, _Finished):
        message = resume(run.throw, _cancelled_error())


__all__ = ["drive"]
