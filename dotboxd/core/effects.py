"""Effect bits: what a kernel may do to the world, as a small integer flag set.

Every expression costs CPU; allocation is always allowed; everything else (time, randomness, files,
network, host state, concurrency, audit) exists only through host bindings and must be granted by the
policy. The integers take part in the policy, binding-manifest and plan hashes, so they are fixed here
once and never renumbered.

Choice (spec/validation.md section 9): we follow DotBoxD's *implemented* enum, not its spec text. The spec
lists ``DatabaseRead=512`` and ``DatabaseWrite=1024``; the implementation dropped the database bits
(databases are reached only through reviewed host facades, which declare HostState* effects) and
reuses 512 for ``Concurrency`` (added by every async binding). Bit 1024 is unassigned: an effect set
carrying it is rejected (E-BINDING-EFFECT in a binding, E-POLICY-EFFECT in a policy), as is any other
unknown bit.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntFlag


class Effect(IntFlag):
    """A set of effects. ``Effect.CPU | Effect.HOST_STATE_WRITE`` is a binding's declaration."""

    NONE = 0
    CPU = 1
    ALLOC = 2
    TIME = 4
    RANDOM = 8
    FILE_READ = 16
    FILE_WRITE = 32
    NETWORK = 64
    HOST_STATE_READ = 128
    HOST_STATE_WRITE = 256
    CONCURRENCY = 512
    AUDIT = 2048


#: Pure computation: the only effects a policy allows without any grant.
PURE: Effect = Effect.CPU | Effect.ALLOC

#: Every assigned bit (bit 1024, DotBoxD's spec-only DatabaseWrite, is deliberately absent).
ALL_EFFECTS: Effect = (
    Effect.CPU
    | Effect.ALLOC
    | Effect.TIME
    | Effect.RANDOM
    | Effect.FILE_READ
    | Effect.FILE_WRITE
    | Effect.NETWORK
    | Effect.HOST_STATE_READ
    | Effect.HOST_STATE_WRITE
    | Effect.CONCURRENCY
    | Effect.AUDIT
)

#: Effects a deterministic policy may neither require nor allow (spec/validation.md section 10).
NONDETERMINISTIC_IO: Effect = (
    Effect.FILE_READ | Effect.FILE_WRITE | Effect.NETWORK | Effect.HOST_STATE_READ | Effect.HOST_STATE_WRITE
)

#: The wire/manifest spelling of each bit, in ascending bit order.
EFFECT_NAMES: dict[Effect, str] = {
    Effect.CPU: "Cpu",
    Effect.ALLOC: "Alloc",
    Effect.TIME: "Time",
    Effect.RANDOM: "Random",
    Effect.FILE_READ: "FileRead",
    Effect.FILE_WRITE: "FileWrite",
    Effect.NETWORK: "Network",
    Effect.HOST_STATE_READ: "HostStateRead",
    Effect.HOST_STATE_WRITE: "HostStateWrite",
    Effect.CONCURRENCY: "Concurrency",
    Effect.AUDIT: "Audit",
}

_BY_NAME: dict[str, Effect] = {name: bit for bit, name in EFFECT_NAMES.items()}


def unknown_bits(value: int) -> int:
    """The bits of ``value`` that name no effect (0 when every bit is known)."""
    return int(value) & ~int(ALL_EFFECTS)


def effect_names(effects: Effect) -> list[str]:
    """The names of the bits set in ``effects``, in ascending bit order (stable for JSON and hashes)."""
    return [name for bit, name in EFFECT_NAMES.items() if effects & bit]


def effects_text(effects: Effect) -> str:
    """``Cpu|Alloc|FileRead``, or ``None`` for the empty set: the form used in messages."""
    names = effect_names(effects)
    return "|".join(names) if names else "None"


def effect_from_name(name: str) -> Effect | None:
    """The bit for a wire name (exact spelling, e.g. ``HostStateWrite``), or None when unknown."""
    return _BY_NAME.get(name)


def parse_effect_names(names: Iterable[str]) -> tuple[Effect, list[str]]:
    """Combine wire names into a set; also return the names that are not known effects."""
    result = Effect.NONE
    unknown: list[str] = []
    for name in names:
        bit = _BY_NAME.get(name)
        if bit is None:
            unknown.append(name)
        else:
            result |= bit
    return result, unknown
