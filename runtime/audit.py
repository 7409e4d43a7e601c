"""Audit events of a run: ordered, sequence-numbered, sanitized, and forwarded to observers.

Why: a host must be able to answer "what did this kernel do?" after the fact - which bindings ran,
which were denied, what each run consumed - without the log itself becoming a leak (spec/semantics.md
section 10: never content, tokens, auth headers, connection strings, sensitive paths or raw exceptions).
Every free-text field passes ``sanitize`` (secret-looking values are redacted, control characters
dropped, length bounded). Observers receive the same events as the result; an observer that
raises is isolated (its failure is swallowed, never the run's).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from dotboxd.core.frozen_state import frozen_state, restore_frozen_state
from dotboxd.core.read_only import EMPTY, ReadOnlyDict
from dotboxd.core.values import frozen_constructor

KINDS = frozenset(
    {
        "RunSummary",
        "BindingCall",
        "SandboxLog",
        "PluginMessage",
        "PolicyDenied",
        "CapabilityRevoked",
        "ExecutionFallback",
        "VerifierFailure",
        "CacheInvalidated",
        "CompiledExecutionFailed",
        "DebugTrace",
        "HostCommands",
    }
)

MAX_TEXT = 256

_SECRET = re.compile(
    r"(?i)\b(password|passwd|pwd|secret|token|api[-_]?key|apikey|bearer|authorization)\b"
    r"(\s*[:=]\s*|\s+)((?:bearer|basic)\s+)?(\S+)"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


_PLAIN = re.compile(r"[A-Za-z0-9_.:/\-]*")


def sanitize(text: str, limit: int = MAX_TEXT) -> str:
    """Audit-safe text: secret values redacted, control characters removed, length bounded."""
    if len(text) <= limit and _PLAIN.fullmatch(text):
        return text  # ids and hashes: nothing to redact (no separator a secret could follow)
    cleaned = _CONTROL.sub(" ", str(text))
    cleaned = _SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}[redacted]", cleaned)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


_RESOURCE = re.compile(r"[^A-Za-z0-9_.:/\-]")


def sanitize_resource(resource_id: str) -> str:
    """Resource ids keep only ``[A-Za-z0-9_.:/-]`` (``player:5751``, ``file-grant:cfg/settings.json``);
    anything else becomes ``_`` and ``..`` segments are neutralized."""
    cleaned = _RESOURCE.sub("_", str(resource_id))[:MAX_TEXT]
    return cleaned.replace("..", "__")


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One audit record (DotBoxD's ``SandboxAuditEvent``). ``success`` holds exactly when
    ``error_code`` is None.

    ``host_exception`` is for the trusted host only: on the copy of a binding's failure event that
    live observers receive it holds the exception the binding raised (type, text, traceback), so a
    host can debug its own code. It is never stored in the run's trail (the events of an
    ``ExecutionResult``), never serialized by ``to_json`` and takes no part in equality or ``repr``.
    """

    run_id: str
    kind: str
    timestamp: float
    success: bool
    sequence: int
    binding_id: str | None = None
    capability_id: str | None = None
    effect: int | None = None
    resource_id: str | None = None
    error_code: str | None = None
    message: str | None = None
    bytes: int | None = None
    fields: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    host_exception: BaseException | None = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle`` and ``copy`` carry: every field, ``fields`` as a plain dict
        (``core.frozen_state``)."""
        return frozen_state(self, _EVENT_VIEWS)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The inverse of ``__getstate__``: ``fields`` as a new read-only dict again."""
        restore_frozen_state(self, state, _EVENT_VIEWS)

    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "kind": self.kind,
            "timestamp": self.timestamp,
            "success": self.success,
            "sequence": self.sequence,
            "bindingId": self.binding_id,
            "capabilityId": self.capability_id,
            "effect": self.effect,
            "resourceId": self.resource_id,
            "errorCode": self.error_code,
            "message": self.message,
            "bytes": self.bytes,
            "fields": dict(self.fields),
        }


