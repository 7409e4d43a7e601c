"""Run a third party's Python in a worker process behind the OS boundary (posture 3).

The host side: check that the profile's required layers can exist here (else ``IsolationUnavailable``
before anything runs), start ``unshare`` -> ``python -I -S bootstrap.py`` in a new session with an
empty environment and a fresh empty working directory, hand it the job over stdin, and read at most
two length-prefixed JSON frames back over a pipe: the layers frame (written by the bootstrap before
the job's code runs, so trusted) and the result frame (written by code the job controls, so anything
malformed or oversized is HostFailure ``R-WORKER-RESULT``). A watchdog kills the whole process group
at the wall-time limit, and the group is killed again after every job, so no process survives it.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import functools
import importlib.util
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dotboxd.core.codes import category_of
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError
from dotboxd.isolation import frames
from dotboxd.isolation.profile import Limits, Profile, strict

HERE = Path(__file__).resolve().parent
BOOTSTRAP = HERE / "bootstrap.py"
FRAMES = HERE / "frames.py"
STDERR_CAP = 64 << 10
NAMESPACE_LAYERS = ("user-ns", "net-ns", "mount-ns", "pid-ns")


class IsolationUnavailable(DotBoxDError):
    """A layer the profile requires cannot be set up here; nothing ran. ``layers`` names them."""

    def __init__(self, layers: dict[str, str]) -> None:
        self.layers = dict(layers)
        names = ", ".join(sorted(layers))
        why = "; ".join(f"{k}: {v}" for k, v in sorted(layers.items()))
        super().__init__(
            [
                Diagnostic(
                    "E-ISOLATION-UNAVAILABLE",
                    f"required isolation layer(s) unavailable: {names} ({why})"[:600],
                    evidence={"layers": sorted(layers)},
                    hint="install what is missing, or lower the profile explicitly (best-effort, "
                    "Profile.lowered) and accept the layers listed in the result",
                )
            ]
        )


@dataclass(frozen=True)
class WorkerUsage:
    cpu_ms: int
    wall_ms: int
    max_rss_kb: int


@dataclass(frozen=True)
class WorkerError:
    code: str
    message: str

    @property
    def category(self) -> str:
        return category_of(self.code)


@dataclass(frozen=True)
class WorkerResult:
    ok: bool
    value: Any
    error: WorkerError | None
    layers: tuple[str, ...]
    usage: WorkerUsage
    missing: dict[str, str] = field(default_factory=dict)
    pid: int = 0
    """The worker's process id (and process group) as the host saw it; gone when this returns."""

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "value": self.value,
            "error": None
            if self.error is None
            else {"code": self.error.code, "category": self.error.category, "message": self.error.message},
            "layers": list(self.layers),
            "usage": {
                "cpuMs": self.usage.cpu_ms,
                "wallMs": self.usage.wall_ms,
                "maxRssKb": self.usage.max_rss_kb,
            },
        }


def probe(profile: Profile) -> dict[str, str]:
    """The attempted layers this machine cannot provide, each with the reason (checked before a run;
    the bootstrap re-checks each layer as it sets it up)."""
    missing: dict[str, str] = {}
    if set(profile.attempt) & set(NAMESPACE_LAYERS) and shutil.which("unshare") is None:
        for ns in NAMESPACE_LAYERS:
            if ns in profile.attempt:
                missing[ns] = "util-linux 'unshare' is not installed"
    if "seccomp" in profile.attempt:
        if not _seccomp_module_path():
            missing["seccomp"] = "the pyseccomp package is not installed"
        elif _libraries()["seccomp"] is None:
            missing["seccomp"] = "libseccomp (Debian libseccomp2) is not installed"
    if sys.platform != "linux":
        missing.update({layer: "needs Linux" for layer in profile.attempt if layer not in ("interpreter",)})
    return missing


@functools.cache
def _libraries() -> dict[str, str | None]:
    """The shared-library names pyseccomp asks ``ctypes.util.find_library`` for, resolved once per
    host process (each lookup spawns ldconfig, which the worker should not have to do)."""
    return {name: ctypes.util.find_library(name) for name in ("c", "seccomp")}


