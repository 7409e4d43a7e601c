"""The layers a strict worker must report, written once for every isolation test.

Why a test-side list rather than ``dotboxd.isolation.profile.LAYERS``: the tests check the worker
against what the threat model promises, so the expectation must not be read from the code under test.
The identity layer depends on how the suite runs: root drops to an unprivileged uid, anyone else
enters a user namespace.
"""

from __future__ import annotations

import os

STRICT_LAYERS = frozenset(
    {
        "interpreter",
        "net-ns",
        "pid-ns",
        "mount-ns",
        "rlimits",
        "no-new-privs",
        "seccomp",
        "watchdog",
    }
)
"""Every strict layer except the identity one (``uid-drop`` or ``user-ns``)."""


def expected_layers(euid: int | None = None) -> set[str]:
    """The strict layers for a worker started by ``euid`` (this process's by default)."""
    root = (os.geteuid() if euid is None else euid) == 0
    return set(STRICT_LAYERS) | {"uid-drop" if root else "user-ns"}
