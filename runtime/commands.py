"""The command buffer: host-state writes are queued during a run and applied only if it succeeds.

Why: a run can fail at any charge (quota, timeout, an error three calls later). If a binding changed
the host's state directly, a failed run would leave the world half-changed. Instead a
host-state-writing binding *describes* its change as a ``Command`` and enqueues it through its
context; after a successful run the host applies the whole queue as one batch
(``dotboxd.runtime.command_batch``), and drops it otherwise - *every* command of a failed run is
discarded.

A command changes the host in one of two ways:

* ``prepare`` (transactional): a callable that checks the change against the state the batch will
  have produced so far (``PlannedState``) and stages it, returning a ``PreparedCommand`` that can
  ``commit``, ``rollback`` a commit, and ``release`` whatever staging left behind. Every prepared
  command of a batch commits, or none stays committed. The file facade's writes are of this kind.
* ``apply`` (plain): a host callable that performs the change in one step and cannot undo it. The
  batch runs plain commands last, after every prepared one committed, so that a plain failure can
  still roll the prepared ones back; a plain command that already ran stays applied and is reported
  as such.

A command with neither is data for a host that applies it itself (``apply_commands_on_success=False``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dotboxd.core.frozen_state import frozen_state, restore_frozen_state
from dotboxd.core.read_only import EMPTY, ReadOnlyDict
from dotboxd.runtime.errors import SandboxError


class PreparedCommand(Protocol):
    """A staged change of a transactional command (what its ``prepare`` returned).

    The batch calls ``commit`` at most once, ``rollback`` only after a successful ``commit`` (and
    only when the batch as a whole failed), and ``release`` exactly once at the end whatever
    happened: it removes what staging left behind (temporary files, backups) and must not raise
    for a change that was never committed.
    """

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def release(self) -> None: ...


class PlannedState:
    """What the commands checked so far will have done, keyed by whatever key a command kind picks.

    Why: two commands of one batch can conflict although each is fine against the host's state on
    its own (the same new file name twice under a create-only grant). A command's checks consult
    this record of the effects planned before it and add their own, so the batch is validated
    against the state it will produce, not the state it started from. A run keeps one for the
    call-time checks of its bindings; the batch starts a fresh one when it prepares the commands
    (the host's state may have changed since the calls).
    """

    __slots__ = ("_planned",)

    def __init__(self) -> None:
        self._planned: dict[Hashable, str] = {}

    def get(self, key: Hashable) -> str | None:
        """What an earlier command planned for ``key`` (None when nothing)."""
        return self._planned.get(key)

    def record(self, key: Hashable, effect: str) -> None:
        """Note that a command will leave ``key`` in the state ``effect`` (e.g. ``"file"``)."""
        self._planned[key] = effect


Prepare = Callable[[PlannedState], PreparedCommand]
"""A transactional command's checker and stager (see ``PreparedCommand``)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One queued host-state change.

    ``kind`` and ``payload`` describe it as data (hosts may apply commands themselves from these);
    ``prepare`` (transactional) or ``apply`` (plain, irreversible) perform it - see the module
    docstring. ``binding_id`` names the binding that queued it and ``sequence`` its position in the
    run's queue.
    """

    kind: str
    payload: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    apply: Callable[[], None] | None = field(default=None, compare=False, repr=False)
    binding_id: str = ""
    sequence: int = 0
    prepare: Prepare | None = field(default=None, compare=False, repr=False)

    def __copy__(self) -> Command:
        """The command itself: it is immutable (a shallow copy keeps ``apply`` and ``prepare``)."""
        return self

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle`` carries: the command as data (``payload`` as a plain dict,
        ``core.frozen_state``), without ``apply`` and ``prepare``.
        Why drop them: they are handles into the host process that ran the kernel (closures over
        its state, usually not picklable at all), and a command shipped to another process must not
        be able to change that process's copy of the world; the copy is data a host may apply
        itself (``applicable`` is False). ``copy.deepcopy`` keeps them (``__deepcopy__``)."""
        return frozen_state(self, _VIEWS, _HANDLES)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The inverse of ``__getstate__``: ``payload`` as a new read-only dict again."""
        restore_frozen_state(self, state, _VIEWS)

    def __deepcopy__(self, memo: dict[int, Any]) -> Command:
        """A snapshot in this process: the payload copied deeply, ``apply`` and ``prepare`` the same
        callables (as ``copy.deepcopy`` treats any function)."""
        state = frozen_state(self, _VIEWS)
        handles = {name: state.pop(name) for name in _HANDLES}
        state = copy.deepcopy(state, memo)
        state.update(handles)
        twin = object.__new__(Command)
        restore_frozen_state(twin, state, _VIEWS)
        return twin

    @property
    def applicable(self) -> bool:
        """Whether the host API applies this command itself (it has ``prepare`` or ``apply``)."""
        return self.prepare is not None or self.apply is not None


_VIEWS = frozenset({"payload"})
"""The fields of ``Command`` held as read-only dicts (``core.read_only``, ``core.frozen_state``)."""

_HANDLES = frozenset({"apply", "prepare"})
"""The fields of ``Command`` that are callables of the host process (not pickled)."""


class CommandBuffer:
    """The queue of one run. Sandboxed code never sees it; only binding contexts enqueue."""

    __slots__ = ("_closed", "_commands", "_limit", "_planned")

    def __init__(self, max_commands: int | None = None) -> None:
        """``max_commands`` is the run's MaxCommands (None: no limit, for a queue outside a run)."""
        self._commands: list[Command] = []
        self._closed = False
        self._planned: PlannedState | None = None
        self._limit = max_commands

    def enqueue(
        self,
        kind: str,
        payload: Mapping[str, Any] | None = None,
        apply: Callable[[], None] | None = None,
        binding_id: str = "",
        prepare: Prepare | None = None,
    ) -> Command:
        """Queue a command (refused once the run is over, so a leaked context cannot write later).
        A command is either transactional (``prepare``) or plain (``apply``), never both. One past
        MaxCommands is QuotaExceeded (``R-QUOTA-COMMANDS``): the batch a successful run hands the
        host is host work done after the run, outside every other budget, so it is bounded here."""
        if self._closed:
            raise RuntimeError("the run is over; commands can no longer be queued")
        if apply is not None and prepare is not None:
            raise ValueError("a command has either prepare (transactional) or apply (plain), not both")
        if self._limit is not None and len(self._commands) >= self._limit:
            # an amount limit: the refused command is not queued, and the failed run drops the rest
            raise SandboxError("R-QUOTA-COMMANDS", f"host-state command budget exhausted at {kind}")
        command = Command(
            kind,
            ReadOnlyDict(payload or {}),
            apply,
            binding_id,
            len(self._commands),
            prepare,
        )
        self._commands.append(command)
        return command

    @property
    def planned(self) -> PlannedState:
        """The run's record of what its queued commands will do, for call-time checks."""
        planned = self._planned
        if planned is None:
            planned = self._planned = PlannedState()
        return planned

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
