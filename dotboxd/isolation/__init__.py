"""Untrusted Python behind an OS boundary (posture 3).

A third party's Python runs in a separate worker process with as little authority as Linux gives an
unprivileged process: ``python -I -S`` with an empty environment and a fresh working directory; new
user (or, as root, a drop to ``nobody``), network, mount and PID namespaces; a tmpfs root holding only
the interpreter's files; rlimits; ``PR_SET_NO_NEW_PRIVS``; a seccomp filter; and a watchdog that kills
the process group at the wall-time limit. Each layer is required by the ``strict`` profile (the
default) and a missing one makes ``run_python`` refuse with ``IsolationUnavailable`` naming it, unless
the caller lowers the profile explicitly. Every result lists the layers that were really in force.

This is the only posture in dotboxd for code that must not be trusted and is not a safe kernel; the
in-process plugin API (``dotboxd.plugins``) is no substitute for it.

The same boundary also holds safe kernels, as defense in depth: ``SandboxHost.execute(...,
isolation="worker")`` runs a plan's body in a long-lived kernel worker (``pool.WorkerPool``;
``kernel_worker`` is its inside) while bindings, commands and audit stay in the host.
"""

from dotboxd.isolation.pool import KERNEL_LIMITS, WorkerPool
from dotboxd.isolation.profile import LAYERS, PROFILES, Limits, Profile, best_effort, named, strict
from dotboxd.isolation.worker import IsolationUnavailable, WorkerResult, probe, run_python

PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)

__all__ = [
    "KERNEL_LIMITS",
    "LAYERS",
    "PROFILE_NAMES",
    "IsolationUnavailable",
    "Limits",
    "Profile",
    "WorkerPool",
    "WorkerResult",
    "best_effort",
    "named",
    "probe",
    "run_python",
    "strict",
]
