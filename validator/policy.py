"""Host policy: what a kernel is granted, never what it asks for.

A :class:`Policy` is an immutable value built by :class:`PolicyBuilder` (``Policy.builder()``) or read
from the JSON form used by ``dotboxd check --policy`` and the conformance corpus. It holds the allowed
effects, capability grants (with optional expiry), every resource limit of DotBoxD with its
defaults, determinism settings, the declared opaque-id brands and the prover's input bounds.

Defaults deny everything except pure computation (Cpu|Alloc). Grants match capabilities exactly, or
by a trailing ``.*`` pattern (``a.b.*`` matches ``a.b.x`` but not ``a.b``), or ``*`` for everything;
wildcards work but :meth:`Policy.warnings` flags them. Revocation is live: ``policy.revoke(cap)``
records the capability in a revocation list shared by every copy of the policy, so plans already
prepared against it fail before they run (:meth:`ExecutionPlan.ensure_usable`).

Grant-parameter rules for the built-in capabilities (spec/validation.md section 10) live here too, in
:func:`builtin_grant_problem`; the policy-resolution pass applies them together with the custom
bindings' grant validators.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from dotboxd.core.bindings import ASYNC_CAPABILITY, REENTRANT_CAPABILITY, canonical_record, sha256_lines
from dotboxd.core.builtins import EXT_SURFACE, SURFACES
from dotboxd.core.costs import MAX_CALL_DEPTH_CEILING
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, reject
from dotboxd.core.effects import PURE, Effect, effect_names, parse_effect_names, unknown_bits
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_json
from dotboxd.core.suggest import did_you_mean
from dotboxd.core.types import brand_name_problem

INT32_MAX = 2**31 - 1
_LIMIT_CEILING = 2**63 - 1
MIB = 1_048_576


# ---------------------------------------------------------------------------------------------
# Limits


@dataclass(frozen=True, slots=True)
class Limits:
    """Every resource limit of DotBoxD with its default. All are integers >= 0 and 0 denies
    the category. ``max_wall_time_ms`` is at most 2^31-1 (DotBoxD's null means the 100 ms default).
    Strings count UTF-16 code units; string bytes are 2 per unit."""

    max_fuel: int = 100_000
    max_loop_iterations: int = 100_000
    max_wall_time_ms: int = 100
    max_allocated_bytes: int = MIB
    max_call_depth: int = 64
    max_host_calls: int = 100
    max_list_length: int = 10_000
    max_map_entries: int = 10_000
    max_collection_depth: int = 32
    max_total_collection_elements: int = 100_000
    max_file_bytes_read: int = MIB
    max_file_bytes_written: int = 0
    max_network_bytes_read: int = MIB
    max_network_bytes_written: int = MIB
    max_log_events: int = 100
    max_log_message_length: int = 4_096
    max_string_length: int = 65_536
    max_total_string_bytes: int = MIB

    def problems(self) -> list[tuple[str, str]]:
        """``(camelCaseName, reason)`` for every limit out of range (empty when all are valid)."""
        out: list[tuple[str, str]] = []
        for f in fields(self):
            value = getattr(self, f.name)
            name = limit_json_name(f.name)
            if not isinstance(value, int) or isinstance(value, bool):
                out.append((name, f"must be an integer, got {type(value).__name__}"))
            elif value < 0:
                out.append((name, f"must be >= 0, got {value}"))
            elif f.name == "max_wall_time_ms" and value > INT32_MAX:
                out.append((name, f"must be <= {INT32_MAX} ms, got {value}"))
            elif f.name == "max_call_depth" and value > MAX_CALL_DEPTH_CEILING:
                out.append(
                    (name, f"must be <= {MAX_CALL_DEPTH_CEILING} (the call-depth ceiling), got {value}")
                )
            elif value > _LIMIT_CEILING:
                out.append((name, f"must be <= {_LIMIT_CEILING}, got {value}"))
        return out

    def to_json(self) -> dict[str, int]:
        return {limit_json_name(f.name): getattr(self, f.name) for f in fields(self)}

    def with_values(self, **values: int) -> Limits:
        return replace(self, **values)


LIMIT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Limits))


def limit_json_name(snake: str) -> str:
    """``max_loop_iterations`` -> ``maxLoopIterations`` (the JSON/conformance spelling)."""
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


_LIMIT_BY_JSON: dict[str, str] = {limit_json_name(n): n for n in LIMIT_FIELDS}


# ---------------------------------------------------------------------------------------------
# Grants

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
    parameters: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
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

    def revoked(self, capability: str) -> str | None:
        """The revoked pattern covering ``capability``, or None."""
        for pattern in self.snapshot():
            if capability_matches(pattern, capability):
                return pattern
        return None


# ---------------------------------------------------------------------------------------------
# Policy


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
    input_bounds: Mapping[str, Mapping[str, tuple[int, int]]] = field(
        default_factory=lambda: MappingProxyType({})
    )
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
        return PolicyBuilder()

    @staticmethod
    def from_json(
        data: bytes | str | Mapping[str, Any], variables: Mapping[str, str] | None = None
    ) -> Policy:
        """Read the JSON policy form (the conformance ``policy`` object). ``variables`` replaces
        placeholders such as ``$ROOT`` inside grant parameter values. Raises E-POLICY-SCHEMA on a
        malformed shape, E-POLICY-LIMIT / E-POLICY-BRAND / E-POLICY-GRANT on bad values."""
        return _policy_from_json(data, variables or {})

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


# ---------------------------------------------------------------------------------------------
# Builder


class PolicyBuilder:
    """Fluent construction. Starts from Cpu|Alloc and default limits; grant helpers add their effects
    (file.write adds Audit too; the HTTP helper also allows runtime async)."""

    def __init__(self) -> None:
        self._policy_id = "default"
        self._effects: Effect = PURE
        self._explicit: Effect | None = None
        self._grants: list[CapabilityGrant] = []
        self._limits: dict[str, int] = {}
        self._deterministic = False
        self._now: int | None = None
        self._seed: int | None = None
        self._brands: set[str] = set()
        self._bounds: dict[str, dict[str, tuple[int, int]]] = {}
        self._static = False
        self._prove_rlimit: int | None = None
        self._reject_unused = False
        self._surface = EXT_SURFACE
        self._revocations: Revocations | None = None

    # -- identity and effects -------------------------------------------------------------------

    def with_policy_id(self, policy_id: str) -> PolicyBuilder:
        self._policy_id = policy_id
        return self

    def allow_pure_computation(self) -> PolicyBuilder:
        self._effects |= PURE
        return self

    def allow_effects(self, effects: Effect) -> PolicyBuilder:
        """Add effects to the derived set."""
        self._effects |= effects
        return self

    def with_allowed_effects(self, effects: Effect) -> PolicyBuilder:
        """Set the allowed effects exactly (grants then add nothing)."""
        self._explicit = Effect(int(effects))
        return self

    # -- limits (one method per limit; file and network bytes are set by grant helpers) --

    def with_limits(self, **values: int) -> PolicyBuilder:
        for name, value in values.items():
            if name not in LIMIT_FIELDS:
                raise reject(
                    "E-POLICY-LIMIT", f"unknown limit '{name}'", hint=f"known: {', '.join(LIMIT_FIELDS)}"
                )
            self._limits[name] = value
        return self

    def with_fuel(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_fuel=n)

    def with_max_loop_iterations(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_loop_iterations=n)

    def with_max_wall_time_ms(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_wall_time_ms=n)

    def with_max_allocated_bytes(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_allocated_bytes=n)

    def with_max_call_depth(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_call_depth=n)

    def with_max_host_calls(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_host_calls=n)

    def with_max_list_length(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_list_length=n)

    def with_max_map_entries(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_map_entries=n)

    def with_max_collection_depth(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_collection_depth=n)

    def with_max_total_collection_elements(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_total_collection_elements=n)

    def with_max_log_events(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_log_events=n)

    def with_max_log_message_length(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_log_message_length=n)

    def with_max_string_length(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_string_length=n)

    def with_max_total_string_bytes(self, n: int) -> PolicyBuilder:
        return self.with_limits(max_total_string_bytes=n)

    # -- grants ---------------------------------------------------------------------------------

    def grant(
        self,
        capability: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        effects: Effect | None = None,
        expires_at_unix_ms: int | None = None,
        granted_by: str = "host",
        reason: str = "",
        **params: Any,
    ) -> PolicyBuilder:
        """Grant ``capability`` (an id, ``a.b.*`` or ``*``) with string parameters. Non-string values
        are written as invariant text (``True`` -> ``true``). ``effects`` names what the grant allows;
        omitted, it allows the effects of the bindings the capability covers."""
        if capability == REENTRANT_CAPABILITY:
            raise _reentrancy_error()
        merged = {**(parameters or {}), **params}
        text_params = {str(k): _param_text(v) for k, v in merged.items()}
        if effects is not None:
            self._effects |= effects
        self._grants.append(
            CapabilityGrant(
                capability,
                MappingProxyType(dict(sorted(text_params.items()))),
                None if effects is None else Effect(int(effects)),
                expires_at_unix_ms,
                granted_by,
                reason,
            )
        )
        return self

    def grant_file_read(
        self, root: str, max_bytes: int, allowed_extensions: Iterable[str] | None = None, **options: Any
    ) -> PolicyBuilder:
        params: dict[str, Any] = {"root": root, "maxBytesPerRun": max_bytes}
        if allowed_extensions is not None:
            params["allowedExtensions"] = ",".join(allowed_extensions)
        self._limits["max_file_bytes_read"] = max_bytes
        return self.grant("file.read", params, effects=Effect.FILE_READ, **options)

    def grant_file_write(
        self,
        root: str,
        max_bytes: int,
        allow_create: bool = False,
        allow_overwrite: bool = False,
        **options: Any,
    ) -> PolicyBuilder:
        params = {
            "root": root,
            "maxBytesPerRun": max_bytes,
            "allowCreate": allow_create,
            "allowOverwrite": allow_overwrite,
        }
        self._limits["max_file_bytes_written"] = max_bytes
        return self.grant("file.write", params, effects=Effect.FILE_WRITE | Effect.AUDIT, **options)

    def grant_http_get(
        self,
        hosts: Iterable[str],
        max_response_bytes: int,
        *,
        allowed_schemes: Iterable[str] = ("https",),
        max_request_bytes: int = MIB,
        timeout_ms: int = 2000,
        allow_ip_literals: bool = False,
        allow_private_network: bool = False,
    ) -> PolicyBuilder:
        params = {
            "allowedHosts": ",".join(hosts),
            "allowedSchemes": ",".join(allowed_schemes),
            "maxRequestBytes": max_request_bytes,
            "maxResponseBytes": max_response_bytes,
            "timeoutMs": timeout_ms,
            "allowIpLiterals": allow_ip_literals,
            "allowPrivateNetwork": allow_private_network,
        }
        self._limits["max_network_bytes_read"] = max_response_bytes
        self._limits["max_network_bytes_written"] = max_request_bytes
        self.grant("net.http.get", params, effects=Effect.NETWORK)
        return self.allow_runtime_async()

    def grant_time_now(self) -> PolicyBuilder:
        return self.grant("time.now", effects=Effect.TIME)

    def grant_random(self) -> PolicyBuilder:
        return self.grant("random", effects=Effect.RANDOM)

    def grant_logging(self) -> PolicyBuilder:
        return self.grant("log.write", effects=Effect.AUDIT)

    def allow_runtime_async(self) -> PolicyBuilder:
        """Grant ``dotboxd.runtime.async`` (idempotent, parameterless) and allow Concurrency."""
        if not any(g.id == ASYNC_CAPABILITY for g in self._grants):
            self.grant(ASYNC_CAPABILITY, effects=Effect.CONCURRENCY)
        return self

    def allow_intra_kernel_reentrancy(self) -> PolicyBuilder:
        """Always refused: ``dotboxd.runtime.reentrant`` is reserved and never grantable."""
        raise _reentrancy_error()

    # -- determinism, brands, prover ------------------------------------------------------------

    def deterministic(
        self, logical_now_unix_ms: int | None = None, random_seed: int | None = None
    ) -> PolicyBuilder:
        """Deterministic mode: Time reads ``logical_now``, Random replays ``random_seed``; IO, host
        state and async are rejected at validation."""
        self._deterministic = True
        self._now = logical_now_unix_ms
        self._seed = random_seed
        return self

    def declare_opaque_id_type(self, *brands: str) -> PolicyBuilder:
        self._brands.update(brands)
        return self

    def with_input_bounds(self, function_id: str, **bounds: tuple[int, int]) -> PolicyBuilder:
        self._bounds.setdefault(function_id, {}).update(bounds)
        return self

    def require_static_bound(self, required: bool = True) -> PolicyBuilder:
        self._static = required
        return self

    def with_prove_rlimit(self, units: int | None) -> PolicyBuilder:
        """The prover's Z3 budget for one module (``proveRlimit``; None: the default)."""
        self._prove_rlimit = units
        return self

    def reject_unused_grants(self, reject: bool = True) -> PolicyBuilder:
        """Strict mode: every grant must be used by the module (E-POLICY-GRANT otherwise). Off by
        default, as in DotBoxD, because one host policy usually serves many kernels; a host that
        keeps one policy per kernel turns it on to enforce least privilege per kernel."""
        self._reject_unused = reject
        return self

    def with_language_surface(self, surface: str) -> PolicyBuilder:
        """Limit kernels to a language surface (``dotboxd.core.builtins.SURFACES``): under
        ``dotboxd-1`` a call of an extension built-in is E-CALL-SURFACE. The default,
        ``dotboxd-1+ext1``, admits every built-in."""
        self._surface = surface
        return self

    def tolerate_unused_grants(self, tolerate: bool = True) -> PolicyBuilder:
        """The inverse of ``reject_unused_grants``: unused grants of capabilities the host knows are
        a warning (W-POLICY-UNUSED-GRANT), not an error. This is the default."""
        self._reject_unused = not tolerate
        return self

    def with_revocations(self, revocations: Revocations) -> PolicyBuilder:
        """Share a revocation list with other policies (revoking once revokes everywhere)."""
        self._revocations = revocations
        return self

    def build(self) -> Policy:
        """Freeze the policy; raise E-POLICY-LIMIT, E-POLICY-BRAND or E-POLICY-GRANT on bad values."""
        limits = Limits().with_values(**self._limits)
        diags = [
            Diagnostic(
                "E-POLICY-LIMIT", f"limit {name} {reason}", f"/limits/{name}", None, {"limit": name}, ""
            )
            for name, reason in limits.problems()
        ]
        units = self._prove_rlimit
        if units is not None and (isinstance(units, bool) or not 1 <= units <= _LIMIT_CEILING):
            diags.append(
                Diagnostic(
                    "E-POLICY-LIMIT",
                    f"proveRlimit must be between 1 and {_LIMIT_CEILING}, got {units}",
                    "/proveRlimit",
                    None,
                    {"limit": "proveRlimit"},
                    "proveRlimit counts the prover's Z3 work units for one module (default 15,000,000)",
                )
            )
        for brand in sorted(self._brands):
            problem = brand_name_problem(brand) if isinstance(brand, str) else "is not a string"
            if problem is not None:
                diags.append(
                    Diagnostic(
                        "E-POLICY-BRAND",
                        f"opaque id type '{brand}' {problem}",
                        "/declaredOpaqueIdTypes",
                        None,
                        {"brand": str(brand)},
                        "",
                    )
                )
        for i, g in enumerate(self._grants):
            problem = grant_shape_problem(g)
            if problem is not None:
                diags.append(
                    Diagnostic(
                        "E-POLICY-GRANT",
                        f"grant '{g.id}' {problem}",
                        f"/grants/{i}",
                        None,
                        {"grant": g.id},
                        "",
                    )
                )
        for fn, params in self._bounds.items():
            for name, bound in params.items():
                if not _valid_bound(bound):
                    diags.append(
                        Diagnostic(
                            "E-POLICY-SCHEMA",
                            f"input bound {fn}.{name} must be [lo, hi] integers with lo <= hi",
                            f"/inputBounds/{fn}/{name}",
                            None,
                            {},
                            "",
                        )
                    )
        for name, value in (("logicalNowUnixMillis", self._now), ("randomSeed", self._seed)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                diags.append(
                    Diagnostic(
                        "E-POLICY-SCHEMA",
                        f"{name} must be an integer",
                        f"/deterministic/{name}",
                        None,
                        {},
                        "",
                    )
                )
        if self._explicit is not None and unknown_bits(int(self._explicit)):
            diags.append(
                Diagnostic(
                    "E-POLICY-EFFECT",
                    f"allowed effects carry unknown bit(s) {unknown_bits(int(self._explicit))}",
                    "/allowedEffects",
                    None,
                    {"effects": int(self._explicit)},
                    "",
                )
            )
        if self._surface not in SURFACES:
            diags.append(
                Diagnostic(
                    "E-POLICY-SCHEMA",
                    f"unknown language surface {self._surface!r}",
                    "/languageSurface",
                    None,
                    {"surface": self._surface},
                    f"use one of {', '.join(SURFACES)}",
                )
            )
        if diags:
            raise DotBoxDError(diags)
        return Policy(
            policy_id=self._policy_id,
            allowed_effects=self._explicit if self._explicit is not None else self._effects,
            effects_explicit=self._explicit is not None,
            grants=tuple(self._grants),
            limits=limits,
            deterministic=self._deterministic,
            logical_now_unix_ms=self._now,
            random_seed=self._seed,
            declared_opaque_id_types=frozenset(self._brands),
            input_bounds=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in self._bounds.items()}),
            require_static_bound=self._static,
            prove_rlimit=self._prove_rlimit,
            reject_unused_grants=self._reject_unused,
            language_surface=self._surface,
            revocations=self._revocations or Revocations(),
        )


