"""Event sessions: one per open WebSocket on ``/v1/events``, the owner of that client's event kernels.

A client opens the WebSocket (bearer token in the handshake), receives ``{"type": "session",
"session": ID}`` and installs plugin envelopes naming that session; the hub owner is
``tenant/ID``, so a session belongs to exactly one tenant and one connection. When the socket
closes, for whatever reason, every kernel of the session is unloaded (``uninstall_owner``).

Messages that handlers send reach the hub's per-owner outbox, which offers them to the session's
``offer`` (the sink). ``offer`` runs on whichever thread published the event: it appends to a
bounded queue (``ws_queue_size``) and wakes the connection's sender task. When the queue is full the
message is declined and stays in the hub's outbox (itself bounded, with the owner's overflow rule);
the sender pulls waiting messages again once it has sent the queue. A client that does not read at
all stalls the sender: when one frame cannot be written within ``ws_send_timeout_seconds`` the
session is marked overflowed, the connection is closed (code 1008) and its kernels unloaded. Each
client has its own queue and sender, so the others are unaffected. The server's per-connection
kernel send buffer is fixed (``runner.SEND_BUFFER_BYTES``), so a stalled client holds at most that,
the transport's 64 KiB and its queue.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dotboxd.core.diagnostics import reject
from dotboxd.events.outbox import OutboxMessage

OVERFLOW_CLOSE_CODE = 1008


@dataclass
class Session:
    id: str
    tenant: str
    capacity: int
    loop: asyncio.AbstractEventLoop
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    queue: deque[dict[str, Any]] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)
    overflowed: bool = False
    refused: bool = False
    closed: bool = False
    sent: int = 0

    @property
    def owner(self) -> str:
        return f"{self.tenant}/{self.id}"

    def offer(self, message: OutboxMessage) -> bool:
        """The hub's sink: queue ``message`` for the socket, or overflow (False, and disconnect)."""
        with self.lock:
            if self.closed or self.overflowed:
                return False
            if len(self.queue) >= self.capacity:
                self.refused = True  # it waits in the hub's outbox; the sender pulls it when there is room
                return False
            self.queue.append(
                {
                    "type": "message",
                    "plugin": message.plugin_id,
                    "event": message.event_type,
                    "eventId": message.event_id,
                    "text": message.text,
                }
            )
        self.loop.call_soon_threadsafe(self.wake.set)
        return True

    def take(self) -> tuple[list[dict[str, Any]], bool]:
        """Everything queued, and whether a message was refused since the last take (then more
        are waiting in the hub's outbox)."""
        with self.lock:
            items = list(self.queue)
            self.queue.clear()
            refused, self.refused = self.refused, False
            return items, refused


class Sessions:
    """The open sessions, by id; looked up only together with the caller's tenant."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, tenant: str, capacity: int) -> Session:
        session = Session(secrets.token_hex(12), tenant, capacity, asyncio.get_running_loop())
        with self._lock:
            self._sessions[session.id] = session
        return session

    def close(self, session: Session) -> None:
        with session.lock:
            session.closed = True
        with self._lock:
            self._sessions.pop(session.id, None)

    def get(self, tenant: str, session_id: object) -> Session:
        """The open session ``session_id`` of ``tenant`` (E-SERVER-NOT-FOUND otherwise, also for
        another tenant's session: its existence is not revealed)."""
        with self._lock:
            found = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if found is None or found.tenant != tenant:
            raise reject(
                "E-SERVER-NOT-FOUND",
                "no open event session with that id",
                "/session",
                hint="open the WebSocket /v1/events first and use the session id it sends",
            )
        return found

    def by_owner(self, owner: str) -> Session | None:
        tenant, _, session_id = owner.partition("/")
        with self._lock:
            found = self._sessions.get(session_id)
        return found if found is not None and found.tenant == tenant else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
