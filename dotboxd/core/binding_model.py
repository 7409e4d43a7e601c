"""What one host binding is: its descriptor and the enums, cost model and grant validators it carries.

A :class:`BindingDescriptor` states everything the sandbox must know about one host function before
any kernel may call it (spec/validation.md section 8). This module holds the data only, plus the
defaults that both ways of declaring a binding (the ``host_binding`` decorator and the JSON manifest)
apply, so the two can never default differently. Checking lives in ``binding_checks``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from dotboxd.core.builtins import GENERIC_STUB
from dotboxd.core.diagnostics import reject
from dotboxd.core.effects import (
    PURE,
    Effect,
)
from dotboxd.core.types import (
    SandboxType,
    TypeProblem,
    resolve_or_problem,
    type_ref_from_json,
)


class AuditLevel(StrEnum):
    NONE = "None"
    SUMMARY = "Summary"
    PER_CALL = "PerCall"
    PER_RESOURCE = "PerResource"
    FULL_INPUT_OUTPUT = "FullInputOutput"


class Safety(StrEnum):
    PURE_INTRINSIC = "PureIntrinsic"
    PURE_HOST_FACADE = "PureHostFacade"
    READ_ONLY_EXTERNAL = "ReadOnlyExternal"
    SIDE_EFFECTING_EXTERNAL = "SideEffectingExternal"
    DANGEROUS_REQUIRES_REVIEW = "DangerousRequiresReview"


class AuditKind(StrEnum):
    BINDING_CALL = "BindingCall"
    SANDBOX_LOG = "SandboxLog"
    PLUGIN_MESSAGE = "PluginMessage"


@dataclass(frozen=True, slots=True)
class Cost:
    """A binding's cost model. ``base_fuel`` is charged before dispatch, ``per_byte_fuel`` per UTF-16
    byte of a returned string; ``allocation_from_return_bytes`` charges the returned value's size as
    allocation; ``max_calls_per_run`` caps calls of this binding in one run (None = only MaxHostCalls)."""

    base_fuel: int
    per_byte_fuel: int = 0
    allocation_from_return_bytes: bool = False
    max_calls_per_run: int | None = None


# ---------------------------------------------------------------------------------------------
# Grant validators


GrantValidator = Callable[[Mapping[str, str]], "str | None"]


@dataclass(frozen=True, slots=True)
class GrantParameters:
    """A declarative grant validator: the grant may carry exactly these parameter names.

    Calling it with a grant's parameters returns None when they are acceptable, else the reason.
    ``GrantParameters()`` (the default for decorated and manifest bindings) accepts only a
    parameterless grant: fail closed."""

    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()

    def __call__(self, parameters: Mapping[str, str]) -> str | None:
        missing = [name for name in self.required if name not in parameters]
        if missing:
            return f"missing required grant parameter(s): {', '.join(missing)}"
        allowed = set(self.required) | set(self.optional)
        extra = sorted(name for name in parameters if name not in allowed)
        if extra:
            return f"unexpected grant parameter(s): {', '.join(extra)}"
        return None

    def describe(self) -> str:
        return f"params(required={','.join(self.required)};optional={','.join(self.optional)})"


PARAMETERLESS_GRANT = GrantParameters()

#: Capabilities whose parameters the policy layer validates itself (spec/validation.md section 10); a binding requiring
#: one of these needs no GrantValidator of its own.
BUILTIN_CAPABILITIES: frozenset[str] = frozenset(
    {"file.read", "file.write", "time.now", "random", "log.write", "net.http.get", "dotboxd.runtime.async"}
)
#: Built-in capability -> the effect a binding requiring it must carry (E-BINDING-CAP-EFFECT).
BUILTIN_CAPABILITY_EFFECTS: Mapping[str, Effect] = MappingProxyType(
    {
        "file.read": Effect.FILE_READ,
        "file.write": Effect.FILE_WRITE,
        "time.now": Effect.TIME,
        "random": Effect.RANDOM,
        "log.write": Effect.AUDIT,
        "net.http.get": Effect.NETWORK,
    }
)
ASYNC_CAPABILITY = "dotboxd.runtime.async"
REENTRANT_CAPABILITY = "dotboxd.runtime.reentrant"
RESERVED_CAPABILITIES = frozenset({ASYNC_CAPABILITY, REENTRANT_CAPABILITY})


def is_builtin_capability(capability: str) -> bool:
    """True for capabilities whose grants the policy layer validates (``event.read.*`` included)."""
    return capability in BUILTIN_CAPABILITIES or capability.startswith("event.read.")


# ---------------------------------------------------------------------------------------------
# The descriptor


@dataclass(frozen=True, slots=True)
class BindingDescriptor:
    """Everything the sandbox knows about one host binding (spec/validation.md section 8).

    ``invoke`` is the Python callable the runtime calls with the sandbox argument values, positionally
    (preceded by the runtime's context object when ``takes_context``); it may return a value or, for
    async bindings, an awaitable. It is None for manifest-declared bindings (the conformance runner
    supplies fixture behaviours with ``dataclasses.replace(descriptor, invoke=...)``).

    ``origin`` locates the declaration for diagnostics: a JSON pointer into a manifest, or
    ``python:<module>.<qualname>``. It takes no part in equality or hashing."""

    id: str
    parameters: tuple[SandboxType, ...]
    return_type: SandboxType
    effects: Effect
    capability: str | None
    cost: Cost | None
    audit: AuditLevel
    safety: Safety
    invoke: Callable[..., Any] | None = field(default=None, compare=False)
    version: str = "1.0.0"
    is_async: bool = False
    audit_kind: AuditKind = AuditKind.BINDING_CALL
    grant_validator: GrantValidator | None = field(default=None, compare=False)
    compiled_stub: str = GENERIC_STUB
    parameter_names: tuple[str, ...] = field(default=(), compare=False)
    takes_context: bool = False
    description: str = field(default="", compare=False)
    origin: str = field(default="", compare=False)

    @classmethod
    def declare(
        cls,
        id: str,
        parameters: tuple[SandboxType, ...],
        return_type: SandboxType,
        effects: Effect,
        capability: str | None,
        cost: Cost | None,
        audit: AuditLevel | None,
        safety: Safety | None,
        **options: Any,
    ) -> BindingDescriptor:
        """A descriptor whose unstated audit level or safety class defaults from its effects and
        capability. Both declaration forms (the decorator and the manifest) build through here, so
        they default alike."""
        return cls(
            id,
            parameters,
            return_type,
            effects,
            capability,
            cost,
            audit if audit is not None else default_audit(effects, capability),
            safety if safety is not None else default_safety(effects, capability),
            **options,
        )

    @property
    def required_effects(self) -> Effect:
        """The effects a call adds: the declared ones, plus Concurrency when async."""
        return self.effects | Effect.CONCURRENCY if self.is_async else self.effects

    @property
    def required_capabilities(self) -> tuple[str, ...]:
        """The capabilities a call needs: the binding's own plus ``dotboxd.runtime.async`` if async."""
        caps = [self.capability] if self.capability else []
        if self.is_async:
            caps.append(ASYNC_CAPABILITY)
        return tuple(caps)

    @property
    def is_pure(self) -> bool:
        """The and/or reordering fact (spec/semantics.md section 4): PureIntrinsic, effects within Cpu|Alloc, sync."""
        return self.safety is Safety.PURE_INTRINSIC and not (self.effects & ~PURE) and not self.is_async

    @property
    def signature(self) -> str:
        return f"({', '.join(str(p) for p in self.parameters)}) -> {self.return_type}"

    def __call__(self, *args: Any) -> Any:
        """Call the host function directly (host-side tests); the sandbox never calls this way."""
        if self.invoke is None:
            raise TypeError(f"binding {self.id} has no invoke callable (declared by a manifest)")
        return self.invoke(*args)


def sandbox_type_of(value: SandboxType | str | Mapping[str, Any], where: str) -> SandboxType:
    if isinstance(value, SandboxType):
        return value
    try:
        return resolve_or_problem(type_ref_from_json(value, where))
    except (ValueError, TypeProblem) as exc:
        raise reject("E-BINDING-TYPE", f"{where}: {exc}", where) from None


def default_audit(effects: Effect, capability: str | None) -> AuditLevel:
    return AuditLevel.NONE if capability is None and not (effects & ~PURE) else AuditLevel.PER_CALL


def default_safety(effects: Effect, capability: str | None) -> Safety:
    if capability is None and not (effects & ~PURE):
        return Safety.PURE_HOST_FACADE
    writes = Effect.FILE_WRITE | Effect.HOST_STATE_WRITE | Effect.AUDIT | Effect.NETWORK
    return Safety.SIDE_EFFECTING_EXTERNAL if effects & writes else Safety.READ_ONLY_EXTERNAL


__all__ = [
    "ASYNC_CAPABILITY",
    "BUILTIN_CAPABILITIES",
    "BUILTIN_CAPABILITY_EFFECTS",
    "PARAMETERLESS_GRANT",
    "REENTRANT_CAPABILITY",
    "RESERVED_CAPABILITIES",
    "AuditKind",
    "AuditLevel",
    "BindingDescriptor",
    "Cost",
    "GrantParameters",
    "GrantValidator",
    "Safety",
    "default_audit",
    "default_safety",
    "is_builtin_capability",
    "sandbox_type_of",
]
