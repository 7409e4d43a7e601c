"""DotBoxD's effectful built-in bindings (file, time, random, log, HTTP) as descriptors without code."""

from __future__ import annotations

from dotboxd.core.binding_model import (
    AuditKind,
    AuditLevel,
    BindingDescriptor,
    Cost,
    Safety,
)
from dotboxd.core.effects import (
    Effect,
)
from dotboxd.core.types import (
    I32,
    I64,
    SANDBOX_PATH,
    SANDBOX_URI,
    STRING,
    UNIT,
)


def standard_bindings() -> tuple[BindingDescriptor, ...]:
    """DotBoxD's effectful built-in bindings (spec/validation.md section 8), declared without ``invoke``.

    The descriptors fix the contract (signature, effects, capability, cost, audit, safety, async);
    the runtime attaches its facades with ``dataclasses.replace(d, invoke=...)``. ``dotboxd check``
    validates against these unless told otherwise."""
    read, write = Effect.CPU | Effect.ALLOC | Effect.FILE_READ, Effect.CPU | Effect.FILE_WRITE | Effect.AUDIT
    per_resource, per_call = AuditLevel.PER_RESOURCE, AuditLevel.PER_CALL
    ro, se = Safety.READ_ONLY_EXTERNAL, Safety.SIDE_EFFECTING_EXTERNAL
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
        *(
            BindingDescriptor(
                f"log.{level}",
                (STRING,),
                UNIT,
                Effect.CPU | Effect.AUDIT,
                "log.write",
                Cost(2),
                per_call,
                se,
                audit_kind=AuditKind.SANDBOX_LOG,
                description=f"write {what} log event",
            )
            for level, what in (("info", "an info"), ("warn", "a warning"))
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


__all__ = [
    "standard_bindings",
]
