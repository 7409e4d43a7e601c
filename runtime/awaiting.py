"""What to do when a binding hands back an awaitable instead of a value (spec/semantics.md section 7).

* A result that is already complete (a done ``Future``) is fine with or without the async grant.
* Without ``dotboxd.runtime.async``, or from a binding not declared async, anything still pending
  fails *at once* with BindingFailure: it
  is never awaited, blocked on or pumped (a coroutine is closed unstarted, so it cannot run later).
* With the grant, the awaitable is driven to completion in a private event loop on a helper
  thread, bounded by the run's remaining wall time; when that runs out the run reports Timeout and
  the task is cancelled (Python cannot pre-empt it harder; hard isolation needs a worker process).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
import time
from collections.abc import Awaitable, Coroutine
from typing import Any, cast

from dotboxd.runtime.errors import SandboxError

_POLL_SECONDS = 0.001


def is_awaitable(value: object) -> bool:
    return inspect.isawaitable(value) or isinstance(value, concurrent.futures.Future)


def _done_result(value: object) -> tuple[bool, object]:
    """(True, result) for an already-completed future; (False, None) otherwise."""
    done = getattr(value, "done", None)
    if isinstance(value, concurrent.futures.Future | asyncio.Future) and callable(done) and done():
        return True, value.result()
    return False, None


def resolve(value: object, async_enabled: bool, timeout_seconds: float) -> object:
    """The value behind ``value`` (which ``is_awaitable``), per the rules above."""
    finished, result = _done_result(value)
    if finished:
        return result
    if not async_enabled:
        if inspect.iscoroutine(value):
            value.close()
        raise SandboxError(
            "R-BINDING-PENDING", "binding returned a pending result; async capability is not granted"
        )
    if isinstance(value, concurrent.futures.Future):
        try:
            return value.result(timeout=timeout_seconds)
        except concurrent.futures.TimeoutError:
            value.cancel()
            raise _timeout() from None
    if isinstance(value, asyncio.Future):
        return _poll(value, timeout_seconds)
    # ``value`` passed is_awaitable() and is neither kind of Future, so it is a plain awaitable.
    return _run_in_private_loop(cast(Awaitable[Any], value), timeout_seconds)


def _timeout() -> SandboxError:
    return SandboxError("R-BINDING-TIMEOUT", "binding did not finish within the wall-time budget")


def _poll(future: asyncio.Future[Any], timeout_seconds: float) -> object:
    """A future owned by some other (running) loop: wait for it without touching that loop."""
    deadline = time.monotonic() + timeout_seconds
    while not future.done():
        if time.monotonic() >= deadline:
            future.get_loop().call_soon_threadsafe(future.cancel)
            raise _timeout()
        time.sleep(_POLL_SECONDS)
    return future.result()


def _run_in_private_loop(awaitable: Awaitable[Any], timeout_seconds: float) -> object:
    box: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> Any:
        box["task"] = asyncio.current_task()
        box["loop"] = asyncio.get_running_loop()
        ready.set()
        return await awaitable

    def runner() -> None:
        try:
            box["result"] = asyncio.run(_as_coroutine(main()))
        except BaseException as exc:
            box["error"] = exc
        finally:
            ready.set()

    thread = threading.Thread(target=runner, name="dotboxd-binding-await", daemon=True)
    thread.start()
    thread.join(timeout_seconds)
    if thread.is_alive():
        loop = box.get("loop")
        task = box.get("task")
        if loop is not None and task is not None:
            loop.call_soon_threadsafe(task.cancel)
        raise _timeout()
    if "error" in box:
        raise box["error"]
    return box.get("result")


def _as_coroutine(coro: Coroutine[Any, Any, Any]) -> Coroutine[Any, Any, Any]:
    return coro