def _valid_bound(bound: object) -> bool:
    if not isinstance(bound, (tuple, list)) or len(bound) != 2:
        return False
    lo, hi = bound
    ints = all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi))
    return ints and lo <= hi


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _reentrancy_error() -> DotBoxDError:
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


# ---------------------------------------------------------------------------------------------
# Built-in grant parameters (spec/validation.md section 10)

_EXTENSION = re.compile(r"\.[A-Za-z0-9_-]+")
_HOST_PORT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?")
_UINT = re.compile(r"[0-9]{1,18}")
_PARAMETERLESS = frozenset({"time.now", "random", "log.write", ASYNC_CAPABILITY})


VOUCHED_ROOTS: set[str] = set()
"""File-grant roots whose filesystem checks (a canonical path, an existing directory) this process
takes as done: only an isolated kernel worker fills it (``dotboxd.isolation.kernel_worker``), with
the roots its host checked when it prepared the plan - the worker sees none of the host's files, and
it never touches them either (file bindings run in the host). Empty everywhere else."""


def builtin_grant_problem(capability: str, parameters: Mapping[str, str]) -> str | None:
    """Why a grant of a built-in capability carries bad parameters (None when fine or not built-in)."""
    if capability in _PARAMETERLESS or capability.startswith("event.read."):
        if parameters:
            return f"'{capability}' takes no parameters, got {', '.join(sorted(parameters))}"
        return None
    if capability in ("file.read", "file.write"):
        return _file_grant_problem(capability, parameters)
    if capability == "net.http.get":
        return _http_grant_problem(parameters)
    return None


