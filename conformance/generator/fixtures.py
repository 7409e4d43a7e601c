"""Fixture bindings: host bindings declared as data (the case format's ``bindings`` entries).

Each drawn binding is registrable by construction (``BindingRegistry`` checks, spec/validation.md section 8): pure
ones have no capability and are ``PureIntrinsic``/``PureHostFacade`` with audit ``None``; effectful
ones (host-state read or write, some async) require a custom dotted capability, carry an audit level
and an external safety class, and use only built-in types (brands are module vocabulary). The
``behavior`` is mostly well-behaved (``return``, ``echo``, ``sequence``, ``async-return`` for async
bindings) and sometimes not (``raise``, ``foreign``, ``malformed``, ``pending`` without the async
grant), so that binding failures appear among the outcomes. Behaviours whose outcome depends on
wall-clock time (``pending`` *with* the grant, long sleeps) are never drawn: a generated case must
have one deterministic expectation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dotboxd.core.ast import TypeRef
from dotboxd.core.types import UNIT, SandboxType, to_type_ref

from . import vocab
from .context import BindingSig
from .source import Source

_NOUNS = ("world", "store", "bank", "inventory", "weather")
_KINDS = ((35, "pure"), (30, "read"), (25, "write"), (10, "async"))


@dataclass(frozen=True, slots=True)
class Fixture:
    """One fixture binding: its signature for the generator and its case-format entry."""

    sig: BindingSig
    entry: dict[str, Any]
    capability: str | None
    is_async: bool


def type_json(t: SandboxType) -> Any:
    """A type in the JSON IR form (``"I32"`` or ``{"name": "List", "arguments": [...]}``)."""
    return _ref_json(to_type_ref(t))


def _ref_json(ref: TypeRef) -> Any:
    if not ref.arguments:
        return ref.name
    return {"name": ref.name, "arguments": [_ref_json(a) for a in ref.arguments]}


def draw_fixtures(src: Source, count: int) -> list[Fixture]:
    """``count`` fixtures. Kinds are drawn first: when any binding is async the run may hold the
    async grant, and then a pending result is awaited until the wall-time budget runs out (a
    Timeout that depends on the clock), so no binding of such a module returns ``pending``."""
    kinds = [src.weighted(_KINDS) for _ in range(count)]
    any_async = "async" in kinds
    out: list[Fixture] = []
    for index, kind in enumerate(kinds):
        out.append(_draw_fixture(src, index, kind, any_async, out))
    return out


def _draw_fixture(src: Source, index: int, kind: str, any_async: bool, earlier: list[Fixture]) -> Fixture:
    verb = {"pure": "calc", "read": "get", "write": "put", "async": "fetch"}[kind]
    bid = f"fx.{src.choice(_NOUNS)}{index}.{verb}"
    params = tuple(vocab.draw_type(src, (), 1, allow_unit=False) for _ in range(src.integer(0, 2)))
    ret = UNIT if kind == "write" and src.chance(50) else vocab.draw_type(src, (), 1)
    entry: dict[str, Any] = {
        "id": bid,
        "parameters": [type_json(p) for p in params],
        "returnType": type_json(ret),
    }
    capability: str | None = None
    if kind == "pure":
        entry["effects"] = ["Cpu"] if src.chance(50) else ["Cpu", "Alloc"]
        entry["audit"] = "None"
        entry["safety"] = "PureIntrinsic" if src.chance(70) else "PureHostFacade"
    else:
        shared = [f.capability for f in earlier if f.capability is not None]
        capability = src.choice(shared) if shared and src.chance(20) else f"fx.cap{index}.{kind}"
        effect = {"read": "HostStateRead", "write": "HostStateWrite", "async": "HostStateRead"}[kind]
        effects = ["Cpu", effect]
        if kind == "async":
            effects.insert(1, "Alloc")
        if kind == "write" and src.chance(30):
            effects.append("Audit")
        entry["effects"] = effects
        entry["capability"] = capability
        entry["audit"] = src.weighted(
            ((60, "PerCall"), (20, "Summary"), (15, "FullInputOutput"), (5, "PerResource"))
        )
        entry["safety"] = "SideEffectingExternal" if kind == "write" else "ReadOnlyExternal"
    cost: dict[str, Any] = {"baseFuel": src.integer(0, 20)}
    if src.chance(30):
        cost["perByteFuel"] = 1
    if src.chance(15):
        cost["maxCallsPerRun"] = src.integer(1, 4)
    entry["cost"] = cost
    is_async = kind == "async"
    entry["isAsync"] = is_async
    entry["behavior"] = _behavior(src, params, ret, is_async, any_async)
    return Fixture(BindingSig(bid, params, ret), entry, capability, is_async)


def _behavior(
    src: Source, params: tuple[SandboxType, ...], ret: SandboxType, is_async: bool, any_async: bool
) -> dict[str, Any]:
    options: list[tuple[int, str]] = [
        (40, "return"),
        (15, "sequence"),
        (3, "raise"),
        (2, "foreign"),
        (2, "malformed"),
    ]
    echoes = [i for i, p in enumerate(params) if p == ret]
    if echoes:
        options.append((15, "echo"))
    if is_async:
        options.append((60, "async-return"))
    elif any_async:
        options += [(2, "async-return"), (2, "sleep")]
    else:
        options += [(2, "pending"), (2, "async-return"), (2, "sleep")]
    kind = src.weighted(options)
    if kind in ("return", "async-return"):
        return {"kind": kind, "value": vocab.canonical_json(src, ret)}
    if kind == "sequence":
        return {"kind": kind, "values": [vocab.canonical_json(src, ret) for _ in range(src.integer(1, 3))]}
    if kind == "echo":
        return {"kind": kind, "arg": src.choice(echoes)}
    if kind == "raise":
        return {"kind": kind, "message": "fixture failure with /secret/host/path"}
    if kind == "malformed":
        return {"kind": kind, "value": vocab.wrong_json_value(src, ret)}
    if kind == "sleep":
        return {"kind": kind, "ms": src.integer(0, 1), "value": vocab.canonical_json(src, ret)}
    return {"kind": kind}
