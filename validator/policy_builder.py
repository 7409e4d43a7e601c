"""Fluent construction of a :class:`Policy`, with every value checked once, at ``build``.

Why apart: the builder is the one place a policy's values are validated (limits against the core
limit table, grants, brands, bounds); the JSON reader goes through it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dotboxd.core.bindings import ASYNC_CAPABILITY, REENTRANT_CAPABILITY
from dotboxd.core.builtins import EXT_SURFACE, SURFACES
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, reject
from dotboxd.core.effects import PURE, Effect, unknown_bits
from dotboxd.core.limits import LIMIT_BY_NAME, LIMIT_CEILING, LIMIT_FIELDS, MIB, Limits
from dotboxd.core.read_only import ReadOnlyDict
from dotboxd.core.types import brand_name_problem
from dotboxd.validator.grants import (
    CapabilityGrant,
    Revocations,
    grant_shape_problem,
    param_text,
    reentrancy_error,
)
from dotboxd.validator.policy_model import Policy


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

    def limit_if_unset(self, name: str, value: int) -> PolicyBuilder:
        """Set limit ``name`` unless it is already set (a JSON grant's byte cap yields to ``limits``)."""
        if name not in LIMIT_BY_NAME:
            raise reject(
                "E-POLICY-LIMIT", f"unknown limit '{name}'", hint=f"known: {', '.join(LIMIT_FIELDS)}"
            )
        self._limits.setdefault(name, value)
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

    def with_max_commands(self, n: int) -> PolicyBuilder:
        """Host-state commands one run may queue (``maxCommands``); one more is R-QUOTA-COMMANDS."""
        return self.with_limits(max_commands=n)

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
            raise reentrancy_error()
        merged = {**(parameters or {}), **params}
        text_params = {str(k): param_text(v) for k, v in merged.items()}
        if effects is not None:
            self._effects |= effects
        self._grants.append(
            CapabilityGrant(
                capability,
                ReadOnlyDict(sorted(text_params.items())),
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
        raise reentrancy_error()

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
        if units is not None and (isinstance(units, bool) or not 1 <= units <= LIMIT_CEILING):
            diags.append(
                Diagnostic(
                    "E-POLICY-LIMIT",
                    f"proveRlimit must be between 1 and {LIMIT_CEILING}, got {units}",
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
                if not valid_bound(bound):
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
            input_bounds=ReadOnlyDict({k: ReadOnlyDict(v) for k, v in self._bounds.items()}),
            require_static_bound=self._static,
            prove_rlimit=self._prove_rlimit,
            reject_unused_grants=self._reject_unused,
            language_surface=self._surface,
            revocations=self._revocations or Revocations(),
        )


def valid_bound(bound: object) -> bool:
    if not isinstance(bound, (tuple, list)) or len(bound) != 2:
        return False
    lo, hi = bound
    ints = all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi))
    return ints and lo <= hi
