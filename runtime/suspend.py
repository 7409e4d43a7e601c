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
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

import greenlet

from dotboxd.runtime.awaiting import Awaiter, BindingAwaitCancelled, await_value, binding_timeout
from dotboxd.runtime.errors import SandboxError

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

    def awaiter(value: object, timeout: float) -> object:
        # inside the run's greenlet: hand the awaitable to ``drive`` and sleep until it answers
        return driver.switch(_Request(value, timeout))

    def body() -> _Finished[T]:
        return _Finished(work(awaiter))

    run = greenlet.greenlet(body, driver)
    message: object = run.switch()
    cancelled = False
    while not isinstance(message, _Finished):
        request = cast(_Request, message)
        if cancelled:
            message = run.throw(_cancelled_error())  # the run is ending: it awaits nothing more
            continue
        budget = asyncio.timeout(max(0.0, request.timeout))
        try:
            async with budget:
                result = await await_value(request.value)
        except asyncio.CancelledError:
            if not budget.expired() and _task_cancelling():
                cancelled = True
                message = run.throw(_cancelled_error())
            elif budget.expired():
                message = run.throw(binding_timeout())
            else:  # the awaited work was cancelled by someone else: the binding failed
                message = run.throw(BindingAwaitCancelled())
        except TimeoutError as exc:
            message = run.throw(binding_timeout() if budget.expired() else exc)
        except Exception as exc:
            message = run.throw(exc)
        except BaseException:
            _end_now(run)
            raise
        else:
            message = run.switch(result)
    return cast(_Finished[T], message).value, cancelled


def _task_cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _end_now(run: Any) -> None:
    """Finish a suspended run as Cancelled without awaiting anything more."""
    message: object = run.throw(_cancelled_error())
    while not run.dead and not isinstance(message, _Finished):
        message = run.throw(_cancelled_error())


__all__ = ["drive"]
