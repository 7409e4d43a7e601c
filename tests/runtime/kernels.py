"""Helpers for runtime tests: run a kernel written in the text form through the real pipeline."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from dotboxd.core.bindings import BindingDescriptor
from dotboxd.host import BindingContext, Cost, Effect, ExecutionResult, Policy, SandboxHost, host_binding


def module(body: str, signature: str = "main() -> I32", header: str = "") -> str:
    """A one-entrypoint module in the text form."""
    return f'module "t" version "1.0.0";\n{header}\nentrypoint fn {signature} {{\n{body}\n}}\n'


def policy(**limits: int) -> Policy:
    """A pure policy with a generous wall time (tests must not depend on machine speed)."""
    limits.setdefault("max_wall_time_ms", 60_000)
    return Policy.builder().with_limits(**limits).build()


def run(
    source: str,
    args: Sequence[Any] = (),
    pol: Policy | None = None,
    bindings: Iterable[BindingDescriptor] = (),
    entry: str = "main",
    encoding: str = "python",
) -> ExecutionResult:
    host = SandboxHost(bindings=list(bindings))
    plan = host.prepare(source, pol if pol is not None else policy())
    return host.execute(plan, entry, args, encoding=encoding)  # type: ignore[arg-type]


def value(body: str, signature: str = "main() -> I32", args: Sequence[Any] = (), **limits: int) -> Any:
    result = run(module(body, signature), args, policy(**limits))
    assert result.ok, result.error
    return result.value


def error(
    body: str, signature: str = "main() -> I32", args: Sequence[Any] = (), **limits: int
) -> tuple[str, str]:
    result = run(module(body, signature), args, policy(**limits))
    assert not result.ok and result.error is not None, result.value
    return result.error.category, result.error.code


_world_write = partial(
    host_binding,
    capability="world.write",
    effects=Effect.CPU | Effect.HOST_STATE_WRITE,
    cost=Cost(base_fuel=1),
    context=True,
    returns="Bool",
)
"""``host_binding`` with what every test ``world.write`` binding declares (the id and parameters vary)."""


def world_binding(binding_id: str, enqueue: Callable[[BindingContext], None]) -> BindingDescriptor:
    """A parameterless ``world.write`` binding that returns true after ``enqueue`` queued its host
    commands on the binding context (applied only if the run succeeds)."""

    @_world_write(id=binding_id)
    def queue(ctx: BindingContext) -> bool:
        enqueue(ctx)
        return True

    return queue


def appending_binding(binding_id: str, kind: str, key: str, world: list[int]) -> BindingDescriptor:
    """A ``world.write`` binding of one I32 that queues a ``kind`` command (payload ``{key: n}``)
    appending ``n`` to ``world`` once the run succeeds; it returns true."""

    @_world_write(id=binding_id, parameters=["I32"])
    def append(ctx: BindingContext, n: int) -> bool:
        ctx.enqueue(kind, {key: n}, apply=lambda: world.append(n))
        return True

    return append
