"""Install-time checks that tie an envelope's module to the host's contract.

After the module is validated against the owner's policy, these checks decide whether it is an
event kernel this host can run: every subscription names this module (its ``kernel``) and a known
event; ``shouldHandle`` and ``handle`` are entrypoints and the filter returns Bool; each of their
parameters binds by name to an event field (``e_<field>``, present with the same type in every
subscribed event) or to a live setting (same type as declared), event fields first; and the filter
is pure (``dotboxd.validator.purity``). The result is, per entrypoint, where each argument comes
from, so ``publish`` builds argument lists without looking at names again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, reject
from dotboxd.core.types import BOOL
from dotboxd.events.contracts import FIELD_PREFIX, EventContract, EventType
from dotboxd.events.envelope import Envelope
from dotboxd.validator.plan import ExecutionPlan
from dotboxd.validator.purity import require_pure

SourceKind = Literal["field", "setting"]


@dataclass(frozen=True)
class ArgSource:
    """Argument ``i`` of an entrypoint comes from event field ``name`` or live setting ``name``."""

    kind: SourceKind
    name: str


def relocate(error: DotBoxDError, envelope: Envelope) -> DotBoxDError:
    """A module diagnostic re-pointed into the envelope (``/module`` + its pointer). Line:column
    stay for the text form (they are positions in the module string); for the wire form they would
    be positions in a re-serialized copy, so they are dropped and the pointer alone locates it."""
    moved: list[Diagnostic] = []
    for diagnostic in error.diagnostics:
        span = diagnostic.span if envelope.module_is_text else None
        moved.append(replace(diagnostic, pointer="/module" + diagnostic.pointer, span=span))
    return DotBoxDError(moved)


def check_subscriptions(envelope: Envelope, contract: EventContract) -> tuple[EventType, ...]:
    """The subscribed event types (E-EVENT-CONTRACT / E-EVENT-UNKNOWN for names the host lacks)."""
    if envelope.contract != contract.name:
        raise reject(
            "E-EVENT-CONTRACT",
            f"this host serves contract {contract.name!r}, not {envelope.contract!r}",
            "/manifest/contract",
            contract=envelope.contract,
        )
    events: list[EventType] = []
    for index, sub in enumerate(envelope.subscriptions):
        event = contract.events.get(sub.event)
        if event is None:
            raise reject(
                "E-EVENT-UNKNOWN",
                f"contract {contract.name} publishes no event {sub.event!r}",
                f"/manifest/subscriptions/{index}/event",
                hint=f"known events: {sorted(contract.events)}",
                event=sub.event,
            )
        events.append(event)
    return tuple(events)


def _module_pointer(envelope: Envelope, pointer: str) -> str:
    return "/module" + pointer


def check_entrypoints(
    envelope: Envelope, plan: ExecutionPlan, events: tuple[EventType, ...]
) -> tuple[tuple[ArgSource, ...], tuple[ArgSource, ...]]:
    """The argument sources of shouldHandle and handle (see the module docstring for the rules)."""
    for index, sub in enumerate(envelope.subscriptions):
        if sub.kernel != plan.module.id:
            raise reject(
                "E-EVENT-ENTRYPOINT",
                f"subscription runs kernel {sub.kernel!r} but the module is {plan.module.id!r}",
                f"/manifest/subscriptions/{index}/kernel",
            )
    sources: list[tuple[ArgSource, ...]] = []
    for role, function_id in (("shouldHandle", envelope.should_handle), ("handle", envelope.handle)):
        info = plan.functions.get(function_id)
        if info is None or not info.is_entrypoint:
            raise reject(
                "E-EVENT-ENTRYPOINT",
                f"{role} names {function_id!r}, which is not an entrypoint of the module",
                f"/entrypoints/{role}",
                hint="declare it with `entrypoint fn`",
                entrypoints=list(plan.entrypoints),
            )
        if role == "shouldHandle" and info.return_type != BOOL:
            raise reject(
                "E-EVENT-ENTRYPOINT",
                f"shouldHandle must return Bool, not {info.return_type}",
                _module_pointer(envelope, info.function.pointer),
                info.function.span if envelope.module_is_text else None,
            )
        sources.append(_parameter_sources(envelope, plan, function_id, events))
    require_pure(
        plan, envelope.should_handle, code="E-EVENT-FILTER-IMPURE", pointer="/entrypoints/shouldHandle"
    )
    return sources[0], sources[1]


def _parameter_sources(
    envelope: Envelope, plan: ExecutionPlan, function_id: str, events: tuple[EventType, ...]
) -> tuple[ArgSource, ...]:
    info = plan.functions[function_id]
    settings = {s.name: s for s in envelope.settings}
    out: list[ArgSource] = []
    seen_setting = False
    for param, param_type in zip(info.function.parameters, info.parameter_types, strict=True):
        pointer = _module_pointer(envelope, param.pointer)
        span = param.span if envelope.module_is_text else None
        if param.name.startswith(FIELD_PREFIX):
            field_name = param.name[len(FIELD_PREFIX) :]
            for event in events:
                expected = event.types.get(field_name)
                if expected is None or expected != param_type:
                    raise reject(
                        "E-EVENT-PARAM",
                        f"{function_id}: parameter {param.name} needs field {field_name!r} of type "
                        f"{param_type} in event {event.name}",
                        pointer,
                        span,
                        hint=f"{event.name} has fields {dict(event.fields)}",
                        event=event.name,
                    )
            if seen_setting:
                raise reject(
                    "E-EVENT-PARAM",
                    f"{function_id}: event field {param.name} comes after a live setting",
                    pointer,
                    span,
                    hint="list event fields (e_...) first, then live settings",
                )
            out.append(ArgSource("field", field_name))
            continue
        setting = settings.get(param.name)
        if setting is None:
            raise reject(
                "E-EVENT-PARAM",
                f"{function_id}: parameter {param.name} is neither an event field (e_<field>) nor a live setting",
                pointer,
                span,
                hint=f"live settings: {sorted(settings)}",
            )
        if setting.sandbox_type != param_type:
            raise reject(
                "E-EVENT-PARAM",
                f"{function_id}: parameter {param.name} is {param_type} but the setting is {setting.type_name}",
                pointer,
                span,
            )
        seen_setting = True
        out.append(ArgSource("setting", param.name))
    return tuple(out)