def _unexpected(parameters: Mapping[str, str], allowed: set[str]) -> str | None:
    extra = sorted(set(parameters) - allowed)
    return f"unexpected parameter(s) {', '.join(extra)}" if extra else None


def _file_grant_problem(capability: str, p: Mapping[str, str]) -> str | None:
    allowed = {"root", "maxBytesPerRun", "allowedExtensions"}
    if capability == "file.write":
        allowed |= {"allowCreate", "allowOverwrite"}
    problem = _unexpected(p, allowed)
    if problem:
        return problem
    root = p.get("root")
    if root is None:
        return "requires 'root'"
    if not os.path.isabs(root):
        return "root must be an absolute path"
    if os.path.normpath(root) != root:
        return "root must be canonical (no '..', '.', trailing separator or symbolic link)"
    if root not in VOUCHED_ROOTS:
        if os.path.realpath(root) != root:
            return "root must be canonical (no '..', '.', trailing separator or symbolic link)"
        if not os.path.isdir(root):
            return "root must be an existing directory"
    max_bytes = p.get("maxBytesPerRun")
    if max_bytes is None:
        return "requires 'maxBytesPerRun'"
    if _UINT.fullmatch(max_bytes) is None:
        return "maxBytesPerRun must be a decimal integer >= 0"
    exts = p.get("allowedExtensions")
    if exts is not None and not all(_EXTENSION.fullmatch(e.strip()) for e in exts.split(",")):
        return "allowedExtensions must be a comma-separated list of '.ext'"
    for flag in ("allowCreate", "allowOverwrite"):
        if flag in p and p[flag] not in ("true", "false"):
            return f"{flag} must be 'true' or 'false'"
    return None


