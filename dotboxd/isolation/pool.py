"""Long-lived kernel workers behind the OS boundary, and a bounded pool of them.

``SandboxHost.execute(..., isolation="worker")`` runs a plan's kernel in a worker process built by
the same bootstrap and profile as ``run_python`` (strict by default): the bootstrap sets up every
layer, reports them, then - in kernel mode - imports dotboxd from read-only binds of the host's
package directories and serves runs (``kernel_worker``) over its stdin and result pipe until the
host closes stdin. Starting one costs a few hundred milliseconds (namespaces, a tmpfs root, the
imports), so a ``WorkerPool`` keeps started workers and reuses them:

* at most ``size`` workers exist at once; ``acquire`` waits (up to its timeout) for a free one;
* a worker is retired after ``recycle_after`` runs, after any run that did not end in a clean
  ``done`` frame (a failure of the protocol, a timeout, a crash: it is never trusted again), and
  when the CPU time it reports nears its lifetime CPU rlimit;
* ``close`` (also on ``with`` exit and at interpreter exit) kills every worker's process group
  until nothing of it is left.

A worker that cannot start with every required layer fails closed: ``IsolationUnavailable`` names
the missing layers, exactly as ``run_python`` does, and nothing runs.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import importlib.util
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from dotboxd.core.diagnostics import reject
from dotboxd.isolation import frames
from dotboxd.isolation.profile import Limits, Profile, strict
from dotboxd.isolation.worker import (
    IsolationUnavailable,
    _binds,
    _command,
    _kill_until_gone,
    launch_config,
    probe,
)

KERNEL_LIMITS = Limits(timeout_ms=600_000, memory_mb=1024, open_files=32, file_bytes=0, result_bytes=1 << 20)
"""A kernel worker's lifetime limits: ``timeout_ms`` is its CPU rlimit over all its runs (the pool
retires it at half), ``memory_mb`` its address space (the interpreter, dotboxd and a run's values;
the kernel's own allocation is metered by the policy long before this). Each run's wall time is
the policy's, enforced by the worker's meter and backed by the host's watchdog."""

STACK_BYTES = 256 << 20
"""The worker's main-thread stack: a deep kernel recurses there (seccomp allows no helper thread)."""

RECURSION_LIMIT = 60_000
"""Python frames the worker allows: a run's call chain at ``maxCallDepth`` fits in place."""

STARTUP_MS = 20_000
"""How long a worker may take to report its layers and be ready (imports included)."""

PREPARE_MS = 30_000
"""How long a worker may take to check a plan it has not seen (import, validation, hashes)."""

FRAME_CAP = frames.MAX_FRAME
"""The largest frame a kernel worker may send (a binding call or a result: 1 MiB)."""

_PACKAGES = ("dotboxd", "dotboxd.grammar", "dotboxd.validator", "dotboxd.runtime", "lark", "z3", "immutables")


class WorkerLost(Exception):
    """The worker stopped answering properly: ``code`` is the R-WORKER-* code to report."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def kernel_packages() -> dict[str, str]:
    """The directory of each package a kernel worker imports (those installed here)."""
    found: dict[str, str] = {}
    for name in _PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.submodule_search_locations:
            continue
        # the folder that really holds the package's __init__: an editable install's link tree (or
        # ``extend_path``) may list a folder of symlinks first, whose targets a worker cannot see
        if spec.origin and os.path.basename(spec.origin) == "__init__.py":
            found[name] = os.path.dirname(os.path.realpath(spec.origin))
        else:
            found[name] = os.path.realpath(next(iter(spec.submodule_search_locations)))
    return found


def _outermost(paths: list[str]) -> list[str]:
    """``paths`` without those inside another one (a bind of the outer one holds them)."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(path == k or path.startswith(k + os.sep) for k in kept):
            kept.append(path)
    return kept


class KernelWorker:
    """One started kernel worker: its process, its pipe ends and the layers really in force."""

    def __init__(self, profile: Profile) -> None:
        limits = profile.limits.check()
        missing = {k: v for k, v in probe(profile).items() if k in profile.required}
        if missing:
            raise IsolationUnavailable(missing)
        self.profile = profile
        self.runs = 0
        self.plans: OrderedDict[str, None] = OrderedDict()
        """The plans this worker checked, most recently used last (it keeps the same LRU)."""
        self.cpu_ms = 0
        self.cpu_budget_ms = -(-limits.timeout_ms // 1000) * 1000
        self._workdir = tempfile.mkdtemp(prefix="dotboxd-kernel-worker-")
        new_root = os.path.join(self._workdir, "root")
        os.mkdir(new_root)
        self._read_fd, write_fd = os.pipe()
        status_read, status_write = os.pipe()
        argv, namespaces = _command(profile, write_fd, status_write)
        packages = kernel_packages()
        binds = _outermost(_binds() + list(packages.values()))
        config = launch_config(profile, limits, namespaces, new_root, binds, "", None, stackBytes=STACK_BYTES)
        config["kernel"] = {"packages": packages, "recursionLimit": RECURSION_LIMIT}
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={},
                cwd=self._workdir,
                start_new_session=True,
                pass_fds=(write_fd, status_write),
            )
        except OSError as error:
            for fd in (self._read_fd, status_read):
                os.close(fd)
            shutil.rmtree(self._workdir, ignore_errors=True)
            raise IsolationUnavailable(
                {"interpreter": f"cannot start the worker: {error.strerror}"}
            ) from error
        finally:
            os.close(write_fd)
            os.close(status_write)
        os.close(status_read)  # the supervisor's exit report: a pooled worker's end says nothing new
        assert self.proc.stdin is not None
        self._stdin_fd = self.proc.stdin.fileno()
        self._selector = selectors.DefaultSelector()
        os.set_blocking(self._read_fd, False)
        self._selector.register(self._read_fd, selectors.EVENT_READ)
        self._buffer = bytearray()
        self.closed = False
        try:
            self.send(config)
            self.layers = self._handshake(profile, namespaces)
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _handshake(self, profile: Profile, namespaces: list[str]) -> tuple[str, ...]:
        try:
            header = self.receive(time.monotonic() + STARTUP_MS / 1000)
        except WorkerLost as lost:
            required_ns = [ns for ns in namespaces if ns in profile.required]
            reason = f"the worker did not start ({lost.message})"
            raise IsolationUnavailable(
                {ns: reason for ns in required_ns} or {"interpreter": reason}
            ) from None
        layers = tuple(str(x) for x in header.get("layers", []))
        missing = {str(k): str(v) for k, v in dict(header.get("missing", {})).items()}
        unmet = {k: v for k, v in missing.items() if k in profile.required}
        if unmet:
            raise IsolationUnavailable(unmet)
        try:
            up = self.receive(time.monotonic() + STARTUP_MS / 1000)
        except WorkerLost as lost:
            raise IsolationUnavailable(
                {"interpreter": f"the kernel worker did not start ({lost.message})"}
            ) from None
        if up != {"t": "up"}:
            raise IsolationUnavailable({"interpreter": "the kernel worker did not start (no 'up' frame)"})
        return (*layers, "watchdog")

    def send(self, frame: dict[str, Any]) -> None:
        """Write one frame to the worker (WorkerLost if it is gone)."""
        try:
            data = memoryview(frames.encode(frame, FRAME_CAP))
            while data:
                data = data[os.write(self._stdin_fd, data) :]
        except frames.FrameError as error:
            raise WorkerLost("R-WORKER-RESULT", f"a frame for the worker is too big: {error}") from None
        except OSError as error:
            if error.errno in (errno.EPIPE, errno.EBADF):
                raise WorkerLost("R-WORKER-KILLED", "the worker died") from None
            raise

    def receive(self, deadline: float) -> dict[str, Any]:
        """The worker's next frame, waited for until ``deadline`` (monotonic): WorkerLost with
        ``R-WORKER-TIMEOUT`` past it, ``R-WORKER-KILLED`` at end of file, ``R-WORKER-RESULT`` for
        a frame that is malformed or over the cap (its length is refused before it is read)."""
        while True:
            if len(self._buffer) >= frames.HEADER.size:
                (length,) = frames.HEADER.unpack_from(self._buffer)
                if length > FRAME_CAP:
                    raise WorkerLost(
                        "R-WORKER-RESULT", f"the worker sent a {length}-byte frame, over the cap"
                    )
                end = frames.HEADER.size + length
                if len(self._buffer) >= end:
                    try:
                        frame, _ = frames.decode_one(bytes(self._buffer[:end]), 0, FRAME_CAP)
                    except frames.FrameError as error:
                        raise WorkerLost(
                            "R-WORKER-RESULT", f"malformed frame from the worker: {error}"
                        ) from None
                    del self._buffer[:end]
                    return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerLost("R-WORKER-TIMEOUT", "the watchdog stopped the worker at its wall-time limit")
            if not self._selector.select(remaining):
                continue
            try:
                chunk = os.read(self._read_fd, 1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            if not chunk:
                raise WorkerLost("R-WORKER-KILLED", "the worker died mid-run")
            self._buffer.extend(chunk)

    def close(self) -> None:
        """Kill the worker's whole process group until none of it is left; idempotent."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        _kill_until_gone(self.proc.pid)
        with contextlib.suppress(ChildProcessError, OSError):
            self.proc.wait(timeout=2)
        self._selector.close()
        with contextlib.suppress(OSError):
            os.close(self._read_fd)
        shutil.rmtree(self._workdir, ignore_errors=True)


class WorkerPool:
    """Started kernel workers, reused across runs (see the module docstring)."""

    def __init__(
        self,
        profile: Profile | None = None,
        *,
        size: int = 2,
        recycle_after: int = 200,
        prestart: int = 0,
    ) -> None:
        for name, value, low in (
            ("size", size, 1),
            ("recycle_after", recycle_after, 1),
            ("prestart", prestart, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise reject("E-ISOLATION-PROFILE", f"{name} must be an integer >= {low}, got {value!r}")
        chosen = profile or strict()
        if chosen.limits == Limits():  # the run_python defaults: a kernel worker lives longer
            chosen = replace(chosen, limits=KERNEL_LIMITS)
        self.profile = chosen
        self.size = size
        self.recycle_after = recycle_after
        self._idle: list[KernelWorker] = []
        self._busy: set[KernelWorker] = set()
        self._starting = 0
        self._lock = threading.Condition()
        self._closed = False
        self.started = 0
        self.retired = 0
        _LIVE.add(self)
        for _ in range(min(prestart, size)):
            self.release(self._start(), healthy=True, count=False)

    def _start(self) -> KernelWorker:
        with self._lock:
            self._starting += 1
        try:
            worker = KernelWorker(self.profile)
        finally:
            with self._lock:
                self._starting -= 1
                self._lock.notify_all()
        with self._lock:
            self.started += 1
            self._busy.add(worker)
        return worker

    def acquire(self, timeout_s: float) -> KernelWorker:
        """A started worker for one run (WorkerLost ``R-WORKER-TIMEOUT`` if none frees up in time;
        IsolationUnavailable if a new one cannot start with its required layers)."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while True:
                if self._closed:
                    raise WorkerLost("R-WORKER-FAILED", "the worker pool is closed")
                if self._idle:
                    worker = self._idle.pop()
                    self._busy.add(worker)
                    return worker
                if len(self._busy) + self._starting < self.size:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WorkerLost("R-WORKER-TIMEOUT", "no isolated worker became free in time")
                self._lock.wait(remaining)
        return self._start()

    def release(self, worker: KernelWorker, *, healthy: bool, count: bool = True) -> None:
        """Give ``worker`` back after a run: kept when the run ended cleanly and it has runs and
        CPU time left, retired (killed) otherwise."""
        if count:
            worker.runs += 1
        keep = (
            healthy
            and not worker.closed
            and worker.runs < self.recycle_after
            and worker.cpu_ms * 2 < worker.cpu_budget_ms
        )
        with self._lock:
            self._busy.discard(worker)
            if keep and not self._closed:
                self._idle.append(worker)
                self._lock.notify_all()
                return
            self.retired += 1
            self._lock.notify_all()
        worker.close()

    @contextlib.contextmanager
    def worker(self, timeout_s: float) -> Iterator[KernelWorker]:
        """``acquire`` and ``release``: a run that raises retires its worker."""
        worker = self.acquire(timeout_s)
        healthy = False
        try:
            yield worker
            healthy = True
        finally:
            self.release(worker, healthy=healthy)

    def pids(self) -> list[int]:
        """The process ids of every live worker (idle or busy)."""
        with self._lock:
            return [w.pid for w in (*self._idle, *self._busy) if not w.closed]

    def close(self) -> None:
        """Kill every worker, idle or busy (a busy one's run then fails with R-WORKER-KILLED)."""
        with self._lock:
            self._closed = True
            workers = [*self._idle, *self._busy]
            self._idle.clear()
            self._lock.notify_all()
        for worker in workers:
            worker.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_LIVE: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """No worker outlives the host process."""
    for pool in list(_LIVE):
        pool.close()


__all__ = ["KERNEL_LIMITS", "KernelWorker", "WorkerLost", "WorkerPool", "kernel_packages"]
