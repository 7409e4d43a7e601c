"""Host bindings: the only way a kernel touches the world, declared by the host, never by the kernel.

A :class:`BindingDescriptor` states everything the sandbox must know about one host function before
any kernel may call it: its sandbox signature, its effects, the capability a policy must grant, its
cost, audit level and safety class, whether it is async, and the Python callable ``invoke`` that the
runtime calls. Hosts declare bindings with the :func:`host_binding` decorator (which reads sandbox
types from Python type hints where they are unambiguous) or from a JSON binding manifest (DotBoxD's
section 11; the CLI and the conformance corpus use it; it has no callables).

A :class:`BindingRegistry` collects descriptors; :meth:`BindingRegistry.build` enforces DotBoxD's
twelve registry checks (spec/validation.md section 8) in order and returns an immutable :class:`BindingCatalog` with its
manifest hash. Every refusal is a DotBoxDError with an ``E-BINDING-*`` code naming the binding.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Annotated, Any

from dotboxd.core.builtins import BUILTINS, EXACT_STUBS, GENERIC_STUB
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, reject
from dotboxd.core.effects import (
    PURE,
    Effect,
    effect_names,
    effects_text,
    parse_effect_names,
    unknown_bits,
)
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_json
from dotboxd.core.suggest import did_you_mean
from dotboxd.core.types import (
    BOOL,
    F64,
    GUID,
    I32,
    I64,
    MAX_TYPE_DEPTH,
    SANDBOX_PATH,
    SANDBOX_URI,
    STRING,
    UNIT,
    ListType,
    MapType,
    OpaqueIdType,
    RecordType,
    SandboxType,
    TypeProblem,
    contains_brand,
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
_RESERVED_CAPABILITIES = frozenset({ASYNC_CAPABILITY, REENTRANT_CAPABILITY})


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


# ---------------------------------------------------------------------------------------------
# Python type hints -> sandbox types

#: Annotated aliases for hints that plain Python types cannot disambiguate.
Int32 = Annotated[int, I32]
Int64 = Annotated[int, I64]
GuidText = Annotated[str, GUID]
PathText = Annotated[str, SANDBOX_PATH]
UriText = Annotated[str, SANDBOX_URI]

_SIMPLE_HINTS: dict[Any, SandboxType] = {
    bool: BOOL,
    str: STRING,
    float: F64,
    type(None): UNIT,
    None: UNIT,
}


class HintProblem(Exception):
    pass


def sandbox_type_from_hint(hint: Any) -> SandboxType:
    """Map a Python type hint to a sandbox type; raise HintProblem when it is ambiguous or forbidden.

    ``bool str float None`` map directly; ``list[T]``, ``dict[K, V]`` and ``tuple[A, B, ...]`` map to
    List, Map and Record; ``Annotated[..., <SandboxType>]`` names the type explicitly (use the
    ``Int32``/``Int64``/``GuidText``/``PathText``/``UriText`` aliases). A bare ``int`` is ambiguous
    (I32 or I64?) and everything else (``Any``, ``object``, classes) is refused."""
    if typing.get_origin(hint) is Annotated:
        for extra in getattr(hint, "__metadata__", ()):
            if isinstance(extra, SandboxType):
                return extra
        hint = typing.get_args(hint)[0]
    if hint in _SIMPLE_HINTS:
        return _SIMPLE_HINTS[hint]
    if hint is int:
        raise HintProblem("'int' is ambiguous: annotate it as Int32 or Int64 (Annotated[int, I32 | I64])")
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is list and len(args) == 1:
        return ListType(sandbox_type_from_hint(args[0]))
    if origin is dict and len(args) == 2:
        return MapType(sandbox_type_from_hint(args[0]), sandbox_type_from_hint(args[1]))
    if origin is tuple and args and Ellipsis not in args:
        return RecordType(tuple(sandbox_type_from_hint(a) for a in args))
    shown = getattr(hint, "__name__", None) or repr(hint)
    raise HintProblem(f"the hint {shown} has no sandbox type (host objects are never sandbox values)")


def _as_type(value: SandboxType | str | Mapping[str, Any], where: str) -> SandboxType:
    if isinstance(value, SandboxType):
        return value
    try:
        return resolve_or_problem(type_ref_from_json(value, where))
    except (ValueError, TypeProblem) as exc:
        raise reject("E-BINDING-TYPE", f"{where}: {exc}", where) from None


def _default_audit(effects: Effect, capability: str | None) -> AuditLevel:
    return AuditLevel.NONE if capability is None and not (effects & ~PURE) else AuditLevel.PER_CALL


def _default_safety(effects: Effect, capability: str | None) -> Safety:
    if capability is None and not (effects & ~PURE):
        return Safety.PURE_HOST_FACADE
    writes = Effect.FILE_WRITE | Effect.HOST_STATE_WRITE | Effect.AUDIT | Effect.NETWORK
    return Safety.SIDE_EFFECTING_EXTERNAL if effects & writes else Safety.READ_ONLY_EXTERNAL


def host_binding(
    *,
    id: str,
    cost: Cost | None,
    effects: Effect = Effect.CPU,
    capability: str | None = None,
    audit: AuditLevel | None = None,
    safety: Safety | None = None,
    version: str = "1.0.0",
    is_async: bool | None = None,
    audit_kind: AuditKind = AuditKind.BINDING_CALL,
    parameters: Sequence[SandboxType | str] | None = None,
    returns: SandboxType | str | None = None,
    grant_validator: GrantValidator | None = PARAMETERLESS_GRANT,
    compiled_stub: str = GENERIC_STUB,
    context: bool = False,
    description: str = "",
) -> Callable[[Callable[..., Any]], BindingDescriptor]:
    """Declare a Python function as a host binding; the decorated name becomes its descriptor.

    Parameter and return types come from the function's type hints unless ``parameters`` /
    ``returns`` are given (strings such as ``"Map<String, I32>"`` or SandboxType objects). With
    ``context=True`` the first parameter receives the runtime's context and is not typed. ``is_async``
    defaults to whether the function is a coroutine function. Audit level and safety default from
    the effects (pure and capability-free: None / PureHostFacade; otherwise PerCall and Read-only or
    Side-effecting external); pass them explicitly for anything a reviewer should see spelled out.
    Hint problems raise DotBoxDError(E-BINDING-TYPE) at decoration time; the remaining registry
    checks run in :meth:`BindingRegistry.build`."""

    def decorate(fn: Callable[..., Any]) -> BindingDescriptor:
        origin = f"python:{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        if context:
            if not params:
                raise reject(
                    "E-BINDING-REQUIRED", f"binding {id}: context=True needs a first parameter", origin
                )
            params = params[1:]
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise reject(
                    "E-BINDING-TYPE",
                    f"binding {id}: parameter '{p.name}' must be positional (no *args, **kwargs or keyword-only)",
                    origin,
                )
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:  # unresolvable forward references are a declaration error
            raise reject("E-BINDING-TYPE", f"binding {id}: cannot read type hints ({exc})", origin) from None
        if parameters is not None:
            if len(parameters) != len(params):
                raise reject(
                    "E-BINDING-TYPE",
                    f"binding {id}: {len(parameters)} parameter types for {len(params)} Python parameters",
                    origin,
                )
            param_types = tuple(_as_type(t, f"{origin}/parameters/{i}") for i, t in enumerate(parameters))
        else:
            param_types = tuple(_hint(hints, p.name, id, origin) for p in params)
        ret = (
            _as_type(returns, f"{origin}/returnType")
            if returns is not None
            else _hint(hints, "return", id, origin)
        )
        asynchronous = inspect.iscoroutinefunction(fn) if is_async is None else is_async
        return BindingDescriptor(
            id=id,
            parameters=param_types,
            return_type=ret,
            effects=effects,
            capability=capability,
            cost=cost,
            audit=audit if audit is not None else _default_audit(effects, capability),
            safety=safety if safety is not None else _default_safety(effects, capability),
            invoke=fn,
            version=version,
            is_async=asynchronous,
            audit_kind=audit_kind,
            grant_validator=grant_validator,
            compiled_stub=compiled_stub,
            parameter_names=tuple(p.name for p in params),
            takes_context=context,
            description=description or (inspect.getdoc(fn) or "").split("\n", 1)[0],
            origin=origin,
        )

    return decorate


def _hint(hints: Mapping[str, Any], name: str, binding_id: str, origin: str) -> SandboxType:
    if name not in hints:
        what = "the return type" if name == "return" else f"parameter '{name}'"
        raise reject(
            "E-BINDING-TYPE",
            f"binding {binding_id}: {what} has no type hint",
            origin,
            hint="annotate every parameter and the return type, or pass parameters=/returns=",
        )
    try:
        return sandbox_type_from_hint(hints[name])
    except HintProblem as exc:
        what = "return type" if name == "return" else f"parameter '{name}'"
        raise reject(
            "E-BINDING-TYPE", f"binding {binding_id}: {what}: {exc}", origin, binding=binding_id
        ) from None


# ---------------------------------------------------------------------------------------------
# Registry checks (spec/validation.md section 8, in DotBoxD's order)

_DOTTED = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+")
_CLR_ROOTS = frozenset(
    s.lower()
    for s in (
        "System",
        "Microsoft",
        "Assembly",
        "Type",
        "Reflection",
        "Process",
        "Environment",
        "Thread",
        "Task",
        "DllImport",
        "IServiceProvider",
    )
)
_EXTERNAL = frozenset({Safety.READ_ONLY_EXTERNAL, Safety.SIDE_EFFECTING_EXTERNAL})


def _clr_root(dotted: str) -> str | None:
    segments = dotted.split(".")
    root = segments[1] if segments[0].lower() == "host" and len(segments) > 1 else segments[0]
    return root if root.lower() in _CLR_ROOTS else None


def _fail(code: str, b: BindingDescriptor, message: str, hint: str = "", **evidence: Any) -> Diagnostic:
    return Diagnostic(
        code,
        f"binding {b.id or '<missing id>'}: {message}",
        b.origin,
        None,
        {"binding": b.id, **evidence},
        hint,
    )


def check_binding(b: BindingDescriptor, *, require_invoke: bool = False) -> Diagnostic | None:
    """The first registry check ``b`` fails (DotBoxD's order), or None. Duplicates are checked by
    the registry, which sees all descriptors."""
    # 1. required fields
    missing = [
        name
        for name, value in (
            ("id", b.id),
            ("version", b.version),
            ("returnType", b.return_type),
            ("costModel", b.cost),
            ("auditLevel", b.audit),
            ("safety", b.safety),
        )
        if value is None or value == ""
    ]
    if b.parameters is None:
        missing.append("parameters")
    if require_invoke and b.invoke is None:
        missing.append("invoke")
    if missing:
        return _fail("E-BINDING-REQUIRED", b, f"missing {', '.join(missing)}", missing=missing)
    # 2. id and capability are dotted identifiers, not rooted in host machinery
    if not isinstance(b.id, str) or _DOTTED.fullmatch(b.id) is None:
        return _fail(
            "E-BINDING-ID", b, "the id must be a dotted identifier such as 'game.world.kill'", id=str(b.id)
        )
    root = _clr_root(b.id)
    if root is not None:
        return _fail("E-BINDING-DANGER", b, f"the id is rooted in the host namespace '{root}'", root=root)
    if b.capability is not None:
        if not isinstance(b.capability, str) or not (
            _DOTTED.fullmatch(b.capability) or b.capability in BUILTIN_CAPABILITIES
        ):
            return _fail(
                "E-BINDING-CAP",
                b,
                f"the capability '{b.capability}' is not a concrete dotted identifier",
                capability=str(b.capability),
            )
        cap_root = _clr_root(b.capability)
        if cap_root is not None:
            return _fail(
                "E-BINDING-DANGER",
                b,
                f"the capability is rooted in the host namespace '{cap_root}'",
                root=cap_root,
            )
        if b.capability in _RESERVED_CAPABILITIES:
            return _fail(
                "E-BINDING-CAP",
                b,
                f"the capability '{b.capability}' is reserved to the runtime",
                hint="mark the binding is_async instead of requiring dotboxd.runtime.async",
                capability=b.capability,
            )
    # 3. effects known and non-empty
    if not isinstance(b.effects, int) or isinstance(b.effects, bool) or int(b.effects) <= 0:
        return _fail("E-BINDING-EFFECT", b, "effects must be a non-empty effect set", effects=str(b.effects))
    if unknown_bits(int(b.effects)):
        return _fail(
            "E-BINDING-EFFECT",
            b,
            f"effects carry unknown bit(s) {unknown_bits(int(b.effects))}",
            effects=int(b.effects),
        )
    # 4. audit level, kind and safety are known
    if not isinstance(b.audit, AuditLevel) or not isinstance(b.audit_kind, AuditKind):
        return _fail("E-BINDING-AUDIT", b, f"unknown audit level or kind ({b.audit!r}, {b.audit_kind!r})")
    if not isinstance(b.safety, Safety):
        return _fail("E-BINDING-SAFETY", b, f"unknown safety class {b.safety!r}")
    effects = Effect(int(b.effects))
    impure = effects & ~PURE
    # 5. non-pure effects need a capability; a capability with only pure effects is an error
    if impure and b.capability is None:
        return _fail(
            "E-BINDING-CAP",
            b,
            f"effects {effects_text(effects)} go beyond Cpu|Alloc but no capability is required",
            hint="every side effect must be gated by a capability the policy grants",
            effects=effect_names(effects),
        )
    if not impure and b.capability is not None:
        return _fail(
            "E-BINDING-CAP",
            b,
            f"capability '{b.capability}' gates only pure effects {effects_text(effects)}",
            hint="declare the effect the capability protects, or drop the capability",
            capability=b.capability,
        )
    # 6. external or effectful bindings need a capability and an audit level
    if b.safety in _EXTERNAL or impure:
        if b.capability is None:
            return _fail("E-BINDING-CAP", b, f"a {b.safety.value} binding must require a capability")
        if b.audit is AuditLevel.NONE:
            return _fail(
                "E-BINDING-AUDIT",
                b,
                "an external or effectful binding must be audited (audit level None)",
                hint="use PerCall, PerResource, Summary or FullInputOutput",
            )
    # 7. a custom capability needs a grant validator
    if b.capability is not None and not is_builtin_capability(b.capability) and b.grant_validator is None:
        return _fail(
            "E-BINDING-GRANT",
            b,
            f"custom capability '{b.capability}' has no grant validator",
            hint="pass grant_validator=GrantParameters(...) (GrantParameters() accepts parameterless grants)",
        )
    # 8. built-in capability / effect pairings
    needed = BUILTIN_CAPABILITY_EFFECTS.get(b.capability or "")
    if needed is not None:
        allowed = needed | Effect.CPU | Effect.ALLOC | Effect.AUDIT
        if not effects & needed or effects & ~allowed:
            return _fail(
                "E-BINDING-CAP-EFFECT",
                b,
                f"capability '{b.capability}' must carry {effects_text(needed)} and only Cpu, Alloc or Audit "
                f"besides; declared {effects_text(effects)}",
                capability=b.capability,
                effects=effect_names(effects),
            )
    # 9. dangerous bindings are never registered; pure-intrinsic claims must be true
    if b.safety is Safety.DANGEROUS_REQUIRES_REVIEW:
        return _fail("E-BINDING-SAFETY", b, "DangerousRequiresReview bindings are rejected until reviewed")
    if b.safety is Safety.PURE_INTRINSIC and (impure or b.capability is not None or b.is_async):
        return _fail(
            "E-BINDING-SAFETY", b, "a PureIntrinsic binding must be pure, synchronous and capability-free"
        )
    # 10. costs are non-negative integers
    cost = b.cost
    assert cost is not None
    if not _nonneg_int(cost.base_fuel) or not _nonneg_int(cost.per_byte_fuel):
        return _fail(
            "E-BINDING-COST", b, "base and per-byte fuel must be integers >= 0", cost=_cost_evidence(cost)
        )
    if cost.max_calls_per_run is not None and not _nonneg_int(cost.max_calls_per_run):
        return _fail("E-BINDING-COST", b, "maxCallsPerRun must be an integer >= 0", cost=_cost_evidence(cost))
    if not isinstance(cost.allocation_from_return_bytes, bool):
        return _fail("E-BINDING-COST", b, "allocationFromReturnBytes must be a boolean")
    # 11. the compiled stub is allowlisted
    if b.compiled_stub != GENERIC_STUB:
        stub = EXACT_STUBS.get(b.compiled_stub)
        if stub is None:
            return _fail("E-BINDING-COMPILED", b, f"'{b.compiled_stub}' is not an allowlisted runtime stub")
        if b.safety is not Safety.PURE_INTRINSIC or b.audit is not AuditLevel.NONE:
            return _fail(
                "E-BINDING-COMPILED", b, "an exact stub needs a PureIntrinsic binding with audit None"
            )
        if stub != (tuple(b.parameters), b.return_type):
            return _fail(
                "E-BINDING-COMPILED",
                b,
                f"stub {b.compiled_stub} has a different signature than {b.signature}",
                stub=b.compiled_stub,
            )
    # 12. types are built-in sandbox types (no brands, nothing deeper than the limit)
    for index, t in enumerate((*b.parameters, b.return_type)):
        where = "return type" if index == len(b.parameters) else f"parameter {index + 1}"
        problem = _binding_type_problem(t)
        if problem is not None:
            return _fail("E-BINDING-TYPE", b, f"{where} {t}: {problem}", type=str(t))
    return None


def _binding_type_problem(t: object) -> str | None:
    if not isinstance(t, SandboxType):
        return "is not a sandbox type"
    if contains_brand(t):
        return "opaque-id brands are module vocabulary; bindings use built-in types only"
    if t.depth > MAX_TYPE_DEPTH:
        return f"is nested deeper than {MAX_TYPE_DEPTH}"
    if isinstance(t, OpaqueIdType):
        return "is not a built-in type"
    return None


def _nonneg_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _cost_evidence(cost: Cost) -> dict[str, Any]:
    return {
        "baseFuel": cost.base_fuel,
        "perByteFuel": cost.per_byte_fuel,
        "maxCallsPerRun": cost.max_calls_per_run,
    }


# ---------------------------------------------------------------------------------------------
# Registry and catalogue


class BindingCatalog(Mapping[str, BindingDescriptor]):
    """The immutable, checked set of bindings a host exposes: ``id -> descriptor`` plus the manifest hash."""

    __slots__ = ("_by_id", "_hash")

    def __init__(self, bindings: Iterable[BindingDescriptor] = ()) -> None:
        self._by_id: dict[str, BindingDescriptor] = {b.id: b for b in bindings}
        self._hash = binding_manifest_hash(self._by_id.values())

    def __getitem__(self, binding_id: str) -> BindingDescriptor:
        return self._by_id[binding_id]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._by_id))

    def __len__(self) -> int:
        return len(self._by_id)

    @property
    def manifest_hash(self) -> str:
        return self._hash

    def to_manifest(self) -> dict[str, Any]:
        """The JSON binding manifest (DotBoxD's manifest form) of every binding, sorted by id."""
        return manifest_to_json(self._by_id[k] for k in sorted(self._by_id))

    def with_invokers(self, invokers: Mapping[str, Callable[..., Any]]) -> BindingCatalog:
        """A copy whose descriptors call ``invokers[id]`` (the conformance runner's fixtures); the
        manifest hash is unchanged because the callable is not part of it. An invoker with a true
        ``takes_context`` attribute is called with the binding context first (a fixture that keeps
        per-run state, such as a ``sequence``, reads it there)."""
        return BindingCatalog(
            replace(
                b,
                invoke=invokers[b.id],
                takes_context=bool(getattr(invokers[b.id], "takes_context", b.takes_context)),
            )
            if b.id in invokers
            else b
            for b in self._by_id.values()
        )


class BindingRegistry:
    """A mutable collection of descriptors; :meth:`build` checks them and freezes a catalogue."""

    def __init__(self, bindings: Iterable[BindingDescriptor] = ()) -> None:
        self._bindings: list[BindingDescriptor] = list(bindings)

    def add(self, binding: BindingDescriptor) -> BindingRegistry:
        self._bindings.append(binding)
        return self

    def extend(self, bindings: Iterable[BindingDescriptor]) -> BindingRegistry:
        self._bindings.extend(bindings)
        return self

    def __len__(self) -> int:
        return len(self._bindings)

    def build(self, *, require_invoke: bool = False) -> BindingCatalog:
        """Run the registry checks on every descriptor (each reports its first failure) and detect
        duplicate ids (also against built-in call names); raise DotBoxDError with all failures."""
        diagnostics: list[Diagnostic] = []
        seen: dict[str, BindingDescriptor] = {}
        for b in self._bindings:
            problem = check_binding(b, require_invoke=require_invoke)
            if problem is not None:
                diagnostics.append(problem)
                continue
            if b.id in BUILTINS:
                diagnostics.append(
                    _fail("E-BINDING-DUP", b, "the id is a built-in call name", hint="choose another id")
                )
            elif b.id in seen:
                diagnostics.append(
                    _fail(
                        "E-BINDING-DUP",
                        b,
                        f"the id is registered twice (versions {seen[b.id].version} and {b.version})",
                        first=seen[b.id].origin,
                    )
                )
            else:
                seen[b.id] = b
        if diagnostics:
            raise DotBoxDError(diagnostics)
        return BindingCatalog(seen.values())


# ---------------------------------------------------------------------------------------------
# Canonical records and the manifest hash

BINDINGS_HASH_ID = "dotboxd-py-bindings-1"


_NEEDS_ESCAPE = re.compile(r"[\\\x00-\x1f\x7f-\x9f]")


def _escape(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    out: list[str] = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def canonical_record(*fields: str | int | bool | None) -> str:
    """One record in the canonicalizer's field encoding (spec/canonical.md section 2): ``n;`` for null and
    ``s<len>:<escaped>;`` for text (len = UTF-16 length of the escaped text). Ints and bools are
    written as invariant text (``true``/``false``). Used for the policy, manifest and plan hashes."""
    parts: list[str] = []
    for value in fields:
        if value is None:
            parts.append("n;")
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        else:
            text = value
        escaped = _escape(text)
        parts.append(f"s{_utf16_len(escaped)}:{escaped};")
    return "".join(parts)


def sha256_lines(lines: Iterable[str]) -> str:
    """Lowercase SHA-256 hex of the records joined with ``\\n`` (UTF-8)."""
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


def _validator_text(v: GrantValidator | None) -> str | None:
    if v is None:
        return None
    if isinstance(v, GrantParameters):
        return v.describe()
    return f"custom:{getattr(v, '__module__', '?')}.{getattr(v, '__qualname__', type(v).__name__)}"


def binding_record(b: BindingDescriptor) -> str:
    """The canonical record of one binding: every field whose change needs a new version."""
    cost = b.cost or Cost(-1)
    return canonical_record(
        "binding",
        b.id,
        b.version,
        canonical_record(*(str(p) for p in b.parameters)),
        str(b.return_type),
        int(b.effects),
        b.capability,
        cost.base_fuel,
        cost.per_byte_fuel,
        cost.allocation_from_return_bytes,
        cost.max_calls_per_run,
        b.audit.value if isinstance(b.audit, AuditLevel) else str(b.audit),
        b.safety.value if isinstance(b.safety, Safety) else str(b.safety),
        b.is_async,
        b.audit_kind.value if isinstance(b.audit_kind, AuditKind) else str(b.audit_kind),
        b.compiled_stub,
        _validator_text(b.grant_validator),
    )


def same_implementation(a: BindingDescriptor, b: BindingDescriptor) -> bool:
    """True when ``a`` and ``b`` run the same host code: the same ``invoke`` callable (equal bound
    methods of one object count as the same), called the same way, with the same grant validator.
    ``binding_record`` compares contracts; this compares what a call would actually execute, which
    no hash can (a callable has no stable identity across hosts)."""
    return a is b or (
        a.invoke == b.invoke and a.takes_context == b.takes_context and a.grant_validator == b.grant_validator
    )


def binding_manifest_hash(bindings: Iterable[BindingDescriptor]) -> str:
    """SHA-256 over the sorted binding records, headed by ``dotboxd-py-bindings-1``. Our own
    identity string: the field list is not bit-identical to DotBoxD's ``bindings-v2``."""
    records = sorted(binding_record(b) for b in bindings)
    return sha256_lines([canonical_record(BINDINGS_HASH_ID), *records])


# ---------------------------------------------------------------------------------------------
# JSON manifest form (DotBoxD's) and conformance-case ``bindings`` entries


def binding_to_json(b: BindingDescriptor) -> dict[str, Any]:
    """The manifest entry of ``b`` (DotBoxD's manifest key names)."""
    cost = b.cost
    entry: dict[str, Any] = {
        "id": b.id,
        "version": b.version,
        "parameters": [p.to_json() for p in b.parameters],
        "returnType": b.return_type.to_json(),
        "effects": effect_names(b.effects),
        "isAsync": b.is_async,
        "requiredCapability": b.capability,
        "costModel": None
        if cost is None
        else {
            "baseFuel": cost.base_fuel,
            "perByteFuel": cost.per_byte_fuel,
            "allocationFromReturnBytes": cost.allocation_from_return_bytes,
            "maxCallsPerRun": cost.max_calls_per_run,
        },
        "auditLevel": b.audit.value,
        "auditKind": b.audit_kind.value,
        "safety": b.safety.value,
        "compiledTarget": {"kind": "RuntimeStub", "method": b.compiled_stub},
    }
    if isinstance(b.grant_validator, GrantParameters):
        entry["grantParameters"] = {
            "required": list(b.grant_validator.required),
            "optional": list(b.grant_validator.optional),
        }
    return entry


def manifest_to_json(bindings: Iterable[BindingDescriptor]) -> dict[str, Any]:
    return {
        "manifestVersion": 1,
        "sandboxRuntimeVersion": "1.0.0",
        "bindings": [binding_to_json(b) for b in bindings],
    }


# Accepted spellings: DotBoxD's manifest names first, then the conformance-case names.
_ALIASES: dict[str, tuple[str, ...]] = {
    "capability": ("requiredCapability", "capability"),
    "cost": ("costModel", "cost"),
    "audit": ("auditLevel", "audit"),
}
_ENTRY_KEYS = frozenset(
    {
        "id",
        "version",
        "parameters",
        "returnType",
        "effects",
        "isAsync",
        "requiredCapability",
        "capability",
        "costModel",
        "cost",
        "auditLevel",
        "audit",
        "auditKind",
        "safety",
        "compiledTarget",
        "grantParameters",
        "behavior",
        "description",
    }
)
_COST_KEYS = frozenset({"baseFuel", "perByteFuel", "allocationFromReturnBytes", "maxCallsPerRun"})


def _manifest_error(message: str, pointer: str, hint: str = "") -> DotBoxDError:
    return reject(
        "E-BINDING-MANIFEST",
        message,
        pointer,
        hint=hint
        or 'a manifest is {"bindings": [entry, ...]}; an entry\'s keys are ' + ", ".join(sorted(_ENTRY_KEYS)),
    )


def _pick(obj: Mapping[str, Any], logical: str, pointer: str) -> tuple[Any, str] | None:
    found = [k for k in _ALIASES.get(logical, (logical,)) if k in obj]
    if len(found) > 1:
        raise _manifest_error(f"both '{found[0]}' and '{found[1]}' are given", pointer)
    return (obj[found[0]], found[0]) if found else None


def binding_from_json(obj: Any, pointer: str = "") -> BindingDescriptor:
    """Build a descriptor (without ``invoke``) from a manifest entry or a conformance-case entry.

    Shape errors raise E-BINDING-MANIFEST; policy-relevant problems (unknown effects, audit level,
    safety, types) raise the matching E-BINDING-* code. The full registry checks still run in
    :meth:`BindingRegistry.build`. A missing ``grantParameters`` means a parameterless grant."""
    if not isinstance(obj, dict):
        raise _manifest_error("a binding entry must be an object", pointer)
    extra = sorted(set(obj) - _ENTRY_KEYS)
    if extra:
        raise _manifest_error(
            f"unknown binding propert{'ies' if len(extra) > 1 else 'y'} {', '.join(extra)}",
            f"{pointer}/{extra[0]}",
            did_you_mean(extra[0], _ENTRY_KEYS),
        )
    bid = obj.get("id")
    if not isinstance(bid, str):
        raise _manifest_error("'id' must be a string", f"{pointer}/id")
    params_raw = obj.get("parameters", [])
    if not isinstance(params_raw, list):
        raise _manifest_error("'parameters' must be a list", f"{pointer}/parameters")
    params: list[SandboxType] = []
    names: list[str] = []
    for i, p in enumerate(params_raw):
        where = f"{pointer}/parameters/{i}"
        if isinstance(p, dict) and "type" in p:
            if set(p) - {"name", "type"} or not isinstance(p.get("name", ""), str):
                raise _manifest_error('a named parameter is {"name": str, "type": type}', where)
            names.append(p.get("name", f"arg{i}"))
            params.append(_as_type(p["type"], f"{where}/type"))
        else:
            names.append(f"arg{i}")
            params.append(_as_type(p, where))
    if "returnType" not in obj:
        raise reject("E-BINDING-REQUIRED", f"binding {bid}: missing returnType", pointer, binding=bid)
    ret = _as_type(obj["returnType"], f"{pointer}/returnType")
    effects_raw = obj.get("effects", [])
    if not isinstance(effects_raw, list) or not all(isinstance(e, str) for e in effects_raw):
        raise _manifest_error("'effects' must be a list of effect names", f"{pointer}/effects")
    effects, unknown = parse_effect_names(effects_raw)
    if unknown:
        raise reject(
            "E-BINDING-EFFECT",
            f"binding {bid}: unknown effect(s) {', '.join(unknown)}",
            f"{pointer}/effects",
            binding=bid,
        )
    cap_entry = _pick(obj, "capability", pointer)
    capability = cap_entry[0] if cap_entry else None
    if capability is not None and not isinstance(capability, str):
        raise _manifest_error(
            "the capability must be a string or null", f"{pointer}/{cap_entry[1] if cap_entry else ''}"
        )
    cost = _cost_from_json(_pick(obj, "cost", pointer), pointer)
    audit = _enum_field(obj, "audit", AuditLevel, "E-BINDING-AUDIT", pointer, bid)
    safety = _enum_field(obj, "safety", Safety, "E-BINDING-SAFETY", pointer, bid)
    kind_raw = obj.get("auditKind", AuditKind.BINDING_CALL.value)
    try:
        audit_kind = AuditKind(kind_raw)
    except ValueError:
        raise reject(
            "E-BINDING-AUDIT",
            f"binding {bid}: unknown audit kind {kind_raw!r}",
            f"{pointer}/auditKind",
            binding=bid,
        ) from None
    is_async = obj.get("isAsync", False)
    if not isinstance(is_async, bool):
        raise _manifest_error("'isAsync' must be a boolean", f"{pointer}/isAsync")
    version = obj.get("version", "1.0.0")
    if not isinstance(version, str):
        raise _manifest_error("'version' must be a string", f"{pointer}/version")
    stub = GENERIC_STUB
    target = obj.get("compiledTarget")
    if target is not None:
        if (
            not isinstance(target, dict)
            or target.get("kind") != "RuntimeStub"
            or not isinstance(target.get("method"), str)
        ):
            raise reject(
                "E-BINDING-COMPILED",
                f'binding {bid}: compiledTarget must be {{"kind": "RuntimeStub", "method": name}}',
                f"{pointer}/compiledTarget",
                binding=bid,
            )
        stub = target["method"]
    validator = _grant_parameters_from_json(obj.get("grantParameters"), f"{pointer}/grantParameters")
    description = obj.get("description", "")
    return BindingDescriptor(
        id=bid,
        parameters=tuple(params),
        return_type=ret,
        effects=effects,
        capability=capability,
        cost=cost,
        audit=audit if audit is not None else _default_audit(effects, capability),
        safety=safety if safety is not None else _default_safety(effects, capability),
        version=version,
        is_async=is_async,
        audit_kind=audit_kind,
        grant_validator=validator,
        compiled_stub=stub,
        parameter_names=tuple(names),
        description=description if isinstance(description, str) else "",
        origin=pointer,
    )


def _enum_field(
    obj: Mapping[str, Any], logical: str, enum: type[Any], code: str, pointer: str, bid: str
) -> Any:
    entry = _pick(obj, logical, pointer)
    if entry is None:
        return None
    try:
        return enum(entry[0])
    except ValueError:
        raise reject(
            code, f"binding {bid}: unknown {entry[1]} {entry[0]!r}", f"{pointer}/{entry[1]}", binding=bid
        ) from None


def _cost_from_json(entry: tuple[Any, str] | None, pointer: str) -> Cost | None:
    if entry is None:
        return None
    raw, key = entry
    where = f"{pointer}/{key}"
    if not isinstance(raw, dict) or set(raw) - _COST_KEYS or "baseFuel" not in raw:
        raise _manifest_error(
            "a cost model is {baseFuel, perByteFuel?, allocationFromReturnBytes?, maxCallsPerRun?}", where
        )
    base = raw["baseFuel"]
    per_byte = raw.get("perByteFuel", 0)
    alloc = raw.get("allocationFromReturnBytes", False)
    max_calls = raw.get("maxCallsPerRun")
    for name, value in (("baseFuel", base), ("perByteFuel", per_byte)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise reject("E-BINDING-COST", f"{name} must be an integer", f"{where}/{name}")
    if max_calls is not None and (not isinstance(max_calls, int) or isinstance(max_calls, bool)):
        raise reject("E-BINDING-COST", "maxCallsPerRun must be an integer or null", f"{where}/maxCallsPerRun")
    if not isinstance(alloc, bool):
        raise reject(
            "E-BINDING-COST",
            "allocationFromReturnBytes must be a boolean",
            f"{where}/allocationFromReturnBytes",
        )
    return Cost(base, per_byte, alloc, max_calls)


def _grant_parameters_from_json(raw: Any, pointer: str) -> GrantParameters:
    if raw is None:
        return PARAMETERLESS_GRANT
    if not isinstance(raw, dict) or set(raw) - {"required", "optional"}:
        raise _manifest_error('grantParameters is {"required": [names], "optional": [names]}', pointer)
    lists = []
    for key in ("required", "optional"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _manifest_error(f"grantParameters.{key} must be a list of names", f"{pointer}/{key}")
        lists.append(tuple(value))
    return GrantParameters(lists[0], lists[1])


def load_binding_manifest(
    data: bytes | str | Mapping[str, Any] | Sequence[Any],
) -> tuple[BindingDescriptor, ...]:
    """Parse a manifest (``{"manifestVersion": 1, "bindings": [...]}``) or a bare list of entries
    (the conformance-case ``bindings`` array). Text input is decoded strictly (duplicate keys and
    NaN are refused). Raises DotBoxDError (E-BINDING-MANIFEST and friends)."""
    obj: Any = data
    if isinstance(data, (bytes, str)):
        obj = read_json(data, HOST_DOCUMENT_BUDGETS, code="E-BINDING-MANIFEST", what="the manifest")
    if isinstance(obj, Mapping):
        extra = set(obj) - {"manifestVersion", "sandboxRuntimeVersion", "bindings"}
        if extra:
            raise _manifest_error(f"unknown manifest properties {', '.join(sorted(extra))}", "")
        if obj.get("manifestVersion", 1) != 1:
            raise _manifest_error("manifestVersion must be 1", "/manifestVersion")
        entries = obj.get("bindings")
        prefix = "/bindings"
    else:
        entries = obj
        prefix = ""
    if not isinstance(entries, list):
        raise _manifest_error("'bindings' must be a list", prefix)
    return tuple(binding_from_json(e, f"{prefix}/{i}") for i, e in enumerate(entries))


def standard_bindings() -> tuple[BindingDescriptor, ...]:
    """DotBoxD's effectful built-in bindings (spec/validation.md section 8), declared without ``invoke``.

    The descriptors fix the contract (signature, effects, capability, cost, audit, safety, async);
    the runtime attaches its facades with ``dataclasses.replace(d, invoke=...)``. ``dotboxd check``
    validates against these unless told otherwise."""
    read, write = Effect.CPU | Effect.ALLOC | Effect.FILE_READ, Effect.CPU | Effect.FILE_WRITE | Effect.AUDIT
    per_resource, per_call = AuditLevel.PER_RESOURCE, AuditLevel.PER_CALL
    ro, se = Safety.READ_ONLY_EXTERNAL, Safety.SIDE_EFFECTING_EXTERNAL
    log = Effect.CPU | Effect.AUDIT
    return (
        BindingDescriptor(
            "file.readText",
            (SANDBOX_PATH,),
            STRING,
            read,
            "file.read",
            Cost(50, 1),
            per_resource,
            ro,
            is_async=True,
            description="read a UTF-8 text file under the granted root",
        ),
        BindingDescriptor(
            "file.writeText",
            (SANDBOX_PATH, STRING),
            UNIT,
            write,
            "file.write",
            Cost(50, 1),
            per_resource,
            se,
            is_async=True,
            description="atomically write a text file under the root",
        ),
        BindingDescriptor(
            "time.nowUnixMillis",
            (),
            I64,
            Effect.CPU | Effect.TIME,
            "time.now",
            Cost(2),
            per_call,
            ro,
            description="the current (or logical) time in Unix milliseconds",
        ),
        BindingDescriptor(
            "random.nextI32",
            (I32, I32),
            I32,
            Effect.CPU | Effect.RANDOM,
            "random",
            Cost(3),
            per_call,
            ro,
            description="a random I32 in [minInclusive, maxExclusive)",
        ),
        BindingDescriptor(
            "log.info",
            (STRING,),
            UNIT,
            log,
            "log.write",
            Cost(2),
            per_call,
            se,
            audit_kind=AuditKind.SANDBOX_LOG,
            description="write an info log event",
        ),
        BindingDescriptor(
            "log.warn",
            (STRING,),
            UNIT,
            log,
            "log.write",
            Cost(2),
            per_call,
            se,
            audit_kind=AuditKind.SANDBOX_LOG,
            description="write a warning log event",
        ),
        BindingDescriptor(
            "net.http.get",
            (SANDBOX_URI,),
            STRING,
            Effect.CPU | Effect.ALLOC | Effect.NETWORK,
            "net.http.get",
            Cost(75, 1),
            per_resource,
            ro,
            is_async=True,
            description="HTTP GET of an allowlisted host (off unless granted)",
        ),
    )


#: A catalogue with no host bindings (pure kernels).
EMPTY_CATALOG = BindingCatalog()

__all__ = [
    "ASYNC_CAPABILITY",
    "BUILTIN_CAPABILITIES",
    "BUILTIN_CAPABILITY_EFFECTS",
    "EMPTY_CATALOG",
    "PARAMETERLESS_GRANT",
    "REENTRANT_CAPABILITY",
    "AuditKind",
    "AuditLevel",
    "BindingCatalog",
    "BindingDescriptor",
    "BindingRegistry",
    "Cost",
    "GrantParameters",
    "GrantValidator",
    "GuidText",
    "Int32",
    "Int64",
    "PathText",
    "Safety",
    "UriText",
    "binding_from_json",
    "binding_manifest_hash",
    "binding_to_json",
    "canonical_record",
    "check_binding",
    "host_binding",
    "is_builtin_capability",
    "load_binding_manifest",
    "manifest_to_json",
    "same_implementation",
    "sandbox_type_from_hint",
    "sha256_lines",
    "standard_bindings",
]
