"""Service RPC: trusted host methods a client calls by name, typed with the binding value types.

A method is plain Python the host operator trusts (registered in code, or contributed by a trusted
plugin through ``PluginRegistry.add_method``): no sandbox, no fuel. What the server does add is a
schema check at the boundary: the method's parameter and return types come from its type hints,
read by the same rules as a host binding's (``sandbox_type_from_hint``: ``Int32``, ``list[str]``,
``dict[str, Int64]`` ...), and a call's JSON arguments are decoded in the conformance typed
encoding (``decode_typed``) before the method sees them, so a method receives sandbox values of the
declared types and nothing else. Its return value is coerced back to the declared type.

An RPC method is **not** a binding: the kernel validator resolves calls only against the host's
binding catalogue, which this table never touches. Exposing a method to kernels too is a separate,
explicit ``host_binding`` declaration (with its capability, cost and audit level).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dotboxd.core import literal_rules
from dotboxd.core.bindings import HintProblem, sandbox_type_from_hint
from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.types import SandboxType, to_type_ref
from dotboxd.core.values import SandboxFault, coerce_host_value, decode_typed, encode_typed
from dotboxd.core.visible import clipped

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


@dataclass(frozen=True)
class RpcMethod:
    """One callable method with its sandbox parameter and return types."""

    name: str
    handler: Callable[..., Any]
    parameter_names: tuple[str, ...]
    parameters: tuple[SandboxType, ...]
    returns: SandboxType

    def describe(self) -> dict[str, Any]:
        """The method's signature as JSON (listed by ``GET /v1/rpc``)."""
        return {
            "name": self.name,
            "parameters": [
                {"name": n, "type": t.to_json()}
                for n, t in zip(self.parameter_names, self.parameters, strict=True)
            ],
            "returns": self.returns.to_json(),
        }


def _type_of(hints: Mapping[str, Any], key: str, method: str) -> SandboxType:
    what = "its return type" if key == "return" else f"parameter {key!r}"
    if key not in hints:
        raise reject(
            "E-SERVER-CONFIG",
            f"RPC method {method}: {what} has no type hint",
            hint="annotate every parameter and the return type with a sandbox type (Int32, str, list[...])",
        )
    try:
        return sandbox_type_from_hint(hints[key])
    except HintProblem as problem:
        raise reject("E-SERVER-CONFIG", f"RPC method {method}: {what}: {problem}") from None


def rpc_method(name: str, handler: Callable[..., Any]) -> RpcMethod:
    """Describe ``handler`` as the RPC method ``name`` (E-SERVER-CONFIG when a type is missing)."""
    if not name or not set(name) <= _NAME_CHARS or len(name) > 128:
        raise reject("E-SERVER-CONFIG", f"RPC method name {name!r} is not a dotted identifier")
    if inspect.iscoroutinefunction(handler):
        raise reject(
            "E-SERVER-CONFIG",
            f"RPC method {name} is a coroutine function",
            hint="RPC methods run on worker threads: make it a plain function",
        )
    params = list(inspect.signature(handler).parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        raise reject("E-SERVER-CONFIG", f"RPC method {name}: parameters must be positional")
    try:
        hints = typing.get_type_hints(handler, include_extras=True)
    except Exception as error:
        raise reject("E-SERVER-CONFIG", f"RPC method {name}: cannot read type hints ({error})") from None
    return RpcMethod(
        name,
        handler,
        tuple(p.name for p in params),
        tuple(_type_of(hints, p.name, name) for p in params),
        _type_of(hints, "return", name),
    )


class RpcTable:
    """The methods a server exposes over ``POST /v1/rpc/{name}``, checked once when built."""

    def __init__(self, methods: Iterable[tuple[str, Callable[..., Any]]] = ()) -> None:
        self._methods: dict[str, RpcMethod] = {}
        for name, handler in methods:
            if name in self._methods:
                raise reject("E-SERVER-CONFIG", f"RPC method {name} is registered twice")
            self._methods[name] = rpc_method(name, handler)

    def get(self, name: str) -> RpcMethod:
        method = self._methods.get(name)
        if method is None:
            raise reject("E-SERVER-NOT-FOUND", f"no RPC method named {clipped(name)!r}", "/method")
        return method

    def names(self) -> list[str]:
        return sorted(self._methods)

    def describe(self) -> list[dict[str, Any]]:
        return [self._methods[n].describe() for n in self.names()]


def decode_args(method: RpcMethod, args: object) -> list[Any]:
    """The JSON ``args`` array as sandbox values of the method's parameter types."""
    if not isinstance(args, list):
        raise reject("E-SERVER-RPC-ARGS", "args must be an array", "/args")
    if len(args) != len(method.parameters):
        raise reject(
            "E-SERVER-RPC-ARGS",
            f"{method.name} takes {len(method.parameters)} arguments, got {len(args)}",
            "/args",
            expected=len(method.parameters),
            got=len(args),
        )
    values: list[Any] = []
    for index, (raw, sandbox_type) in enumerate(zip(args, method.parameters, strict=True)):
        try:
            values.append(decode_typed(raw, to_type_ref(sandbox_type), literal_rules))
        except SandboxFault as fault:
            raise reject(
                "E-SERVER-RPC-ARGS",
                f"argument {method.parameter_names[index]!r} is not a {sandbox_type}: {fault.safe_message}",
                f"/args/{index}",
                hint="arguments use the conformance typed JSON encoding (maps are [key, value] pairs)",
            ) from None
    return values


def call_method(method: RpcMethod, values: Sequence[Any]) -> object:
    """Run the method and encode its result; its own exceptions become E-SERVER-RPC-FAILED with the
    exception's class only (its message may hold host internals)."""
    try:
        raw = method.handler(*values)
    except DotBoxDError:
        raise
    except Exception as error:
        raise reject(
            "E-SERVER-RPC-FAILED", f"RPC method {method.name} raised {type(error).__name__}"
        ) from None
    try:
        ref = to_type_ref(method.returns)
        return encode_typed(coerce_host_value(raw, ref, literal_rules), ref)
    except SandboxFault:
        raise reject(
            "E-SERVER-RPC-FAILED", f"RPC method {method.name} returned a value that is not a {method.returns}"
        ) from None
