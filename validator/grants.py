"""Capability grants: what one grant of a host policy says, how a grant pattern matches a
capability, and the live revocation list a policy shares with its copies.

Why apart from the policy: plans, the host and the resolver reason about single grants (matching,
expiry, revocation) without needing the rest of the policy.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core.bindings import REENTRANT_CAPABILITY, canonical_record
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.effects import Effect, effect_names, unknown_bits
from dotboxd.core.read_only import EMPTY

_GRANT_PATTERN = re.compile(r"\*|[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*(?:\.\*)?")


def capability_matches(pattern: str, capability: str) -> bool:
    """``*`` matches everything; ``a.b.*`` matches ``a.b.X...`` but not ``a.b``; otherwise exact."""
    if pattern == "*":
        return True
    if pattern.endswith(".*"):
        prefix = pattern[:-1]  # keeps the dot
        return capability.startswith(prefix) and len(capability) > len(prefix)
    return pattern == capability


@dataclass(frozen=True, slots=True)
class CapabilityGrant:
    """One grant. ``parameters`` are trusted host values (roots, byte limits...). ``effects`` are the
    effects this grant allows; None means "the effects of the bindings whose capability it covers"
    (see spec/validation.md, policy resolution). ``expires_at_unix_ms`` makes the grant inactive from
    that instant on (wall clock, or the instant passed to validate)."""

    id: str
    parameters: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    effects: Effect | None = None
    expires_at_unix_ms: int | None = None
    granted_by: str = "host"
    reason: str = ""

    @property
    def is_wildcard(self) -> bool:
        return self.id == "*" or self.id.endswith(".*")

    def matches(self, capability: str) -> bool:
        return capability_matches(self.id, capability)

    def is_active(self, now_unix_ms: int) -> bool:
        return self.expires_at_unix_ms is None or now_unix_ms < self.expires_at_unix_ms

    def record(self) -> str:
        params = canonical_record(*(x for k in sorted(self.parameters) for x in (k, self.parameters[k])))
        effects = None if self.effects is None else int(self.effects)
        return canonical_record("grant", self.id, effects, self.expires_at_unix_ms, params)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "parameters": dict(sorted(self.parameters.items()))}
        if self.effects is not None:
            out["effects"] = effect_names(self.effects)
        if self.expires_at_unix_ms is not None:
            out["expiresAtUnixMillis"] = self.expires_at_unix_ms
        if self.granted_by != "host":
            out["grantedBy"] = self.granted_by
        if self.reason:
            out["reason"] = self.reason
        return out


class Revocations:
    """A thread-safe, append-only set of revoked capability ids or patterns, shared by a policy and
    every copy of it. A capability is revoked when a revoked pattern matches it."""

    __slots__ = ("_items", "_lock")

    def __init__(self) -> None:
        self._items: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, capability: str, reason: str = "") -> None:
        with self._lock:
            self._items.setdefault(capability, reason)

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self._items)

    def __copy__(self) -> Revocations:
        """Itself: the set is shared by a policy and every copy of it."""
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Revocations:
        """Itself, not a snapshot, for the same reason: a deep copy of a policy or plan
        (``copy.deepcopy``, ``dataclasses.asdict``) stays subject to every later revocation -
        a snapshot would let a copy prepared or run after ``revoke`` keep a revoked capability."""
        return self

    def revoked(self, capability: str) -> str | None:
        """The revoked pattern covering ``capability``, or None."""
        for pattern in self.snapshot():
            if capability_matches(pattern, capability):
                return pattern
        return None


def param_text(value: Any) -> str:
    """A grant parameter as invariant text (``True`` -> ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def reentrancy_error() -> DotBoxDError:
    return reject(
        "E-POLICY-GRANT",
        f"'{REENTRANT_CAPABILITY}' is reserved and can never be granted",
        hint="kernels are never re-entered while a binding runs",
        capability=REENTRANT_CAPABILITY,
    )


def grant_shape_problem(g: CapabilityGrant) -> str | None:
    if not isinstance(g.id, str) or _GRANT_PATTERN.fullmatch(g.id) is None:
        return "is not a capability id, 'prefix.*' pattern or '*'"
    if g.id == REENTRANT_CAPABILITY:
        return "is reserved and can never be granted"
    if g.effects is not None and unknown_bits(int(g.effects)):
        return f"allows unknown effect bit(s) {unknown_bits(int(g.effects))}"
    for k, v in g.parameters.items():
        if not isinstance(k, str) or not isinstance(v, str):
            return "has a non-string parameter"
    if g.expires_at_unix_ms is not None and (
        not isinstance(g.expires_at_unix_ms, int) or isinstance(g.expires_at_unix_ms, bool)
    ):
        return "has a non-integer expiry"
    return None
