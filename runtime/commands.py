"""The command buffer: host-state writes are queued during a run and applied only if it succeeds.

Why: a run can fail at any charge (quota, timeout, an error three calls later). If a binding changed
the host's state directly, a failed run would leave the world half-changed. Instead a
host-state-writing binding *describes* its change as a ``Command`` and enqueues it through its
context; the host applies the queue in order after a successful run, and drops it otherwise
(DotBoxD queues writes as commands the host applies after the run and, on exhaustion, discards
the later ones; here *every* command of a failed run is discarded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, slots=True)
class Command:
    """One queued host-state change.

    ``kind`` and ``payload`` describe it as data (hosts may apply commands themselves from these);
    ``apply`` is an optional host callable that performs it. ``binding_id`` names the binding that
    queued it and ``sequence`` its position in the run's queue.
    """

    kind: str
    payload: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    apply: Callable[[], None] | None = field(default=None, compare=False, repr=False)
    binding_id: str = ""
    sequence: int = 0


class CommandBuffer:
    """The queue of one run. Sandboxed code never sees it; only binding contexts enqueue."""

    __slots__ = ("_closed", "_commands")

    def __init__(self) -> None:
        self._commands: list[Command] = []
        self._closed = False

    def enqueue(
        self,
        kind: str,
        payload: Mapping[str, Any] | None = None,
        apply: Callable[[], None] | None = None,
        binding_id: str = "",
    ) -> Command:
        """Queue a command (refused once the run is over, so a leaked context cannot write later)."""
        if self._closed:
            raise RuntimeError("the run is over; commands can no longer be queued")
        command = Command(
            kind,
            MappingProxyType(dict(payload or {})),
            apply,
            binding_id,
            len(self._commands),
        )
        self._commands.append(command)
        return command

    def __len__(self) -> int:
        return len(self._commands)

    def close(self) -> tuple[Command, ...]:
        """End the run: no more commands; return the queue in order."""
        self._closed = True
        return tuple(self._commands)

    def discard(self) -> int:
        """End a failed run: drop every queued command; return how many were dropped."""
        self._closed = True
        dropped = len(self._commands)
        self._commands.clear()
        return dropped


def apply_commands(commands: tuple[Command, ...]) -> int:
    """Apply ``commands`` in order; return how many ran. A command without ``apply`` is data for the
    host to act on and is skipped here. An exception from a host applier propagates to the caller
    (the host API turns it into a HostFailure result): it is the host's own code failing."""
    applied = 0
    for command in commands:
        if command.apply is not None:
            command.apply()
            applied += 1
    return applied
