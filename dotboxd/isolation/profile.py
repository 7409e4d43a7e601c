"""Isolation profiles: which OS layers a worker must have, and its resource limits.

Why a profile names *required* layers: the worker must fail closed. ``strict`` requires every layer
Linux gives an unprivileged process; a caller who accepts less must say so by choosing a lowered
profile, and the result still lists the layers really in force.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from dotboxd.core.diagnostics import reject

LAYERS: tuple[str, ...] = (
    "interpreter",  # python -I -S, empty environment, fresh empty working directory
    "user-ns",  # a new user namespace (when not root: the only way to get the others)
    "uid-drop",  # when the host runs as root: the worker becomes nobody (65534)
    "net-ns",  # a new network namespace: no interface but a down loopback
    "mount-ns",  # a tmpfs root with only the interpreter's files (read-only) and an empty /work
    "pid-ns",  # a new PID namespace: the host's processes are invisible; all die with the worker
    "rlimits",  # CPU seconds, address space, open files, processes, file size, core size
    "no-new-privs",  # PR_SET_NO_NEW_PRIVS
    "seccomp",  # libseccomp filter: no sockets, no fork/exec, no ptrace, no mount, ...
    "watchdog",  # the host kills the whole process group at the wall-time limit
)


def privilege_layer() -> str:
    """``uid-drop`` when this process is root, else ``user-ns`` (an unprivileged host cannot switch
    uid; a user namespace is what lets it make the other namespaces)."""
    return "uid-drop" if os.geteuid() == 0 else "user-ns"


def _all_layers() -> frozenset[str]:
    other = "user-ns" if privilege_layer() == "uid-drop" else "uid-drop"
    return frozenset(LAYERS) - {other}


@dataclass(frozen=True)
class Limits:
    timeout_ms: int = 5_000
    memory_mb: int = 256
    open_files: int = 32
    file_bytes: int = 8 << 20
    result_bytes: int = 1 << 20

    def check(self) -> Limits:
        for name, value, low, high in (
            ("timeout_ms", self.timeout_ms, 1, 600_000),
            ("memory_mb", self.memory_mb, 32, 65_536),
            ("open_files", self.open_files, 8, 4_096),
            ("file_bytes", self.file_bytes, 0, 1 << 34),
            ("result_bytes", self.result_bytes, 64, 1 << 24),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise reject(
                    "E-ISOLATION-PROFILE", f"{name} must be an integer in [{low}, {high}], got {value!r}"
                )
        return self


@dataclass(frozen=True)
class Profile:
    """``attempt``: layers the worker sets up; ``required``: layers without which it refuses to run."""

    name: str
    attempt: frozenset[str]
    required: frozenset[str]
    limits: Limits = field(default_factory=Limits)

    def lowered(self, *layers: str) -> Profile:
        """This profile with ``layers`` no longer required (still attempted and reported). Saying
        so is the only way to run with less than ``strict``."""
        unknown = set(layers) - set(LAYERS)
        if unknown:
            raise reject("E-ISOLATION-PROFILE", f"unknown layer(s): {', '.join(sorted(unknown))}")
        return replace(self, name=f"{self.name}-lowered", required=self.required - set(layers))

    def without(self, *layers: str) -> Profile:
        """This profile with ``layers`` neither attempted nor required."""
        lowered = self.lowered(*layers)
        return replace(lowered, attempt=lowered.attempt - set(layers))

    def with_limits(self, limits: Limits) -> Profile:
        return replace(self, limits=limits.check())


def strict() -> Profile:
    """Every layer required (the default)."""
    layers = _all_layers()
    return Profile("strict", layers, layers)


def best_effort() -> Profile:
    """Every layer attempted; only the interpreter, rlimits and the watchdog required. For machines
    without namespaces or libseccomp, chosen explicitly; the result lists what was in force."""
    return Profile("best-effort", _all_layers(), frozenset({"interpreter", "rlimits", "watchdog"}))


PROFILES = {"strict": strict, "best-effort": best_effort}


def named(name: str) -> Profile:
    if name not in PROFILES:
        raise reject(
            "E-ISOLATION-PROFILE", f"unknown isolation profile {name!r}", hint=f"one of {', '.join(PROFILES)}"
        )
    return PROFILES[name]()
