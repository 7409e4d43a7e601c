"""Declaring host bindings in Python: the ``host_binding`` decorator and type-hint mapping.

Sandbox types come from the function's hints only where a hint is unambiguous (``int`` is not: I32
or I64?); the ``Int32``/``Int64``/``GuidText``/``PathText``/``UriText`` aliases name the rest. Hint
problems are refused at decoration time (E-BINDING-TYPE); the registry checks run later, in
``BindingRegistry.build``."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from dotboxd.core.binding_model import (
    PARAMETERLESS_GRANT,
    AuditKind,
    AuditLevel,
    BindingDescriptor,
    Cost,
    GrantValidator,
    Safety,
    sandbox_type_of,
)
from dotboxd.core.builtins import GENERIC_STUB
from dotboxd.core.diagnostics import reject
from dotboxd.core.effects import (
    Effect,
)
from dotboxd.core.types import (
    BOOL,
    F64,
    GUID,
    I32,
    I64,
    SANDBOX_PATH,
    SANDBOX_URI,
    STRING,
    UNIT,
    ListType,
    MapType,
    RecordType,
    SandboxType,
)

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
            param_types = tuple(
                sandbox_type_of(t, f"{origin}/parameters/{i}") for i, t in enumerate(parameters)
            )
        else:
            param_types = tuple(_hint(hints, p.name, id, origin) for p in params)
        ret = (
            sandbox_type_of(returns, f"{origin}/returnType")
            if returns is not None
            else _hint(hints, "return", id, origin)
        )
        asynchronous = inspect.iscoroutinefunction(fn) if is_async is None else is_async
        return BindingDescriptor.declare(
            id,
            param_types,
            ret,
            effects,
            capability,
            cost,
            audit,
            safety,
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


__all__ = [
    "GuidText",
    "HintProblem",
    "Int32",
    "Int64",
    "PathText",
    "UriText",
    "host_binding",
    "sandbox_type_from_hint",
]
