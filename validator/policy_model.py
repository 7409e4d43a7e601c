"""The immutable host policy value: what a kernel is granted, never what it asks for.

Why apart from the builder and the JSON reader: everything downstream (plans, the host, the
resolver) reads a :class:`Policy` and never builds one, and the policy hash must depend on nothing
but this value.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dotboxd.core.bindings import ASYNC_CAPABILITY, canonical_record, sha256_lines
from dotboxd.core.builtins import EXT_SURFACE
from dotboxd.core.diagnostics import Diagnostic
from dotboxd.core.effects import PURE, Effect, effect_names
from dotboxd.core.limits import LIMIT_FIELDS, Limits
from dotboxd.core.read_only import EMPTY
from dotboxd.validator.grants import CapabilityGrant, Revocations

if TYPE_CHECKING:
    from dotboxd.validator.policy_builder import PolicyBuilder


@dataclass(frozen=True, slots=True)
class Policy:
    """An immutable host policy. Build with ``Policy.builder()`` or :meth:`from_json`.

    ``allowed_effects`` is the explicit or builder-derived effect set (Cpu|Alloc plus the effects of
    grant helpers and grants that state effects). When ``effects_explicit`` is False, a grant with
    ``effects=None`` additionally allows the effects of the bindings it covers; when True (JSON
    ``allowedEffects`` or :meth:`PolicyBuilder.with_allowed_effects`), ``allowed_effects`` is exact."""

    policy_id: str = "default"
    allowed_effects: Effect = PURE
    effects_explicit: bool = False
    grants: tuple[CapabilityGrant, ...] = ()
    limits: Limits = field(default_factory=Limits)
    deterministic: bool = False
    logical_now_unix_ms: int | None = None
    random_seed: int | None = None
    declared_opaque_id_types: frozenset[str] = frozenset()
    input_bounds: Mapping[str, Mapping[str, tuple[int, int]]] = field(default_factory=lambda: EMPTY)
    require_static_bound: bool = False
    prove_rlimit: int | None = None
    """Z3 work units (``rlimit``, a deterministic counter, never wall time) for all the proof
    obligations of one module; None is the prover's default (``smt.MODULE_RLIMIT``). Once spent,
    the remaining questions are UNKNOWN, so strict mode refuses rather than waits."""
    reject_unused_grants: bool = False
    language_surface: str = EXT_SURFACE
    revocations: Revocations = field(default_factory=Revocations, compare=False, repr=False)
    policy_hash: str = field(default="", init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "policy_hash", _policy_hash(self))

    # -- construction ---------------------------------------------------------------------------

    @staticmethod
    def default() -> Policy:
        """Pure computation only, default limits."""
        return Policy()

    @staticmethod
    def builder() -> PolicyBuilder:
        from dotboxd.validator.policy_builder import PolicyBuilder  # the builder builds Policy values

        return PolicyBuilder()

    @staticmethod
    def from_json(
        data: bytes | str | Mapping[str, Any], variables: Mapping[str, str] | None = None
    ) -> Policy:
        """Read the JSON policy form (the conformance ``policy`` object). ``variables`` replaces
        placeholders such as ``$ROOT`` inside grant parameter values. Raises E-POLICY-SCHEMA on a
        malformed shape, E-POLICY-LIMIT / E-POLICY-BRAND / E-POLICY-GRANT on bad values."""
        from dotboxd.validator.policy_json import policy_from_json  # the reader builds Policy values

        return policy_from_json(data, variables or {})

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"policyId": self.policy_id, "limits": self.limits.to_json()}
        if self.effects_explicit:
            out["allowedEffects"] = effect_names(self.allowed_effects)
        out["grants"] = [g.to_json() for g in self.grants if g.id != ASYNC_CAPABILITY]
        out["allowRuntimeAsync"] = any(g.id == ASYNC_CAPABILITY for g in self.grants)
        if self.deterministic:
            out["deterministic"] = {
                "logicalNowUnixMillis": self.logical_now_unix_ms,
                "randomSeed": self.random_seed,
            }
        out["declaredOpaqueIdTypes"] = sorted(self.declared_opaque_id_types)
        if self.input_bounds:
            out["inputBounds"] = {
                fn: {p: list(b) for p, b in sorted(ps.items())}
                for fn, ps in sorted(self.input_bounds.items())
            }
        out["requireStaticBound"] = self.require_static_bound
        if self.prove_rlimit is not None:
            out["proveRlimit"] = self.prove_rlimit
        if self.reject_unused_grants:
            out["rejectUnusedGrants"] = True
        if self.language_surface != EXT_SURFACE:
            out["languageSurface"] = self.language_surface
        return out

    # -- queries --------------------------------------------------------------------------------

    def active_grants(self, now_unix_ms: int | None = None) -> tuple[CapabilityGrant, ...]:
        """Grants neither expired at ``now`` (default: the wall clock) nor revoked."""
        now = now_ms() if now_unix_ms is None else now_unix_ms
        return tuple(g for g in self.grants if g.is_active(now) and self.revocations.revoked(g.id) is None)

    def grant_for(self, capability: str, now_unix_ms: int | None = None) -> CapabilityGrant | None:
        """The active grant covering ``capability`` (exact grants win over patterns), or None when the
        capability is not granted, expired or revoked."""
        if self.revocations.revoked(capability) is not None:
            return None
        matching = [g for g in self.active_grants(now_unix_ms) if g.matches(capability)]
        if not matching:
            return None
        exact = [g for g in matching if g.id == capability]
        return (exact or matching)[0]

    def is_granted(self, capability: str, now_unix_ms: int | None = None) -> bool:
        """The run-time RequireCapability test: granted, unexpired, unrevoked."""
        return self.grant_for(capability, now_unix_ms) is not None

    def revoke(self, capability: str, reason: str = "") -> None:
        """Revoke ``capability`` (an id or a pattern) for this policy and every plan prepared with it."""
        self.revocations.add(capability, reason)

    def is_revoked(self, capability: str) -> bool:
        return self.revocations.revoked(capability) is not None

    def warnings(self) -> tuple[Diagnostic, ...]:
        """Advisory diagnostics (W-POLICY-WILDCARD for each wildcard grant)."""
        out = []
        for i, g in enumerate(self.grants):
            if g.is_wildcard:
                scope = "every capability" if g.id == "*" else f"every capability under '{g.id[:-2]}'"
                out.append(
                    Diagnostic(
                        "W-POLICY-WILDCARD",
                        f"grant '{g.id}' covers {scope}; prefer exact capability grants",
                        f"/grants/{i}",
                        None,
                        {"grant": g.id},
                        "list the capabilities the kernel needs, one grant each",
                    )
                )
        return tuple(out)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def _policy_hash(p: Policy) -> str:
    lines = [
        canonical_record("dotboxd-py-policy-1"),
        canonical_record(
            "policy",
            p.policy_id,
            int(p.allowed_effects),
            p.effects_explicit,
            p.deterministic,
            p.logical_now_unix_ms,
            p.random_seed,
            p.require_static_bound,
            p.reject_unused_grants,
        ),
        canonical_record("limits", *(x for n in LIMIT_FIELDS for x in (n, getattr(p.limits, n)))),
    ]
    if p.language_surface != EXT_SURFACE:  # the default leaves every existing policy hash unchanged
        lines.append(canonical_record("language-surface", p.language_surface))
    if p.prove_rlimit is not None:  # likewise: only a policy that sets it hashes differently
        lines.append(canonical_record("prove-rlimit", p.prove_rlimit))
    lines.extend(sorted(g.record() for g in p.grants))
    lines.extend(sorted(canonical_record("opaque-id-type", b) for b in p.declared_opaque_id_types))
    lines.extend(
        sorted(
            canonical_record("input-bound", fn, param, lo, hi)
            for fn, params in p.input_bounds.items()
            for param, (lo, hi) in params.items()
        )
    )
    return sha256_lines(lines)
