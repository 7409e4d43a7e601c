"""What to do when a binding hands back an awaitable instead of a value (spec/semantics.md 7, 7.1).

* A result that is already complete (a done ``Future``) is fine with or without the async grant.
* Without ``dotboxd.runtime.async``, or from a binding not declared async, anything still pending
  fails *at once* with BindingFailure ``R-BINDING-PENDING``: it is never awaited, blocked on or
  pumped (a coroutine is closed unstarted, so it cannot run later).
* With the grant, the run's ``Awaiter`` drives it to completion within the run's remaining wall
  time (Timeout ``R-BINDING-TIMEOUT`` after that, and the awaited work is cancelled):

  - under ``SandboxHost.execute_async`` the run is suspended and the awaitable is awaited on the
    caller's own event loop (``dotboxd.runtime.suspend``);
  - under the synchronous ``execute`` a ``LoopAwaiter`` hands it to an event loop running in
    another thread with ``asyncio.run_coroutine_threadsafe`` and blocks on the returned future with
    a timeout - the host's loop when it gave one (``SandboxHost(async_loop=...)``), else the one
    shared loop thread of this module. No thread or loop is made per call and nothing is polled.

Why a loop of the host's: an awaitable tied to a loop (an ``asyncio.Future``, a client opened on
it) only completes on that loop. Calling the synchronous ``execute`` *on* the loop's own thread
would block the very loop the awaitable needs; that is refused at once (HostFailure
``R-ASYNC-LOOP``) instead of hanging until the deadline - such a host calls ``execute_async``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from dotboxd.runtime.errors import SandboxError

Awaiter = Callable[[object, float], object]
"""Drives a pending awaitable to its value within ``timeout`` seconds (SandboxError on timeout)."""


def is_awaitable(value: object) -> bool:
    return inspect.isawaitable(value) or isinstance(value, concurrent.futures.Future)


def _done_result(value: object) -> tuple[bool, object]:
    """(True, result) for an already-completed future; (False, None) otherwise."""
    if isinstance(value, concurrent.futures.Future | asyncio.Future) and value.done():
        return True, value.result()
    return False, None


def resolve(value: object, async_enabled: bool, timeout_seconds: float, awaiter: Awaiter | None) -> object:
    """The value behind ``value`` (which ``is_awaitable``), per the rules above; ``awaiter`` None
    means the synchronous default (``LoopAwaiter`` on the shared loop)."""
    finished, result = _done_result(value)
    if finished:
        return result
    if not async_enabled:
        discard(value)
        raise SandboxError(
            "R-BINDING-PENDING", "binding returned a pending result; async capability is not granted"
        )
    if awaiter is None:
        awaiter = LoopAwaiter(shared_loop())
    return awaiter(value, timeout_seconds)


def discard(value: object) -> None:
    """Make sure a pending awaitable that will never be awaited cannot run later."""
    if inspect.iscoroutine(value):
        value.close()


def binding_timeout() -> SandboxError:
    return SandboxError("R-BINDING-TIMEOUT", "binding did not finish within the wall-time budget")


def loop_refused(reason: str) -> SandboxError:
    return SandboxError("R-ASYNC-LOOP", f"an async binding cannot be awaited here: {reason}")


class BindingAwaitCancelled(Exception):
    """The awaited work was cancelled by someone other than the run; the binding failed (the
    runtime reports ``R-BINDING-FAILED``; this text never reaches the result)."""


async def await_value(value: object) -> object:
    """Await any awaitable (coroutine, Future, object with ``__await__``) on the running loop.
    An ``asyncio.Future`` of another loop is bridged without blocking either loop."""
    if isinstance(value, concurrent.futures.Future):
        return await asyncio.wrap_future(value)
    if isinstance(value, asyncio.Future) and value.get_loop() is not asyncio.get_running_loop():
        return await _from_other_loop(value)
    awaitable: Awaitable[Any] = value  # type: ignore[assignment]  # is_awaitable() held
    return await awaitable


async def _from_other_loop(future: asyncio.Future[Any]) -> object:
    """Wait for ``future`` (owned by another, running loop) through a done callback registered on
    that loop; cancelling the wait cancels ``future`` on its own loop."""
    here = asyncio.get_running_loop()
    mirror: asyncio.Future[Any] = here.create_future()

    def copy(done: asyncio.Future[Any]) -> None:
        def settle() -> None:
            if mirror.done():
                return
            if done.cancelled():
                mirror.cancel()
            elif done.exception() is not None:
                mirror.set_exception(done.exception())  # type: ignore[arg-type]
            else:
                mirror.set_result(done.result())

        here.call_soon_threadsafe(settle)

    owner = future.get_loop()
    owner.call_soon_threadsafe(future.add_done_callback, copy)
    try:
        return await mirror
    except asyncio.CancelledError:
        owner.call_soon_threadsafe(future.cancel)
        raise


class LoopAwaiter:
    """The synchronous ``execute``'s awaiter: awaitables run on ``loop`` (running in another
    thread); the calling thread blocks on a ``concurrent.futures.Future`` with a timeout."""

    __slots__ = ("loop",)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def __call__(self, value: object, timeout_seconds: float) -> object:
        if isinstance(value, concurrent.futures.Future):
            return _wait(value, timeout_seconds)
        loop = value.get_loop() if isinstance(value, asyncio.Future) else self.loop
        refusal = _unusable(loop)
        if refusal is not None:
            discard(value)
            raise loop_refused(refusal)
        return _wait(asyncio.run_coroutine_threadsafe(await_value(value), loop), timeout_seconds)


def _unusable(loop: asyncio.AbstractEventLoop) -> str | None:
    """Why waiting here for work on ``loop`` could never finish (None when it can)."""
    if loop.is_closed() or not loop.is_running():
        return "the host's event loop is not running"
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        return None
    if running is loop:
        return "execute() was called on the event loop's own thread; use execute_async()"
    return None


def _wait(future: concurrent.futures.Future[Any], timeout_seconds: float) -> object:
    try:
        return future.result(timeout=max(0.0, timeout_seconds))
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise binding_timeout() from None
    except concurrent.futures.CancelledError:
        raise BindingAwaitCancelled() from None


# --- the shared loop ----------------------------------------------------------------------------
# One daemon thread running one event loop, started on first need, for synchronous hosts that did
# not give a loop of their own. One per process (a forked child starts its own when it needs one).

_SHARED_LOCK = threading.Lock()
_shared: asyncio.AbstractEventLoop | None = None


def shared_loop() -> asyncio.AbstractEventLoop:
    """The process's shared awaiting loop (started, and running, when this returns)."""
    global _shared
    with _SHARED_LOCK:
        loop = _shared
        if loop is not None and loop.is_running():
            return loop
        loop = asyncio.new_event_loop()
        started = threading.Event()
        loop.call_soon(started.set)
        threading.Thread(target=loop.run_forever, name="dotboxd-async-loop", daemon=True).start()
        started.wait()
        _shared = loop
        return loop


def _forget_shared_loop() -> None:
    global _shared
    _shared = None  # its thread does not exist in a forked child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_shared_loop)


__all__ = [
    "Awaiter",
    "BindingAwaitCancelled",
    "LoopAwaiter",
    "await_value",
    "binding_timeout",
    "discard",
    "is_awaitable",
    "loop_refused",
    "resolve",
    "shared_loop",
]