def _http_grant_problem(p: Mapping[str, str]) -> str | None:
    allowed = {
        "allowedHosts",
        "allowedSchemes",
        "maxRequestBytes",
        "maxResponseBytes",
        "timeoutMs",
        "allowIpLiterals",
        "allowPrivateNetwork",
    }
    problem = _unexpected(p, allowed)
    if problem:
        return problem
    hosts = p.get("allowedHosts")
    if not hosts:
        return "requires 'allowedHosts'"
    if not all(_HOST_PORT.fullmatch(h.strip()) for h in hosts.split(",")):
        return "allowedHosts must be a comma-separated list of host[:port]"
    schemes = p.get("allowedSchemes", "https")
    if not all(s.strip() in ("http", "https") for s in schemes.split(",")):
        return "allowedSchemes may list only http and https"
    if "maxResponseBytes" not in p:
        return "requires 'maxResponseBytes'"
    for name in ("maxRequestBytes", "maxResponseBytes"):
        if name in p and _UINT.fullmatch(p[name]) is None:
            return f"{name} must be a decimal integer >= 0"
    timeout = p.get("timeoutMs", "2000")
    if _UINT.fullmatch(timeout) is None or not 1 <= int(timeout) <= 60_000:
        return "timeoutMs must be between 1 and 60000"
    for flag in ("allowIpLiterals", "allowPrivateNetwork"):
        if flag in p and p[flag] not in ("true", "false"):
            return f"{flag} must be 'true' or 'false'"
    return None