def _seccomp_module_path() -> str:
    """Where the pyseccomp module file is ('' when it is not installed); the bootstrap loads it by
    path because ``python -I -S`` does not see the venv's site-packages."""
    spec = importlib.util.find_spec("pyseccomp")
    return spec.origin if spec is not None and spec.origin else ""


def _command(profile: Profile, result_fd: int, status_fd: int) -> tuple[list[str], list[str]]:
    namespaces = [ns for ns in NAMESPACE_LAYERS if ns in profile.attempt]
    argv: list[str] = []
    if namespaces and shutil.which("unshare") is not None:
        argv = [str(shutil.which("unshare"))]
        if "user-ns" in namespaces:
            argv += ["--user", "--map-root-user"]
        if "net-ns" in namespaces:
            argv.append("--net")
        if "mount-ns" in namespaces:
            argv.append("--mount")
        if "pid-ns" in namespaces:
            argv += ["--pid", "--fork", "--kill-child"]
        argv.append("--")
    else:
        namespaces = []
    argv += [sys.executable, "-I", "-S", str(BOOTSTRAP), str(FRAMES), str(result_fd), str(status_fd)]
    return argv, namespaces


def _binds() -> list[str]:
    """Read-only paths the worker's root holds: the standard library and shared libraries."""
    # the base interpreter's stdlib (lib-dynload inside it), never a venv's site-packages
    paths = {os.path.dirname(os.__file__), "/usr/lib", "/usr/lib64"}
    return sorted(p for p in paths if os.path.isdir(p))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group or session ``pgid``, read from /proc."""
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z" and pgid in (int(fields[2]), int(fields[3])):
            found.append(int(entry.name))
    return found


def _kill_until_gone(pgid: int, budget_s: float = 2.0) -> None:
    """SIGKILL the worker's group until no live member is left (a killed process takes a moment to
    die, and one reparented away from the worker is no longer reaped by it)."""
    deadline = time.monotonic() + budget_s
    while True:
        _kill_group(pgid)
        if not group_members(pgid) or time.monotonic() >= deadline:
            return
        time.sleep(0.002)


def launch_config(
    profile: Profile,
    limits: Limits,
    namespaces: Any,
    new_root: str,
    binds: list[str],
    source: str,
    job_input: Any,
    **extra_limits: int,
) -> dict[str, Any]:
    """What the launcher is told about one worker (one request frame): the layers ``profile``
    attempts and requires, the namespaces and seccomp filter, the new root with its read-only binds,
    and the rlimits from ``limits`` (the checked ``profile.limits``; plus ``extra_limits``, e.g. a
    pool worker's stack). One definition for one-shot jobs and pooled kernel workers, so both get
    the same layers."""
    return {
        "attempt": sorted(profile.attempt),
        "required": sorted(profile.required),
        "namespaces": namespaces,
        "seccompModule": _seccomp_module_path(),
        "libraries": _libraries() if "seccomp" in profile.attempt else {},
        "newRoot": new_root,
        "binds": binds,
        "limits": {
            "cpuSeconds": -(-limits.timeout_ms // 1000),
            "memoryBytes": limits.memory_mb << 20,
            "openFiles": limits.open_files,
            "fileBytes": limits.file_bytes,
            **extra_limits,
        },
        "resultCap": limits.result_bytes,
        "source": source,
        "input": job_input,
    }


def run_python(
    source: str,
    job_input: Any = None,
    *,
    profile: Profile | None = None,
) -> WorkerResult:
    """Run ``source`` (a module defining ``main(input)``, or setting ``result``) in an isolated worker
    and return its JSON value. Raises IsolationUnavailable when a required layer is missing; every
    other outcome (the job raised, was killed, timed out, answered garbage) is a failed result."""
    profile = profile or strict()
    limits = profile.limits.check()
    missing = {k: v for k, v in probe(profile).items() if k in profile.required}
    if missing:
        raise IsolationUnavailable(missing)
    workdir = tempfile.mkdtemp(prefix="dotboxd-worker-")
    new_root = os.path.join(workdir, "root")
    os.mkdir(new_root)
    read_fd, write_fd = os.pipe()
    status_read, status_write = os.pipe()
    argv, namespaces = _command(profile, write_fd, status_write)
    config = launch_config(profile, limits, namespaces, new_root, _binds(), source, job_input)
    try:
        request = frames.encode(config)
    except (frames.FrameError, TypeError, ValueError) as error:
        for fd in (read_fd, write_fd, status_read, status_write):
            os.close(fd)
        shutil.rmtree(workdir, ignore_errors=True)
        raise DotBoxDError(
            [Diagnostic("E-ISOLATION-PROFILE", f"the job does not fit in one request frame: {error}"[:300])]
        ) from error
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={},
            cwd=workdir,
            start_new_session=True,
            pass_fds=(write_fd, status_write),
        )
    except OSError as error:
        os.close(read_fd)
        os.close(status_read)
        shutil.rmtree(workdir, ignore_errors=True)
        raise IsolationUnavailable({"interpreter": f"cannot start the worker: {error.strerror}"}) from error
    finally:
        os.close(write_fd)
        os.close(status_write)
    try:
        data, stderr, supervisor, timed_out, overflow = _exchange(
            proc, request, read_fd, status_read, started, limits.timeout_ms, limits
        )
        status, rusage = _reap(proc, started, limits.timeout_ms)
        timed_out = timed_out or status is None
    finally:
        _kill_until_gone(proc.pid)
        if proc.returncode is None:
            with contextlib.suppress(ChildProcessError):
                _, raw_status, rusage = os.wait4(proc.pid, 0)
                status = raw_status
        os.close(read_fd)
        os.close(status_read)
        for stream in (proc.stdin, proc.stderr):
            if stream is not None:
                stream.close()
        shutil.rmtree(workdir, ignore_errors=True)
    wall_ms = int((time.monotonic() - started) * 1000)
    usage = WorkerUsage(
        int((rusage.ru_utime + rusage.ru_stime) * 1000) if rusage else 0,
        wall_ms,
        int(rusage.ru_maxrss) if rusage else 0,
    )
    ended = _supervisor_status(supervisor)
    if ended is not None:
        status = ended
    result = _interpret(profile, data, stderr, timed_out, overflow, status, usage, namespaces)
    return replace(result, pid=proc.pid)


def _supervisor_status(report: bytes) -> int | None:
    """The job process's wait status as the namespace's PID 1 reported it (None without a report:
    no PID namespace, or the supervisor was killed by the watchdog)."""
    try:
        frame, _ = frames.decode_one(report, 0, 256)
    except frames.FrameError:
        return None
    sig, code = frame.get("signal"), frame.get("exit")
    if isinstance(sig, int) and not isinstance(sig, bool) and 0 < sig < 128:
        return sig  # a wait status whose low 7 bits are the signal: WIFSIGNALED
    if isinstance(code, int) and not isinstance(code, bool) and 0 <= code < 256:
        return code << 8
    return None


def _exchange(
    proc: subprocess.Popen[bytes],
    request: bytes,
    read_fd: int,
    status_fd: int,
    started: float,
    timeout_ms: int,
    limits: Limits,
) -> tuple[bytes, bytes, bytes, bool, bool]:
    """Send the request and read the result pipe, the supervisor's status pipe and stderr (all capped) until both close or the
    watchdog fires; every pipe is non-blocking and polled, so no step can outlast the deadline (a
    worker that never reads its request cannot stall the host). Returns (result bytes, stderr bytes,
    supervisor's status report, timed out, result over its cap)."""
    assert proc.stdin is not None and proc.stderr is not None
    cap = 2 * frames.HEADER.size + frames.MAX_FRAME + limits.result_bytes
    data, err, supervisor = bytearray(), bytearray(), bytearray()
    pending = memoryview(request)
    stdin_fd = proc.stdin.fileno()
    deadline = started + timeout_ms / 1000
    with selectors.DefaultSelector() as selector:
        for fd in (stdin_fd, read_fd, status_fd, proc.stderr.fileno()):
            os.set_blocking(fd, False)
        selector.register(status_fd, selectors.EVENT_READ, supervisor)
        selector.register(stdin_fd, selectors.EVENT_WRITE)
        selector.register(read_fd, selectors.EVENT_READ, data)
        selector.register(proc.stderr.fileno(), selectors.EVENT_READ, err)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill_group(proc.pid)
                return bytes(data), bytes(err), bytes(supervisor), True, False
            for key, _ in selector.select(remaining):
                fd = int(key.fd)
                if fd == stdin_fd:
                    try:
                        pending = pending[os.write(fd, pending) :]
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:  # the worker closed its end: nothing more to send
                        pending = pending[len(pending) :]
                    if not pending:
                        selector.unregister(fd)
                        proc.stdin.close()
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except (BlockingIOError, InterruptedError):
                    continue
                if not chunk:
                    selector.unregister(fd)
                    continue
                sink: bytearray = key.data
                if fd == read_fd and len(sink) + len(chunk) > cap:
                    _kill_group(proc.pid)
                    return bytes(data), bytes(err), bytes(supervisor), False, True
                if fd != read_fd and len(sink) >= (256 if fd == status_fd else STDERR_CAP):
                    continue
                sink.extend(chunk)
    return bytes(data), bytes(err), bytes(supervisor), False, False


def _reap(proc: subprocess.Popen[bytes], started: float, timeout_ms: int) -> tuple[int | None, Any]:
    """Wait for the worker until the deadline (the watchdog kills it then): (wait status, rusage)."""
    deadline = started + timeout_ms / 1000
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return status, rusage
        if time.monotonic() >= deadline:
            _kill_group(proc.pid)
            _, status, rusage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return None, rusage
        time.sleep(0.005)


def _interpret(
    profile: Profile,
    data: bytes,
    stderr: bytes,
    timed_out: bool,
    overflow: bool,
    status: int | None,
    usage: WorkerUsage,
    namespaces: Sequence[str],
) -> WorkerResult:
    layers: tuple[str, ...] = ()
    try:
        header, offset = frames.decode_one(data)
        layers = (*tuple(str(x) for x in header.get("layers", [])), "watchdog")
        missing = {str(k): str(v) for k, v in dict(header.get("missing", {})).items()}
    except (frames.FrameError, TypeError, ValueError):
        # no layers frame: the bootstrap never reached the job (e.g. unshare could not make a namespace)
        required_ns = [ns for ns in namespaces if ns in profile.required]
        why = stderr.decode("utf-8", "replace").strip().splitlines()
        if timed_out:
            return _failed(
                "R-WORKER-TIMEOUT", "the watchdog killed the worker before it started", layers, usage
            )
        if required_ns:
            raise IsolationUnavailable(
                {ns: (why[-1] if why else "unshare failed")[:200] for ns in required_ns}
            ) from None
        return _failed("R-WORKER-FAILED", "the worker exited before it reported its layers", layers, usage)
    unmet = {k: v for k, v in missing.items() if k in profile.required}
    if unmet:
        raise IsolationUnavailable(unmet)
    if timed_out:
        return _failed(
            "R-WORKER-TIMEOUT", "the watchdog killed the worker at its wall-time limit", layers, usage
        )
    if overflow:
        return _failed("R-WORKER-RESULT", "the worker's answer is over its size cap", layers, usage)
    if offset == len(data):
        if status is not None and os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            return _failed("R-WORKER-KILLED", f"the worker was killed by {name}", layers, usage)
        code = os.waitstatus_to_exitcode(status) if status is not None else -1
        return _failed("R-WORKER-FAILED", f"the worker exited ({code}) without a result", layers, usage)
    try:
        result, end = frames.decode_one(data, offset, profile.limits.result_bytes)
        if end != len(data) or set(result) not in ({"ok", "value"}, {"ok", "error"}):
            raise frames.FrameError("unexpected frame shape")
    except frames.FrameError as error:
        return _failed("R-WORKER-RESULT", f"malformed result from the worker: {error}", layers, usage)
    if result["ok"] is True and "value" in result:
        return WorkerResult(True, result["value"], None, layers, usage, missing)
    message = result.get("error")
    text = message if isinstance(message, str) else "the job failed"
    return _failed("R-WORKER-FAILED", text[:500], layers, usage)


def _failed(code: str, message: str, layers: tuple[str, ...], usage: WorkerUsage) -> WorkerResult:
    return WorkerResult(False, None, WorkerError(code, message), layers, usage)
