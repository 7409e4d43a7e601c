"""The ``host.message.send`` binding: how a handler tells its owner something.

    router = MessageRouter()
    host = SandboxHost(bindings=[router.binding, *world_bindings])
    hub = EventHub(host, contract, router=router)

The binding is granted by the capability ``host.message.write`` (effects Cpu|HostStateWrite, so a
``shouldHandle`` filter that calls it is refused as impure). A message is not sent during the run:
it is queued as a host command and reaches the owner's outbox only if the whole ``handle`` run
succeeds, so a handler that fails half-way delivers nothing. The router knows which owner a run
works for by the run id the hub chose for it; a call from any other run (a plain ``execute`` of a
plan that happens to use the binding) is refused with R-BINDING-DENIED, so a kernel can never pick
the recipient.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from dotboxd.core.bindings import BindingDescriptor, Cost, host_binding
from dotboxd.core.effects import Effect
from dotboxd.events.outbox import MAX_MESSAGE_LENGTH, OutboxMessage
from dotboxd.runtime.context import BindingContext
from dotboxd.runtime.errors import BindingError

MESSAGE_BINDING = "host.message.send"
MESSAGE_CAPABILITY = "host.message.write"
#: Most messages one handler run may send (the binding's per-run call limit).
MAX_MESSAGES_PER_RUN = 100


@dataclass(frozen=True)
class Delivery:
    """Who the run with a given id works for; ``deliver`` puts an applied message in that outbox."""

    owner: str
    plugin_id: str
    event_id: int
    event_type: str
    deliver: Callable[[OutboxMessage], None]


class MessageRouter:
    """Routes ``host.message.send`` calls to the owner of the run that made them."""

    def __init__(self) -> None:
        self._active: dict[str, Delivery] = {}
        self._lock = threading.Lock()
        self.binding: BindingDescriptor = self._make_binding()

    def begin(self, run_id: str, delivery: Delivery) -> None:
        with self._lock:
            self._active[run_id] = delivery

    def end(self, run_id: str) -> None:
        with self._lock:
            self._active.pop(run_id, None)

    @property
    def active_runs(self) -> int:
        """Runs currently routed (0 between publishes: nothing is kept after a run)."""
        return len(self._active)

    def _make_binding(self) -> BindingDescriptor:
        router = self

        @host_binding(
            id=MESSAGE_BINDING,
            capability=MESSAGE_CAPABILITY,
            effects=Effect.CPU | Effect.HOST_STATE_WRITE,
            cost=Cost(base_fuel=5, max_calls_per_run=MAX_MESSAGES_PER_RUN),
            context=True,
            description="send a text message to the owner of this event kernel (delivered if the run succeeds)",
        )
        def send(ctx: BindingContext, text: str) -> bool:
            """Queue ``text`` for the run's owner; it reaches the outbox when the run succeeds."""
            with router._lock:
                delivery = router._active.get(ctx.run_id)
            if delivery is None:
                raise BindingError("PermissionDenied", "host.message.send works only inside an event handler")
            if len(text) > MAX_MESSAGE_LENGTH:
                raise BindingError("InvalidInput", f"a message is limited to {MAX_MESSAGE_LENGTH} characters")
            message = OutboxMessage(
                delivery.owner, delivery.plugin_id, delivery.event_id, delivery.event_type, text
            )
            ctx.enqueue(
                "message",
                {"plugin": delivery.plugin_id, "event": delivery.event_id, "length": len(text)},
                apply=lambda: delivery.deliver(message),
            )
            return True

        return send
