"""Event contracts: which events a host publishes and the typed fields each one carries.

The contract is the host's promise to plugin authors. It is declared in host code (never taken from
an envelope), so an envelope can only *name* events, and ``install`` refuses names the contract does
not list (E-EVENT-UNKNOWN). Fields are limited to the scalar types a filter can bind by name
(``Bool``, ``I32``, ``I64``, ``F64``, ``String``): a published event is a flat record, checked field
by field before any kernel sees it (E-EVENT-FIELDS), so a host bug cannot hand a kernel an
ill-typed value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from dotboxd.core import literal_rules
from dotboxd.core.diagnostics import reject
from dotboxd.core.read_only import ReadOnlyDict
from dotboxd.core.types import BOOL, F64, I32, I64, STRING, SandboxType, to_type_ref
from dotboxd.core.values import check_typed

#: The types an event field or a live setting may have, by their sandbox spelling.
SCALARS: Mapping[str, SandboxType] = MappingProxyType(
    {"Bool": BOOL, "I32": I32, "I64": I64, "F64": F64, "String": STRING}
)

#: The prefix that marks a kernel parameter as an event field (``e_amount`` binds field ``amount``).
FIELD_PREFIX = "e_"


def scalar_problem(value: object, sandbox_type: SandboxType) -> str | None:
    """Why ``value`` is not a well-formed value of the scalar ``sandbox_type`` (None when it is);
    the same check the runtime applies to binding results, so hub and kernels agree on values."""
    return check_typed(value, to_type_ref(sandbox_type), literal_rules)


@dataclass(frozen=True)
class EventType:
    """One event a host publishes: its name and its fields (name -> scalar type name)."""

    name: str
    fields: Mapping[str, str]
    types: Mapping[str, SandboxType] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("an event type needs a name")
        resolved: dict[str, SandboxType] = {}
        for field_name, type_name in self.fields.items():
            if not field_name.isidentifier():
                raise ValueError(f"event {self.name}: field {field_name!r} is not an identifier")
            if type_name not in SCALARS:
                raise ValueError(f"event {self.name}: field {field_name} has unsupported type {type_name!r}")
            resolved[field_name] = SCALARS[type_name]
        object.__setattr__(self, "fields", ReadOnlyDict(self.fields))
        object.__setattr__(self, "types", ReadOnlyDict(resolved))

    def check(self, values: Mapping[str, object]) -> dict[str, object]:
        """The published ``values`` as a plain dict, after checking they are exactly this event's
        fields with their types (DotBoxDError E-EVENT-FIELDS otherwise)."""
        if not isinstance(values, Mapping):
            raise reject("E-EVENT-FIELDS", f"event {self.name}: fields must be a mapping")
        missing = sorted(set(self.types) - set(values))
        extra = sorted(str(k) for k in set(values) - set(self.types))
        if missing or extra:
            raise reject(
                "E-EVENT-FIELDS",
                f"event {self.name}: fields do not match its contract",
                hint=f"publish exactly the fields {sorted(self.types)}",
                missing=missing,
                unexpected=extra,
            )
        for name, sandbox_type in self.types.items():
            problem = scalar_problem(values[name], sandbox_type)
            if problem is not None:
                raise reject(
                    "E-EVENT-FIELDS",
                    f"event {self.name}: field {name}: {problem}",
                    field=name,
                    expected=str(sandbox_type),
                )
        return {name: values[name] for name in self.types}


@dataclass(frozen=True)
class EventContract:
    """A named set of event types (the ``contract`` an envelope's manifest targets)."""

    name: str
    events: Mapping[str, EventType]

    @staticmethod
    def of(name: str, events: Iterable[EventType]) -> EventContract:
        """Build a contract from its event types (ValueError on a repeated event name)."""
        table: dict[str, EventType] = {}
        for event in events:
            if event.name in table:
                raise ValueError(f"contract {name}: event {event.name} declared twice")
            table[event.name] = event
        return EventContract(name, ReadOnlyDict(table))
