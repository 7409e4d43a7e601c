"""The worker's first code: build the OS boundary around itself, report it, then run the job.

Run as ``python -I -S bootstrap.py FRAMES_PY RESULT_FD STATUS_FD`` (isolated mode, no site: no PYTHON* variables, no user
or site packages) with an empty environment, inside fresh user/net/mount/PID namespaces made by
``unshare``. Stdlib only: ``dotboxd`` is deliberately not importable here. It reads one config frame
from stdin; with a PID namespace it forks, and the parent (PID 1) only supervises (see
``_supervise``); the job process then builds the layers, in this order (each step needs the privilege the next one gives up):

1. mount-ns: a tmpfs root holding only read-only binds of the interpreter's files and an empty,
   writable ``/job``; ``pivot_root`` into it, so the host's files, ``/proc`` and ``/sys`` are gone;
2. uid-drop: when the host runs as real root, become ``nobody`` (uid/gid 65534, no groups);
3. rlimits: CPU seconds, address space, open files, processes, file size, core size;
4. no-new-privs: ``PR_SET_NO_NEW_PRIVS``;
5. seccomp: a libseccomp filter (pyseccomp) that fails network, process creation, exec, ptrace,
   mount, namespace, kernel-module and cross-process syscalls with EPERM.

Only then does it write the layers frame - before any job code runs, so the host can trust it - and
run the job. Everything after that point (the result frame included) is written by code the job
controls, and the host treats it as untrusted. A required layer that cannot be set up is reported in
the layers frame as missing and the job never runs (fail closed).

Kernel mode (a config with ``kernel``): instead of a job, the worker then imports dotboxd from the
read-only package directories the host bound into its root and serves kernel runs over stdin and
the result pipe until the host closes stdin (``dotboxd.isolation.kernel_worker``). The config frame is
read exactly (header, then body), since a kernel worker's stdin stays open.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import importlib
import importlib.util
import os
import resource
import sys
from types import ModuleType
from typing import Any

RESULT_FD = 3  # replaced by argv[2]: the inherited write end of the result pipe
NOBODY = 65534
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = (
    1,
    2,
    4,
    32,
    4096,
    16384,
    1 << 18,
)
_MNT_DETACH = 2
_PR_SET_NO_NEW_PRIVS = 38
_SYS_PIVOT_ROOT = 155  # x86_64

DENIED_SYSCALLS = (
    # network: no socket of any family can be created, so no connect/bind/listen is reachable
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    # process creation and replacement (clone3 fails with ENOSYS so libc does not retry with it)
    "fork",
    "vfork",
    "clone",
    "execve",
    "execveat",
    # other processes: tracing, memory, signals
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kill",
    "tkill",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    # filesystem and namespace changes
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "mknod",
    "mknodat",
    "fsopen",
    "fsmount",
    "open_tree",
    "move_mount",
    # the kernel itself
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "iopl",
    "ioperm",
    "acct",
    "quotactl",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "setsid",
    "setpgid",
    "io_uring_setup",
    # classic escape and host-wide knobs
    "open_by_handle_at",
    "name_to_handle_at",
    "syslog",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "vhangup",
    "fanotify_init",
)


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(RESULT_FD, view) :]


def _load(path: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount_namespace_root(libc: Any, new_root: str, binds: list[str]) -> None:
    """Pivot into a tmpfs that holds only ``binds`` (read-only) and an empty writable ``/job``."""

    def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
        enc = [None if s is None else s.encode() for s in (source, target, fstype, data)]
        _check(libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")

    mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    mount("dotboxd-worker", new_root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=16m,mode=755")
    for source in binds:
        if not os.path.exists(source):
            continue
        target = new_root + source
        if os.path.isdir(source):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "wb").close()
        mount(source, target, None, _MS_BIND | _MS_REC, None)
        mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, None)
    for link, to in (("lib", "usr/lib"), ("lib64", "usr/lib64"), ("bin", "usr/bin")):
        if not os.path.exists(os.path.join(new_root, link)) and os.path.isdir(os.path.join(new_root, to)):
            os.symlink(to, os.path.join(new_root, link))
    work = os.path.join(new_root, "job")
    os.mkdir(work)
    os.chmod(work, 0o1777)
    old = os.path.join(new_root, ".old")
    os.mkdir(old)
    _check(libc.syscall(_SYS_PIVOT_ROOT, new_root.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(libc.umount2(b"/.old", _MNT_DETACH), "umount old root")
    os.rmdir("/.old")
    os.chdir("/job")


def _rlimits(limits: dict[str, int]) -> None:
    cpu = max(1, int(limits["cpuSeconds"]))
    memory = int(limits["memoryBytes"])
    for which, value in (
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (memory, memory)),
        (resource.RLIMIT_NOFILE, (int(limits["openFiles"]),) * 2),
        (resource.RLIMIT_NPROC, (0, 0)),
        (resource.RLIMIT_FSIZE, (int(limits["fileBytes"]),) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
    ):
        resource.setrlimit(which, value)
    if "stackBytes" in limits:  # kernel mode: deep kernels recurse on this thread (no threads here)
        _, hard = resource.getrlimit(resource.RLIMIT_STACK)
        stack = int(limits["stackBytes"])
        if hard != resource.RLIM_INFINITY:
            stack = min(stack, hard)
        resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))


def _seccomp(pyseccomp: Any) -> None:
    refuse = pyseccomp.ERRNO(errno.EPERM)
    flt = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        flt.add_rule(refuse, name)
    flt.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    # tgkill only at our own thread group (Python's own signal raising); never at another process
    flt.add_rule(refuse, "tgkill", pyseccomp.Arg(0, pyseccomp.NE, os.getpid()))
    flt.load()


def _supervise(frames: ModuleType, status_fd: int) -> None:
    """As PID 1 of the namespace, fork the process that will build the layers and run the job, wait
    for it and report how it ended on the status pipe, which only this process holds. Why: the
    kernel shields a namespace's init from signals it has no handler for, so a job running as PID 1
    would survive SIGXCPU and its death by a signal could not be told apart from an exit; this
    process runs no job code, so its report is trusted. Returns only in the child."""
    child = os.fork()
    if child == 0:
        return
    os.close(RESULT_FD)
    sys.stdin.close()
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        report = {"signal": os.WTERMSIG(status)}
    else:
        report = {"exit": os.waitstatus_to_exitcode(status)}
    view = memoryview(frames.encode(report))
    while view:
        view = view[os.write(status_fd, view) :]
    os._exit(0)


class _PackageDirs:
    """A meta-path finder for the few packages a kernel worker imports, each from the directory
    the host named (bound read-only into the worker's root): ``python -I -S`` sees no
    site-packages, and dotboxd's sub-packages may live in other directories than their parent
    (an editable install maps ``dotboxd.grammar`` to ``grammar/``)."""

    def __init__(self, dirs: dict[str, str]) -> None:
        self.dirs = dirs

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        where = self.dirs.get(name)
        if where is None:
            return None
        init = os.path.join(where, "__init__.py")
        return importlib.util.spec_from_file_location(name, init, submodule_search_locations=[where])


def _serve_kernels(kernel: dict[str, Any]) -> None:
    """Kernel mode (``SandboxHost.execute(..., isolation="worker")``): with every layer in force,
    import dotboxd from the host's read-only package directories and serve kernel runs over
    stdin and the result pipe until the host closes stdin. Never returns."""
    try:
        sys.meta_path.insert(0, _PackageDirs({str(k): str(v) for k, v in dict(kernel["packages"]).items()}))
        sys.setrecursionlimit(int(kernel["recursionLimit"]))
        serve = importlib.import_module("dotboxd.isolation.kernel_worker").serve
    except BaseException:
        os._exit(3)
    serve(0, RESULT_FD)
    os._exit(0)


def main() -> None:
    global RESULT_FD
    frames = _load(sys.argv[1], "_dotboxd_frames")
    RESULT_FD = int(sys.argv[2])
    # exactly one frame: a pooled kernel worker's stdin stays open for the runs that follow
    config = frames.read_frame(0)
    if config is None:
        os._exit(2)
    want: list[str] = list(config["attempt"])
    required: set[str] = set(config["required"])
    in_force = ["interpreter"]
    missing: dict[str, str] = {}
    libc = ctypes.CDLL(None, use_errno=True)
    pyseccomp: Any = None

    def layer(name: str, step: Any) -> None:
        if name not in want:
            return
        try:
            step()
            in_force.append(name)
        except Exception as error:
            missing[name] = f"{type(error).__name__}: {error}"[:300]

    if "seccomp" in want:
        try:
            # the host resolved the library names once; looking them up here would spawn ldconfig
            libraries = dict(config["libraries"])
            ctypes.util.find_library = lambda name: libraries.get(name)
            pyseccomp = _load(config["seccompModule"], "pyseccomp")
        except Exception as error:
            missing["seccomp"] = f"libseccomp binding unavailable: {type(error).__name__}: {error}"[:300]
    for ns in ("user-ns", "net-ns", "pid-ns"):
        if ns in want and ns in config["namespaces"]:
            in_force.append(ns)
    status_fd = int(sys.argv[3])
    if "pid-ns" in config["namespaces"]:
        _supervise(frames, status_fd)
    os.close(status_fd)
    layer("mount-ns", lambda: _mount_namespace_root(libc, config["newRoot"], list(config["binds"])))

    def drop() -> None:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        if os.getuid() != NOBODY or os.geteuid() != NOBODY:
            raise OSError("uid did not change")

    layer("uid-drop", drop)
    layer("rlimits", lambda: _rlimits(config["limits"]))
    layer("no-new-privs", lambda: _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl"))
    if pyseccomp is not None:
        layer("seccomp", lambda: _seccomp(pyseccomp))
    unmet = sorted(required - set(in_force) - {"watchdog"})
    for name in unmet:
        missing.setdefault(name, "not available on this machine")
    _write_all(frames.encode({"layers": in_force, "missing": missing}))
    if unmet:
        os._exit(0)
    if config.get("kernel"):
        _serve_kernels(dict(config["kernel"]))
    cap = int(config["resultCap"])
    job_input = config["input"]
    source = config["source"]
    # nothing here is secret: the job could read these locals through its frames anyway
    try:
        namespace: dict[str, Any] = {"__name__": "__job__", "__builtins__": __builtins__}
        exec(compile(source, "job.py", "exec"), namespace)
        entry = namespace.get("main")
        value = entry(job_input) if callable(entry) else namespace.get("result")
        frame = frames.encode({"ok": True, "value": value}, cap)
    except BaseException as error:  # the job's failure is data for the host, never a crash here
        detail = f"{type(error).__name__}: {error}"[:500]
        frame = frames.encode({"ok": False, "error": detail}, cap)
    _write_all(frame)
    os._exit(0)


if __name__ == "__main__":
    main()