_EVENT_VIEWS = frozenset({"fields"})
"""The fields of ``AuditEvent`` held as read-only dicts (``core.read_only``, ``core.frozen_state``)."""

Observer = Callable[[AuditEvent], None]

_new_event = frozen_constructor(AuditEvent)


def new_event(
    run_id: str,
    kind: str,
    timestamp: float,
    success: bool,
    sequence: int,
    error_code: str | None,
    fields: Mapping[str, Any],
) -> AuditEvent:
    """An event without binding, capability, effect, resource, message or bytes, whose ``fields``
    are already safe (``safe_field`` values): the ``RunSummary``. Checked like any written event."""
    if kind not in KINDS:
        raise ValueError(f"unknown audit event kind {kind!r}")
    if success == (error_code is not None):
        raise ValueError("an audit event succeeds exactly when it has no error code")
    return _new_event(
        run_id, kind, timestamp, success, sequence, None, None, None, None, error_code, None, None, fields
    )


def new_summary_event(
    run_id: str, timestamp: float, sequence: int, error_code: str | None, fields: Mapping[str, Any]
) -> AuditEvent:
    """``new_event`` for the ``RunSummary`` (its kind is known and its success is derived from
    ``error_code``, so neither needs checking): built on the first read of every unobserved run's
    events."""
    return _new_event(
        run_id,
        "RunSummary",
        timestamp,
        error_code is None,
        sequence,
        None,
        None,
        None,
        None,
        error_code,
        None,
        None,
        fields,
    )


_BUILD = threading.Lock()


class AuditTrail(Sequence[AuditEvent]):
    """The audit events of a finished run, in order: an immutable sequence (compares equal to the
    tuple of the same events).

    The last event may be held back as the arguments of its builder and built on first read:
    the ``RunSummary`` of a run nobody observes live is then paid for only by callers that look at
    it. Its content is fixed when the run ends (timestamp and sequence included), so the event read
    later is exactly the one an immediate write would have produced.
    """

    __slots__ = ("_args", "_build", "_events")

    def __init__(
        self,
        events: tuple[AuditEvent, ...] = (),
        build: Callable[..., AuditEvent] | None = None,
        args: tuple[Any, ...] = (),
    ) -> None:
        self._events = events
        self._build = build
        self._args = args

    def _all(self) -> tuple[AuditEvent, ...]:
        if self._build is not None:
            _BUILD.acquire()  # not ``with``: its protocol costs twice the lock itself on this path
            try:
                build = self._build
                if build is not None:
                    summary = build(*self._args)
                    self._events = self._events + (summary,)  # noqa: RUF005  # concatenation: 3x faster
                    self._build = None
                    self._args = ()
            finally:
                _BUILD.release()
        return self._events

    def __len__(self) -> int:
        if self._build is None:  # built (``_events`` is complete before ``_build`` is cleared)
            return len(self._events)
        # not built yet, or being built on another thread: its two slots are read under the lock
        # the build holds, else a build between the two reads counts the summary twice or not at all
        _BUILD.acquire()
        try:
            return len(self._events) + (1 if self._build is not None else 0)
        finally:
            _BUILD.release()

    @overload
    def __getitem__(self, index: int) -> AuditEvent: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[AuditEvent, ...]: ...

    def __getitem__(self, index: int | slice) -> AuditEvent | tuple[AuditEvent, ...]:
        return (self._events if self._build is None else self._all())[index]

    def __iter__(self) -> Iterator[AuditEvent]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AuditTrail):
            return self._all() == other._all()
        if isinstance(other, tuple):
            return self._all() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to tuples, so it cannot hash like an object

    def __reduce__(self) -> tuple[type[AuditTrail], tuple[tuple[AuditEvent, ...]]]:
        """Pickled and copied as the trail of its events, every one built: the held-back summary's
        builder is a closure over the run, which neither pickles nor belongs in a copy."""
        return (AuditTrail, (self._all(),))

    def __repr__(self) -> str:
        return repr(self._all())


