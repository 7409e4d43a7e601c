"""Applying a successful run's commands as one batch: all of it, or exactly what is reported.

Why: "never half-applied" must hold after the run too. A batch of two file writes whose second one
can only fail when it is applied (a name taken meanwhile, a directory moved) must not leave the
first one on disk while the result says the run failed. The protocol (see ``runtime.commands``):

1. **prepare** every transactional command in queue order against one ``PlannedState``, so each is
   checked against the state the earlier ones will produce; nothing the host can see changes yet
   (a file write only creates a temporary file and, for an overwrite, a backup link). The first
   failure releases what was prepared: nothing is applied.
2. **commit** them in queue order. A failure rolls the committed ones back, newest first.
3. run the **plain** commands (``apply``) in queue order. They cannot be undone, so they come last:
   a failure rolls every committed transactional command back, and the plain commands that already
   ran stay applied - the report names them.
4. **release** every prepared command (temporary files and backups go).

``CommandReport`` says exactly which commands' effects are in place afterwards, which one failed
and in which phase, and which (if any) could not be rolled back; ``report_event`` turns it into the
``HostCommands`` audit event that follows the run's ``RunSummary``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dotboxd.core.codes import category_of
from dotboxd.core.read_only import ReadOnlyDict
from dotboxd.runtime.audit import AuditEvent, AuditTrail, Observer, new_event, safe_field
from dotboxd.runtime.commands import Command, PlannedState, PreparedCommand
from dotboxd.runtime.errors import ErrorInfo, SandboxError

Phase = Literal["prepare", "commit", "apply"]

FAILURE_CODE = "R-HOST-COMMAND"


@dataclass(frozen=True, slots=True)
class CommandReport:
    """What applying a batch did.

    ``applied`` holds the commands whose effect is in place afterwards, in the order they took
    effect (every applicable command when the batch succeeded). On failure ``failed`` is the command
    that failed and ``phase`` where; ``rolled_back`` the transactional commands that had committed
    and were undone; ``unrestored`` those whose rollback itself failed (their effect may persist,
    so they are counted in ``applied`` too).
    """

    queued: int
    applied: tuple[Command, ...] = ()
    failed: Command | None = None
    phase: Phase | None = None
    rolled_back: tuple[Command, ...] = ()
    unrestored: tuple[Command, ...] = ()

    @property
    def ok(self) -> bool:
        return self.failed is None

    def error(self) -> ErrorInfo | None:
        """The result's error: None on success, else HostFailure ``R-HOST-COMMAND`` naming the
        failed command by its sequence and phase and how many commands stay applied (no host
        exception text: the command's own error is never shown)."""
        failed = self.failed
        if failed is None:
            return None
        message = (
            f"host command {failed.sequence} failed at {self.phase}; "
            f"{len(self.applied)} of {self.queued} command(s) stay applied"
        )
        return SandboxError(FAILURE_CODE, message).info()


def apply_commands(commands: tuple[Command, ...]) -> CommandReport:
    """Apply ``commands`` (one successful run's queue) by the protocol of the module docstring.
    Never raises for a failing command: an ``Exception`` from host or facade code is the report's
    ``failed``. Anything else (KeyboardInterrupt) rolls back and propagates."""
    staged = [c for c in commands if c.prepare is not None]
    plain = [c for c in commands if c.prepare is None and c.apply is not None]
    queued = len(staged) + len(plain)
    prepared: list[tuple[Command, PreparedCommand]] = []
    committed: list[Command] = []
    done: list[Command] = []
    current: Command | None = None
    phase: Phase = "prepare"
    try:
        planned = PlannedState()
        for command in staged:
            current = command
            prepare = command.prepare
            assert prepare is not None
            prepared.append((command, prepare(planned)))
        phase = "commit"
        for command, change in prepared:
            current = command
            change.commit()
            committed.append(command)
        phase = "apply"
        for command in plain:
            current = command
            apply = command.apply
            assert apply is not None
            apply()
            done.append(command)
    except Exception:
        rolled_back, unrestored = _roll_back(committed, prepared)
        _release(prepared)
        return CommandReport(queued, (*done, *unrestored), current, phase, rolled_back, unrestored)
    except BaseException:
        _roll_back(committed, prepared)
        _release(prepared)
        raise
    _release(prepared)
    return CommandReport(queued, (*committed, *done))


def _roll_back(
    committed: list[Command], prepared: list[tuple[Command, PreparedCommand]]
) -> tuple[tuple[Command, ...], tuple[Command, ...]]:
    """Undo the committed commands, newest first; (rolled back, could not be rolled back)."""
    changes = dict((id(command), change) for command, change in prepared)
    rolled_back: list[Command] = []
    unrestored: list[Command] = []
    for command in reversed(committed):
        try:
            changes[id(command)].rollback()
        except Exception:
            unrestored.append(command)
        else:
            rolled_back.append(command)
    unrestored.reverse()
    return tuple(rolled_back), tuple(unrestored)


def _release(prepared: list[tuple[Command, PreparedCommand]]) -> None:
    for _, change in prepared:
        with contextlib.suppress(Exception):  # leftovers only; the outcome is already decided
            change.release()


def report_event(report: CommandReport, run_id: str, timestamp: float, sequence: int) -> AuditEvent:
    """The ``HostCommands`` audit event of a batch: how many commands were queued, applied and
    rolled back, and on failure which one failed (sequence, kind, binding) and in which phase."""
    fields: dict[str, Any] = {
        "code": None if report.ok else FAILURE_CODE,
        "queued": report.queued,
        "applied": len(report.applied),
        "appliedSequences": ",".join(str(c.sequence) for c in report.applied),
        "rolledBack": len(report.rolled_back),
        "unrestored": len(report.unrestored),
    }
    failed = report.failed
    if failed is not None:
        fields["phase"] = report.phase
        fields["failedSequence"] = failed.sequence
        fields["failedKind"] = failed.kind
        fields["failedBinding"] = failed.binding_id
    safe: Mapping[str, Any] = ReadOnlyDict({k: safe_field(v) for k, v in fields.items()})
    return new_event(
        run_id,
        "HostCommands",
        timestamp,
        report.ok,
        sequence,
        None if report.ok else category_of(FAILURE_CODE),
        safe,
    )


def apply_batch(
    commands: tuple[Command, ...],
    run_id: str,
    events: Sequence[AuditEvent],
    clock: Callable[[], float],
    observers: Iterable[Observer] = (),
) -> tuple[CommandReport, AuditTrail]:
    """Apply a successful run's queue (``apply_commands``) and close the run's audit trail with
    the batch's ``HostCommands`` event (after the ``RunSummary``; observers get it too, their
    failures isolated). Returns the report and the extended trail."""
    report = apply_commands(commands)
    event = report_event(report, run_id, clock(), len(events))
    for observer in observers:
        with contextlib.suppress(Exception):
            observer(event)
    return report, AuditTrail((*events, event))


__all__ = ["CommandReport", "Phase", "apply_batch", "apply_commands", "report_event"]