# ---------------------------------------------------------------------------------------------
# JSON form

_POLICY_KEYS = frozenset(
    {
        "policyId",
        "limits",
        "allowedEffects",
        "grants",
        "allowRuntimeAsync",
        "deterministic",
        "declaredOpaqueIdTypes",
        "inputBounds",
        "requireStaticBound",
        "proveRlimit",
        "rejectUnusedGrants",
        "languageSurface",
    }
)
_GRANT_KEYS = frozenset({"id", "parameters", "effects", "expiresAtUnixMillis", "grantedBy", "reason"})


_FILE_FORM_HINT = "a policy is a JSON object with the keys: " + ", ".join(sorted(_POLICY_KEYS))


def _schema(message: str, pointer: str, hint: str = _FILE_FORM_HINT) -> DotBoxDError:
    return reject("E-POLICY-SCHEMA", message, pointer, hint=hint)


def _unknown_key_hint(key: str, known: Iterable[str], what: str) -> str:
    """``did you mean 'maxFuel'?`` for a misspelt key, else the list of the known ones."""
    known = sorted(known)
    return did_you_mean(key, known) or f"{what}: {', '.join(known)}"


def _int_field(value: Any, pointer: str, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _schema("expected an integer" + (" or null" if nullable else ""), pointer)
    return value


def _policy_from_json(data: bytes | str | Mapping[str, Any], variables: Mapping[str, str]) -> Policy:
    obj: Any = data
    if isinstance(data, (bytes, str)):
        obj = read_json(data, HOST_DOCUMENT_BUDGETS, code="E-POLICY-SCHEMA", what="the policy")
    if not isinstance(obj, Mapping):
        raise _schema("a policy is a JSON object", "")
    extra = sorted(set(obj) - _POLICY_KEYS)
    if extra:
        raise _schema(
            f"unknown policy propert{'ies' if len(extra) > 1 else 'y'} {', '.join(extra)}",
            f"/{extra[0]}",
            _unknown_key_hint(extra[0], _POLICY_KEYS, "the policy keys are"),
        )
    b = PolicyBuilder()
    if "policyId" in obj:
        if not isinstance(obj["policyId"], str):
            raise _schema("policyId must be a string", "/policyId")
        b.with_policy_id(obj["policyId"])
    limits = obj.get("limits", {})
    if not isinstance(limits, Mapping):
        raise _schema("limits must be an object", "/limits")
    for name, value in limits.items():
        snake = _LIMIT_BY_JSON.get(name)
        if snake is None:
            raise _schema(
                f"unknown limit '{name}'",
                f"/limits/{name}",
                _unknown_key_hint(name, _LIMIT_BY_JSON, "the limits are"),
            )
        if snake == "max_wall_time_ms" and value is None:
            continue
        b._limits[snake] = _int_field(value, f"/limits/{name}") or 0
    grants = obj.get("grants", [])
    if not isinstance(grants, list):
        raise _schema("grants must be a list", "/grants")
    for i, g in enumerate(grants):
        _grant_from_json(b, g, f"/grants/{i}", variables)
    if "allowedEffects" in obj:
        raw = obj["allowedEffects"]
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise _schema("allowedEffects must be a list of effect names", "/allowedEffects")
        effects, unknown = parse_effect_names(raw)
        if unknown:
            raise reject(
                "E-POLICY-EFFECT",
                f"unknown effect(s) {', '.join(unknown)}",
                "/allowedEffects",
                effects=unknown,
            )
        b.with_allowed_effects(effects)
    asynchronous = obj.get("allowRuntimeAsync", False)
    if not isinstance(asynchronous, bool):
        raise _schema("allowRuntimeAsync must be a boolean", "/allowRuntimeAsync")
    if asynchronous:
        b.allow_runtime_async()
    det = obj.get("deterministic")
    if det is not None:
        if not isinstance(det, Mapping) or set(det) - {"logicalNowUnixMillis", "randomSeed"}:
            raise _schema("deterministic is {logicalNowUnixMillis?, randomSeed?} or absent", "/deterministic")
        b.deterministic(
            _int_field(det.get("logicalNowUnixMillis"), "/deterministic/logicalNowUnixMillis", True),
            _int_field(det.get("randomSeed"), "/deterministic/randomSeed", True),
        )
    brands = obj.get("declaredOpaqueIdTypes", [])
    if not isinstance(brands, list) or not all(isinstance(x, str) for x in brands):
        raise _schema("declaredOpaqueIdTypes must be a list of names", "/declaredOpaqueIdTypes")
    b.declare_opaque_id_type(*brands)
    bounds = obj.get("inputBounds", {})
    if not isinstance(bounds, Mapping):
        raise _schema("inputBounds is {function: {parameter: [lo, hi]}}", "/inputBounds")
    for fn, params in bounds.items():
        if not isinstance(params, Mapping):
            raise _schema("inputBounds is {function: {parameter: [lo, hi]}}", f"/inputBounds/{fn}")
        for name, bound in params.items():
            if not _valid_bound(bound):
                raise _schema(
                    "an input bound is [lo, hi] with integers lo <= hi", f"/inputBounds/{fn}/{name}"
                )
            b.with_input_bounds(fn, **{name: (bound[0], bound[1])})
    static = obj.get("requireStaticBound", False)
    if not isinstance(static, bool):
        raise _schema("requireStaticBound must be a boolean", "/requireStaticBound")
    b.require_static_bound(static)
    if "proveRlimit" in obj:
        b.with_prove_rlimit(_int_field(obj["proveRlimit"], "/proveRlimit"))
    reject_unused = obj.get("rejectUnusedGrants", False)
    if not isinstance(reject_unused, bool):
        raise _schema("rejectUnusedGrants must be a boolean", "/rejectUnusedGrants")
    b.reject_unused_grants(reject_unused)
    surface = obj.get("languageSurface", EXT_SURFACE)
    if surface not in SURFACES:
        raise _schema(
            f"languageSurface must be one of {', '.join(SURFACES)}, got {surface!r}", "/languageSurface"
        )
    b.with_language_surface(surface)
    return b.build()


def _grant_from_json(b: PolicyBuilder, g: Any, pointer: str, variables: Mapping[str, str]) -> None:
    if not isinstance(g, Mapping) or "id" not in g:
        raise _schema(
            "a grant is {id, parameters?, effects?, expiresAtUnixMillis?, grantedBy?, reason?}", pointer
        )
    extra = sorted(set(g) - _GRANT_KEYS)
    if extra:
        raise _schema(
            f"unknown grant property {extra[0]}",
            f"{pointer}/{extra[0]}",
            _unknown_key_hint(extra[0], _GRANT_KEYS, "a grant's keys are"),
        )
    if not isinstance(g["id"], str):
        raise _schema("grant id must be a string", f"{pointer}/id")
    params = g.get("parameters", {})
    if not isinstance(params, Mapping) or not all(isinstance(v, (str, int, bool)) for v in params.values()):
        raise _schema("grant parameters are an object of strings", f"{pointer}/parameters")
    text_params = {k: _substitute(_param_text(v), variables) for k, v in params.items()}
    effects: Effect | None = None
    if "effects" in g:
        raw = g["effects"]
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise _schema("grant effects must be a list of effect names", f"{pointer}/effects")
        effects, unknown = parse_effect_names(raw)
        if unknown:
            raise reject("E-POLICY-EFFECT", f"unknown effect(s) {', '.join(unknown)}", f"{pointer}/effects")
    for key in ("grantedBy", "reason"):
        if key in g and not isinstance(g[key], str):
            raise _schema(f"{key} must be a string", f"{pointer}/{key}")
    expires = _int_field(g.get("expiresAtUnixMillis"), f"{pointer}/expiresAtUnixMillis", True)
    if g["id"] == REENTRANT_CAPABILITY:
        raise _reentrancy_error()
    b.grant(
        g["id"],
        text_params,
        effects=effects if effects is not None else _BUILTIN_GRANT_EFFECTS.get(g["id"]),
        expires_at_unix_ms=expires,
        granted_by=g.get("grantedBy", "host"),
        reason=g.get("reason", ""),
    )
    if g["id"] == "file.read" and _UINT.fullmatch(text_params.get("maxBytesPerRun", "")):
        b._limits.setdefault("max_file_bytes_read", int(text_params["maxBytesPerRun"]))
    if g["id"] == "file.write" and _UINT.fullmatch(text_params.get("maxBytesPerRun", "")):
        b._limits.setdefault("max_file_bytes_written", int(text_params["maxBytesPerRun"]))


#: What the builder helpers allow for each built-in capability; JSON grants of these ids get the same.
_BUILTIN_GRANT_EFFECTS: dict[str, Effect] = {
    "file.read": Effect.FILE_READ,
    "file.write": Effect.FILE_WRITE | Effect.AUDIT,
    "time.now": Effect.TIME,
    "random": Effect.RANDOM,
    "log.write": Effect.AUDIT,
    "net.http.get": Effect.NETWORK,
    ASYNC_CAPABILITY: Effect.CONCURRENCY,
}


def _substitute(text: str, variables: Mapping[str, str]) -> str:
    for name, value in variables.items():
        text = text.replace(name, value)
    return text