class AuditLog:
    """The events of one run, in order. Writers are the runtime and binding contexts."""

    __slots__ = ("_clock", "_events", "_lock", "_observers", "run_id")

    def __init__(self, run_id: str, clock: Callable[[], float], observers: Iterable[Observer] = ()) -> None:
        self.run_id = run_id
        self._clock = clock
        self._events: list[AuditEvent] = []
        self._observers = tuple(observers)
        self._lock = threading.Lock()

    def write(
        self,
        kind: str,
        *,
        success: bool,
        binding_id: str | None = None,
        capability_id: str | None = None,
        effect: int | None = None,
        resource_id: str | None = None,
        error_code: str | None = None,
        message: str | None = None,
        bytes: int | None = None,
        fields: Mapping[str, Any] | None = None,
        host_exception: BaseException | None = None,
    ) -> AuditEvent:
        """Append one event (free text sanitized) and deliver it to the observers; the observers'
        copy also carries ``host_exception`` (see ``AuditEvent``), the stored event never does."""
        return self._append(
            kind,
            success,
            binding_id,
            capability_id,
            effect,
            sanitize_resource(resource_id) if resource_id is not None else None,
            error_code,
            sanitize(message) if message is not None else None,
            bytes,
            ReadOnlyDict({str(k): _safe_field(v) for k, v in (fields or {}).items()})
            if fields
            else _NO_FIELDS,
            host_exception,
        )

    def write_safe_fields(
        self, kind: str, *, success: bool, error_code: str | None, fields: dict[str, Any]
    ) -> AuditEvent:
        """``write`` for an event whose ``fields`` the runtime has already passed through
        ``safe_field`` (keys are strings): the ``RunSummary``, whose per-plan fields are sanitized
        once per prepared entrypoint rather than on every run. ``fields`` is copied into a read-only
        dict (``core.read_only``)."""
        return self._append(
            kind, success, None, None, None, None, error_code, None, None, ReadOnlyDict(fields)
        )

    def _append(
        self,
        kind: str,
        success: bool,
        binding_id: str | None,
        capability_id: str | None,
        effect: int | None,
        resource_id: str | None,
        error_code: str | None,
        message: str | None,
        bytes: int | None,
        fields: Mapping[str, Any],
        host_exception: BaseException | None = None,
    ) -> AuditEvent:
        if kind not in KINDS:
            raise ValueError(f"unknown audit event kind {kind!r}")
        if success == (error_code is not None):
            raise ValueError("an audit event succeeds exactly when it has no error code")
        with self._lock:
            event = _new_event(
                self.run_id,
                kind,
                self._clock(),
                success,
                len(self._events),
                binding_id,
                capability_id,
                effect,
                resource_id,
                error_code,
                message,
                bytes,
                fields,
            )
            self._events.append(event)
        if self._observers:
            delivered = event
            if host_exception is not None:
                delivered = dataclasses.replace(event, host_exception=host_exception)
            for observer in self._observers:
                with contextlib.suppress(Exception):  # observer failures are isolated
                    observer(delivered)
        return event

    def checkpoint(self) -> int:
        """The number of events so far (the binding call sequence's step 1)."""
        return len(self._events)

    def has_binding_event_since(self, binding_id: str, checkpoint: int, success: bool) -> bool:
        return any(
            e.binding_id == binding_id and e.success == success and e.kind != "DebugTrace"
            for e in self._events[checkpoint:]
        )

    @property
    def events(self) -> tuple[AuditEvent, ...]:
        return tuple(self._events)


_NO_FIELDS: Mapping[str, Any] = EMPTY


def safe_field(value: Any) -> Any:
    """An audit field value: numbers, booleans and None as they are, anything else as sanitized text."""
    if isinstance(value, bool | int | float) or value is None:
        return value
    return sanitize(str(value))


_safe_field = safe_field
