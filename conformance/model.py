"""The in-memory shape of a conformance case and of what an implementation reported for it.

Case files are plain JSON so that any implementation can read them; inside the runner they become
these frozen records once ``dotboxd.conformance.shape`` has checked them. ``Actual`` is the same
dictionary shape the ``--impl`` protocol speaks, so an in-process run and an external one are
compared by exactly the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

STAGES: tuple[str, ...] = ("import", "validate", "run")
OUTCOMES: tuple[str, ...] = ("ok", "rejected", "error")
BACKENDS: tuple[str, ...] = ("reference", "optimized")
CATEGORIES: tuple[str, ...] = (
    "ValidationError",
    "PolicyDenied",
    "PermissionDenied",
    "NotFound",
    "InvalidInput",
    "QuotaExceeded",
    "Timeout",
    "Cancelled",
    "BindingFailure",
    "VerifierFailure",
    "CacheInvalid",
    "HostFailure",
)

#: The categories a ``refuse`` fixture (our behaviour kind) may choose: those a host binding may raise
#: on purpose (``BindingError``), each with its own run-time code.
REFUSE_CATEGORIES: tuple[str, ...] = ("PermissionDenied", "NotFound", "InvalidInput", "QuotaExceeded")

#: The facade counters a ``charge`` fixture (our behaviour kind) may report, in the order it charges
#: them; it may also report one log event (``logMessage``).
CHARGE_COUNTERS: tuple[str, ...] = (
    "fileBytesRead",
    "fileBytesWritten",
    "networkBytesRead",
    "networkBytesWritten",
)

# The module sources: the three of the shared format plus our two optional ones.
SOURCE_KEYS: tuple[str, ...] = (
    "module",
    "moduleText",
    "kernelText",
    "kernelPython",
    "moduleTextGenerator",
    "moduleBase64",
)

# Sources whose text is the exact input, so that line/column expectations mean something.
TEXT_SOURCES: frozenset[str] = frozenset(
    {"moduleText", "kernelText", "kernelPython", "moduleTextGenerator", "moduleBase64"}
)

# Outcomes an implementation may report beyond the three a case can expect: a request the
# implementation cannot serve (unknown backend, stage not built yet) and an internal crash.
UNSUPPORTED = "unsupported"
CRASH = "crash"


@dataclass(frozen=True, slots=True)
class Expect:
    """What must happen. Optional fields are ``None`` (not compared); ``value`` uses ``has_value``
    because ``null`` is a real expected value (Unit)."""

    stage: str
    outcome: str
    diagnostic: str | None = None
    error: str | None = None
    pointer: str | None = None
    line: int | None = None
    column: int | None = None
    has_value: bool = False
    value: Any = None
    fuel_used: int | None = None
    usage: Mapping[str, int] | None = None
    binding_calls: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True)
class Case:
    """One checked case. ``raw`` keeps the original JSON object (what the protocol sends);
    ``source_key`` names the single module source it uses; ``origin`` is ``file#/cases/3``."""

    name: str
    area: str
    origin: str
    source_key: str
    expect: Expect
    raw: Mapping[str, Any] = field(repr=False)
    tags: tuple[str, ...] = ()
    backends: tuple[str, ...] | None = None

    @property
    def entrypoint(self) -> str:
        value = self.raw.get("entrypoint", "main")
        return str(value)


@dataclass(frozen=True, slots=True)
class Actual:
    """What an implementation reported: the protocol response, field for field.

    ``line``/``column``/``message`` are optional extras of our protocol; ``usage`` carries
    ``fuelUsed`` and every other ResourceUsage counter by camelCase name."""

    stage: str | None
    outcome: str
    value: Any = None
    error: str | None = None
    diagnostic: str | None = None
    pointer: str | None = None
    line: int | None = None
    column: int | None = None
    usage: Mapping[str, int] | None = None
    binding_calls: Mapping[str, int] | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The protocol response object (every key present, ``null`` when unknown)."""
        return {
            "stage": self.stage,
            "outcome": self.outcome,
            "value": self.value,
            "error": self.error,
            "diagnostic": self.diagnostic,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "usage": dict(self.usage) if self.usage is not None else None,
            "bindingCalls": dict(self.binding_calls) if self.binding_calls is not None else None,
            "message": self.message,
        }


def unsupported(stage: str | None, message: str) -> Actual:
    """An honest "cannot do this" (a missing backend or a stage not built yet): always a failure."""
    return Actual(stage=stage, outcome=UNSUPPORTED, message=message)
