"""Per-owner bounded outboxes: where ``host.message.send`` puts a handler's messages.

Why bounded: an owner that never reads (a client that stopped draining its WebSocket) must not make
the host hold its messages without limit. Each owner has one outbox of ``capacity`` messages and an
overflow rule, chosen per owner by its quota:

* ``"drop"``: the new message is dropped and counted (``messages_dropped``); the owner keeps its
  kernels and later messages are delivered when there is room again;
* ``"disconnect"``: the owner is disconnected: the hub unloads all its kernels, clears its outbox and
  counts a disconnect, exactly as if the client had gone away.

Either way only that owner is affected. A sink (``attach_sink``) is a callable the hub offers each
queued message to, oldest first, after every run; it returns True when it took the message and
False when it cannot take more now (its own queue is full), in which case the message waits in the
outbox. A sink is called on the thread that runs ``publish``, under the hub's lock: an asyncio server
hands the message to its loop (``loop.call_soon_threadsafe``) and answers from its own bounded
queue's fill level, never blocking. ``drain`` hands over (and removes) everything queued, for owners
that pull.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Overflow = Literal["drop", "disconnect"]

#: The longest message text a handler may send (longer ones fail the call with R-BINDING-INVALID).
MAX_MESSAGE_LENGTH = 4096


@dataclass(frozen=True)
class OutboxMessage:
    """One message a handler sent: who it is for, which plugin and event produced it, its text."""

    owner: str
    plugin_id: str
    event_id: int
    event_type: str
    text: str

    def to_json(self) -> dict[str, Any]:
        """The message as pushed to a client (the owner is implied by the connection)."""
        return {
            "pluginId": self.plugin_id,
            "eventId": self.event_id,
            "eventType": self.event_type,
            "text": self.text,
        }


Sink = Callable[[OutboxMessage], bool]


class Outbox:
    """One owner's bounded message queue (see the module docstring for the overflow rule)."""

    __slots__ = ("capacity", "overflow", "queue", "sink")

    def __init__(self, capacity: int, overflow: Overflow) -> None:
        self.capacity = capacity
        self.overflow: Overflow = overflow
        self.queue: deque[OutboxMessage] = deque()
        self.sink: Sink | None = None

    def offer(self, message: OutboxMessage) -> bool:
        """Queue ``message``; False when the outbox is full (the caller applies the overflow rule)."""
        if len(self.queue) >= self.capacity:
            return False
        self.queue.append(message)
        return True

    def flush(self) -> int:
        """Offer queued messages to the sink, oldest first, until it declines; returns how many it
        took. Exceptions from the sink propagate to the hub, which detaches it."""
        sink = self.sink
        taken = 0
        while sink is not None and self.queue:
            if not sink(self.queue[0]):
                break
            self.queue.popleft()
            taken += 1
        return taken

    def drain(self) -> list[OutboxMessage]:
        out = list(self.queue)
        self.queue.clear()
        return out
