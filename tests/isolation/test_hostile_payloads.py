"""Posture 3: hostile Python payloads in the isolated worker, each stopped by a named layer.

Every test runs a real worker (strict profile unless it lowers one layer on purpose to show the next
layer holding on its own) and checks three things: the payload failed for the reason the named layer
gives, the host is unharmed, and no process of the worker survives the job. Network payloads never
send anything beyond 127.0.0.0/8: the "public address" payload shows that no INET socket can even be
created and that the worker has no network interface to route through.
"""

from __future__ import annotations

import os
import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dotboxd.isolation import Limits, WorkerResult, run_python, strict

from .layers import expected_layers

pytestmark = pytest.mark.skipif(not Path("/proc/self/ns/net").exists(), reason="needs Linux namespaces")

FAST = Limits(timeout_ms=4_000)


def _survivors(pid: int) -> list[int]:
    """Live processes whose process group or session is the worker's: must be none after the job
    (a zombie has run its last instruction and holds only its exit status)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and pid in (int(fields[2]), int(fields[3])):
            found.append(int(entry.name))
    return found


def run(body: str, job_input: Any = None, profile: Any = None) -> WorkerResult:
    result = run_python(textwrap.dedent(body), job_input, profile=profile or strict().with_limits(FAST))
    assert result.pid > 0 and _survivors(result.pid) == []
    with pytest.raises(ProcessLookupError):
        os.kill(result.pid, 0)
    return result


def attempts_job(imports: str, attempts: dict[str, str], after: str = "") -> str:
    """A worker job that runs each of ``attempts`` (name -> statements) in turn and returns, per name,
    ``"allowed"`` or the name of the OSError that stopped it; ``after`` runs last (it may add to ``out``)."""
    lines = [f"import {imports}", "def main(_):", "    out = {}"]
    for name, statements in attempts.items():
        lines.append("    try:")
        lines.extend(f"        {line}" for line in statements.splitlines())
        lines += [
            f"        out[{name!r}] = 'allowed'",
            "    except OSError as e:",
            f"        out[{name!r}] = type(e).__name__",
        ]
    lines += [f"    {line}" for line in after.splitlines()] + ["    return out", ""]
    return "\n".join(lines)


def connect_job(listener: socket.socket, detail: str) -> str:
    """A worker job that connects to ``listener`` on loopback: ``"connected"``, or the OSError's type
    name next to ``detail`` (an expression evaluated in the handler, where ``e`` is the error)."""
    port = listener.getsockname()[1]
    return f"""
    import socket
    def main(_):
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=1)
            return "connected"
        except OSError as e:
            return [type(e).__name__, {detail}]
    """


def assert_strict_layers(result: WorkerResult) -> None:
    assert expected_layers() <= set(result.layers)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    sock.setblocking(False)
    yield sock
    sock.close()


def _nobody_connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


def test_isolation_benign_job_computes_and_returns_a_value() -> None:
    result = run(
        """
        import json, math
        def main(data):
            return {"total": sum(data["xs"]), "root": math.isqrt(data["n"]), "cwd": __import__("os").getcwd()}
        """,
        {"xs": [1, 2, 3], "n": 1_000_000},
    )
    assert result.ok and result.value == {"total": 6, "root": 1000, "cwd": "/job"}
    assert_strict_layers(result)
    assert result.usage.wall_ms > 0 and result.usage.cpu_ms > 0 and result.usage.max_rss_kb > 0


def test_isolation_mount_ns_hides_etc_passwd_and_host_files() -> None:
    result = run(
        """
        import os
        def main(_):
            seen = sorted(os.listdir("/"))
            try:
                open("/etc/passwd").read()
                return {"passwd": "read", "root": seen}
            except OSError as e:
                return {"passwd": type(e).__name__, "root": seen}
        """
    )
    assert result.ok and result.value["passwd"] == "FileNotFoundError"
    assert "etc" not in result.value["root"] and "proc" not in result.value["root"]


def test_isolation_empty_environment_hides_host_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOTBOXD_TEST_SECRET", "hunter2")
    result = run("import os\ndef main(_):\n    return dict(os.environ)\n")
    assert result.ok and "DOTBOXD_TEST_SECRET" not in result.value
    assert set(result.value) <= {"LC_CTYPE"}  # the interpreter's own locale coercion, nothing inherited


def test_isolation_seccomp_refuses_loopback_connect(listener: socket.socket) -> None:
    result = run(connect_job(listener, "e.errno"))
    assert result.ok and result.value == ["PermissionError", 1]  # EPERM: seccomp, before any packet
    assert _nobody_connected(listener)


def test_isolation_net_ns_alone_stops_loopback_connect(listener: socket.socket) -> None:
    """With seccomp removed on purpose, the network namespace still holds: its loopback is down."""
    result = run(
        connect_job(listener, "socket.if_nameindex()"), profile=strict().without("seccomp").with_limits(FAST)
    )
    assert "seccomp" not in result.layers and "net-ns" in result.layers
    assert result.ok and result.value[0] in ("OSError", "ConnectionRefusedError", "TimeoutError")
    assert result.value[1] == [[1, "lo"]]
    assert _nobody_connected(listener)


def test_isolation_public_address_cannot_even_get_a_socket_or_an_interface() -> None:
    """No non-loopback traffic is attempted: an INET socket cannot be created and no interface exists."""
    result = run(
        """
        import os, socket
        def main(_):
            out = {}
            for name, make in (("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
                               ("inet6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)),
                               ("interfaces", socket.if_nameindex),
                               ("sysfs", lambda: os.listdir("/sys/class/net"))):
                try:
                    make()
                    out[name] = "allowed"
                except OSError as e:
                    out[name] = type(e).__name__
            return out
        """
    )
    assert result.ok and result.value == {
        "inet": "PermissionError",
        "inet6": "PermissionError",
        "interfaces": "PermissionError",
        "sysfs": "FileNotFoundError",
    }


def test_isolation_seccomp_refuses_fork_subprocess_and_system() -> None:
    attempts = {"fork": "os.fork()", "subprocess": 'subprocess.run(["/usr/bin/true"])'}
    result = run(attempts_job("os, subprocess", attempts, 'out["system"] = os.system("true")'))
    assert result.ok and result.value["fork"] == "PermissionError"
    assert result.value["subprocess"] == "PermissionError" and result.value["system"] != 0


def test_isolation_rlimit_nproc_alone_stops_a_fork_bomb() -> None:
    """A fork bomb with seccomp removed on purpose: RLIMIT_NPROC = 0 refuses the first fork."""
    body = """
    import os
    def main(_):
        n = 0
        try:
            while True:
                if os.fork() == 0:
                    os._exit(0)
                n += 1
        except OSError as e:
            return [type(e).__name__, n]
    """
    result = run(body, profile=strict().without("seccomp").with_limits(FAST))
    assert result.ok and result.value == ["BlockingIOError", 0]
    strict_result = run(body)
    assert strict_result.ok and strict_result.value == ["PermissionError", 0]


def test_isolation_rlimit_as_stops_a_10_gib_allocation() -> None:
    result = run("def main(_):\n    return len(bytearray(10 << 30))\n")
    assert not result.ok and result.error is not None
    assert result.error.code == "R-WORKER-FAILED" and "MemoryError" in result.error.message
    assert result.usage.max_rss_kb < 512 * 1024


def test_isolation_watchdog_kills_an_infinite_loop() -> None:
    result = run(
        "def main(_):\n    while True:\n        pass\n",
        profile=strict().with_limits(Limits(timeout_ms=1_000)),
    )
    assert not result.ok and result.error is not None and result.error.code == "R-WORKER-TIMEOUT"
    assert result.error.category == "Timeout" and 1_000 <= result.usage.wall_ms < 5_000


def test_isolation_rlimit_cpu_kill_is_reported_as_killed_not_as_an_exit() -> None:
    """A job killed by the CPU rlimit is R-WORKER-KILLED: the namespace's PID 1 supervisor reports the
    signal (a job running as PID 1 itself would be shielded from SIGXCPU, and unshare reports a
    signalled child as a plain exit 1)."""
    body = """
    import resource
    def main(_):
        resource.setrlimit(resource.RLIMIT_CPU, (1, 1))
        while True:
            pass
    """
    result = run(body, profile=strict().with_limits(Limits(timeout_ms=15_000)))
    assert result.error is not None and result.error.code == "R-WORKER-KILLED"
    assert result.error.category == "QuotaExceeded" and "SIG" in result.error.message
    assert 900 <= result.usage.cpu_ms < 3_000


def test_isolation_rlimit_fsize_stops_a_huge_file() -> None:
    result = run(
        """
        def main(_):
            with open("huge.bin", "wb") as f:
                for _ in range(64):
                    f.write(b"x" * (1 << 20))
            return "wrote 64 MiB"
        """
    )
    assert not result.ok and result.error is not None and "File too large" in result.error.message


def test_isolation_seccomp_stops_raw_syscalls_through_ctypes() -> None:
    result = run(
        """
        import ctypes
        def main(_):
            libc = ctypes.CDLL(None, use_errno=True)
            out = {}
            for name, nr, args in (("socket", 41, (2, 1, 0)), ("fork", 57, ()), ("ptrace", 101, (16, 1, 0, 0))):
                ret = libc.syscall(nr, *args)
                out[name] = [ret, ctypes.get_errno()]
            return out
        """
    )
    assert result.ok and result.value == {"socket": [-1, 1], "fork": [-1, 1], "ptrace": [-1, 1]}


def test_isolation_pid_ns_and_mount_ns_hide_the_parents_proc() -> None:
    body = f"""
    import os
    def main(_):
        out = {{"ppid": os.getppid(), "pid": os.getpid()}}
        for path in ("/proc/self/status", "/proc/{os.getpid()}/environ", "/proc/1/cmdline"):
            try:
                open(path, "rb").read(); out[path] = "read"
            except OSError as e:
                out[path] = type(e).__name__
        return out
    """
    result = run(body)
    # PID 1 of the namespace is the bootstrap's supervisor; the job is its child, numbered in the new
    # namespace (the few pids before it went to the bootstrap's library lookup), never a host pid
    assert result.ok and result.value["ppid"] == 1 and 1 < result.value["pid"] < 16
    assert {v for k, v in result.value.items() if k.startswith("/proc")} == {"FileNotFoundError"}


def test_isolation_signalling_the_parent_is_refused_and_the_host_survives() -> None:
    body = f"""
    import os, signal
    def main(_):
        out = {{}}
        for target in ({os.getpid()}, {os.getppid()}, -1):
            try:
                os.kill(target, signal.SIGKILL); out[str(target)] = "sent"
            except OSError as e:
                out[str(target)] = type(e).__name__
        return out
    """
    result = run(body)
    assert result.ok and set(result.value.values()) == {"PermissionError"}
    os.kill(os.getpid(), 0)  # still here


def test_isolation_no_daemon_survives_the_job() -> None:
    """A job that tries to leave a daemon behind: setsid and fork are refused, and the host kills the
    worker's process group after every job (checked by ``run`` for every test of this file)."""
    attempts = {"setsid": "os.setsid()", "fork": "if os.fork() == 0:\n    import time; time.sleep(60)"}
    result = run(attempts_job("os", attempts))
    assert result.ok and result.value == {"setsid": "PermissionError", "fork": "PermissionError"}


def test_isolation_malformed_or_oversized_result_is_host_failure() -> None:
    garbage = run("import os, sys\nos.write(int(sys.argv[2]), b'\\x00' * 8 + b'{')\nos._exit(0)\n")
    assert garbage.error is not None and garbage.error.code == "R-WORKER-RESULT"
    assert garbage.error.category == "HostFailure"
    huge_claim = run(
        "import os, sys\nos.write(int(sys.argv[2]), (1 << 40).to_bytes(8, 'big'))\nos._exit(0)\n"
    )
    assert huge_claim.error is not None and huge_claim.error.code == "R-WORKER-RESULT"
    flood = run("import os, sys\nfd = int(sys.argv[2])\nwhile True:\n    os.write(fd, b'x' * 65536)\n")
    assert flood.error is not None and flood.error.code == "R-WORKER-RESULT"
    too_big = run("def main(_):\n    return 'x' * (2 << 20)\n")
    assert (
        too_big.error is not None
        and too_big.error.code == "R-WORKER-FAILED"
        and "cap" in too_big.error.message
    )
