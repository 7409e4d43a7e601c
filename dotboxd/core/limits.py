"""Every per-run resource limit of DotBoxD, declared once.

Why here: the policy (validator), the meter (runtime), the prover (validator/prover), the JSON
reader, the schema test and the spec table all need the same facts about a limit - its Python name,
its JSON name, its default, its ceiling, what it counts and which quota code stops a run at it. They
used to spell these separately and drift silently (the meter copied the policy's limits by attribute
name and kept its own defaults for any it did not find). Now each limit is one field of
:class:`Limits` whose metadata is its :class:`LimitSpec`; :data:`LIMITS` is the table read from those
fields, so adding a limit is one field here plus the code that enforces it.

Rules every limit shares: an integer >= 0, 0 denies the category, at most its ``ceiling``. A
:class:`Limits` value may hold bad values (a policy builder collects every problem as a diagnostic,
see :meth:`Limits.problems`); :meth:`Limits.checked` is the raising form for code that takes limits
from a trusted place.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Final

from dotboxd.core.costs import MAX_CALL_DEPTH_CEILING

INT32_MAX: Final = 2**31 - 1
LIMIT_CEILING: Final = 2**63 - 1
"""The ceiling of every limit that has no tighter one (a signed 64-bit counter, as in DotBoxD)."""
MIB: Final = 1_048_576


@dataclass(frozen=True, slots=True)
class LimitSpec:
    """What one limit means. ``ceiling_note`` follows the ceiling in an error message. ``counter`` is the meter attribute it bounds (None: it bounds the size
    of one value or message, or a count kept elsewhere, such as the run's command queue); ``quota_code`` is the run error at the limit;
    ``null_is_default`` says the JSON form accepts ``null`` for the default (DotBoxD's wall time)."""

    name: str
    json_name: str
    default: int
    ceiling: int
    ceiling_note: str
    unit: str
    description: str
    quota_code: str
    counter: str | None
    null_is_default: bool


def _limit(
    default: int,
    unit: str,
    description: str,
    quota_code: str,
    *,
    counter: str | None = None,
    ceiling: int = LIMIT_CEILING,
    ceiling_note: str = "",
    null_is_default: bool = False,
) -> Any:
    """One :class:`Limits` field with its facts (the name and JSON name come from the field)."""
    facts = {
        "default": default,
        "ceiling": ceiling,
        "ceiling_note": ceiling_note,
        "unit": unit,
        "description": description,
        "quota_code": quota_code,
        "counter": counter,
        "null_is_default": null_is_default,
    }
    return field(default=default, metadata=MappingProxyType({"limit": facts}))


def limit_json_name(snake: str) -> str:
    """``max_loop_iterations`` -> ``maxLoopIterations`` (the JSON/conformance spelling)."""
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclass(frozen=True, slots=True)
class Limits:
    """Every resource limit of DotBoxD with its default (the table; see the module docstring)."""

    max_fuel: int = _limit(100_000, "fuel", "abstract steps", "R-QUOTA-FUEL", counter="fuel_used")
    max_loop_iterations: int = _limit(
        100_000, "iterations", "loop iterations started", "R-QUOTA-LOOP", counter="loop_iterations"
    )
    max_wall_time_ms: int = _limit(
        100,
        "ms",
        "wall time from the run's start",
        "R-TIMEOUT",
        ceiling=INT32_MAX,
        ceiling_note=" ms",
        null_is_default=True,
    )
    max_allocated_bytes: int = _limit(
        MIB, "bytes", "estimated bytes allocated", "R-QUOTA-ALLOCATION", counter="allocated_bytes"
    )
    max_call_depth: int = _limit(
        64,
        "frames",
        "module-function call depth (the entrypoint is 1)",
        "R-QUOTA-CALL-DEPTH",
        counter="call_depth",
        ceiling=MAX_CALL_DEPTH_CEILING,
        ceiling_note=" (the call-depth ceiling)",
    )
    max_host_calls: int = _limit(
        100, "calls", "host-binding and pure built-in calls", "R-QUOTA-HOST-CALLS", counter="host_calls"
    )
    max_list_length: int = _limit(10_000, "items", "the length of one list", "R-QUOTA-LIST-LENGTH")
    max_map_entries: int = _limit(10_000, "entries", "the entries of one map", "R-QUOTA-MAP-ENTRIES")
    max_collection_depth: int = _limit(32, "levels", "the nesting of one value", "R-QUOTA-COLLECTION-DEPTH")
    max_total_collection_elements: int = _limit(
        100_000,
        "elements",
        "the sizes of every new composite value",
        "R-QUOTA-COLLECTION-ELEMENTS",
        counter="collection_elements",
    )
    max_file_bytes_read: int = _limit(
        MIB,
        "bytes",
        "file bytes read (set by a file.read grant)",
        "R-QUOTA-FILE-READ",
        counter="file_bytes_read",
    )
    max_file_bytes_written: int = _limit(
        0,
        "bytes",
        "file bytes written (raised by a file.write grant)",
        "R-QUOTA-FILE-WRITE",
        counter="file_bytes_written",
    )
    max_network_bytes_read: int = _limit(
        MIB,
        "bytes",
        "network bytes read (set by a net.http.get grant)",
        "R-QUOTA-NETWORK-READ",
        counter="network_bytes_read",
    )
    max_network_bytes_written: int = _limit(
        MIB,
        "bytes",
        "network bytes written (set by a net.http.get grant)",
        "R-QUOTA-NETWORK-WRITE",
        counter="network_bytes_written",
    )
    max_log_events: int = _limit(100, "events", "log events", "R-QUOTA-LOG-EVENTS", counter="log_events")
    max_log_message_length: int = _limit(
        4_096, "UTF-16 units", "the length of one log message", "R-QUOTA-LOG-MESSAGE"
    )
    max_string_length: int = _limit(
        65_536, "UTF-16 units", "the length of one string", "R-QUOTA-STRING-LENGTH"
    )
    max_total_string_bytes: int = _limit(
        MIB,
        "bytes",
        "2 per UTF-16 unit of every new text",
        "R-QUOTA-STRING-BYTES",
        counter="string_bytes",
    )
    max_commands: int = _limit(
        1_000,
        "commands",
        "host-state commands a run queues (applied only if it succeeds)",
        "R-QUOTA-COMMANDS",
    )

    def problems(self) -> list[tuple[str, str]]:
        """``(jsonName, reason)`` for every limit out of range (empty when all are valid)."""
        out: list[tuple[str, str]] = []
        for spec in LIMITS:
            value = getattr(self, spec.name)
            if not isinstance(value, int) or isinstance(value, bool):
                out.append((spec.json_name, f"must be an integer, got {type(value).__name__}"))
            elif value < 0:
                out.append((spec.json_name, f"must be >= 0, got {value}"))
            elif value > spec.ceiling:
                out.append((spec.json_name, f"must be <= {spec.ceiling}{spec.ceiling_note}, got {value}"))
        return out

    def checked(self) -> Limits:
        """``self`` when every limit is in range; ValueError naming the first bad one otherwise."""
        bad = self.problems()
        if bad:
            name, reason = bad[0]
            raise ValueError(f"limit {name} {reason}")
        return self

    @property
    def wall_time_ms(self) -> int:
        return self.max_wall_time_ms

    def to_json(self) -> dict[str, int]:
        return {spec.json_name: getattr(self, spec.name) for spec in LIMITS}

    def with_values(self, **values: int) -> Limits:
        return replace(self, **values)


def _spec_of(f: Any) -> LimitSpec:
    return LimitSpec(name=f.name, json_name=limit_json_name(f.name), **f.metadata["limit"])


LIMITS: Final[tuple[LimitSpec, ...]] = tuple(_spec_of(f) for f in fields(Limits))
"""The limit table, in declaration order (the order of the policy hash and the JSON form)."""
LIMIT_FIELDS: Final[tuple[str, ...]] = tuple(spec.name for spec in LIMITS)
LIMIT_BY_NAME: Final = MappingProxyType({spec.name: spec for spec in LIMITS})
LIMIT_BY_JSON: Final = MappingProxyType({spec.json_name: spec for spec in LIMITS})
DEFAULT_LIMITS: Final = Limits()

__all__ = [
    "DEFAULT_LIMITS",
    "INT32_MAX",
    "LIMITS",
    "LIMIT_BY_JSON",
    "LIMIT_BY_NAME",
    "LIMIT_CEILING",
    "LIMIT_FIELDS",
    "MIB",
    "LimitSpec",
    "Limits",
    "limit_json_name",
]
