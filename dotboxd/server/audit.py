"""The server's audit log: one JSON line per authenticated action, never a token.

Each event names the tenant (its configured name), the action (``rpc``, ``install``, ``invoke``,
``uninstall``, ``auth-failed``...), the target and the outcome code. Tokens are hashed when the
config is read and never passed here, and no request header is ever copied into an event, so a
token cannot reach this log. Events go to the ``dotboxd.server.audit`` logger and to a bounded
in-memory ring (``recent``) that tests and operators can read. Texts a client chooses (targets such
as a request path, an entrypoint name) are clipped to ``MAX_TEXT`` characters, so the ring stays
bounded in bytes, not only in events.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from typing import Any

from dotboxd.core.visible import visible

LOGGER = logging.getLogger("dotboxd.server.audit")
RING_SIZE = 1024
MAX_TEXT = 256
"""Longest text an event keeps of a client-chosen string (a request path, an entrypoint name): the
ring holds ``RING_SIZE`` events, so without a cap a client sending megabyte-long names would make it
hold gigabytes (and write them to the log)."""


def clip(text: str) -> str:
    """``text``, or its first ``MAX_TEXT`` characters and how many were cut, every invisible or
    terminal-controlling character escaped (``core.visible``): an operator reading the ring or the
    log sees what the client sent, never a bidi override or an escape sequence acting on it."""
    if len(text) <= MAX_TEXT:
        return visible(text)
    return f"{visible(text[:MAX_TEXT])}...({len(text) - MAX_TEXT} more)"


class AuditLog:
    def __init__(self, ring_size: int = RING_SIZE) -> None:
        self._ring: deque[dict[str, Any]] = deque(maxlen=ring_size)
        self._lock = threading.Lock()

    def record(self, action: str, tenant: str, target: str = "", outcome: str = "ok", **facts: Any) -> None:
        event = {"ts": round(time.time(), 3), "action": action, "tenant": tenant, "target": clip(target)}
        event["outcome"] = outcome
        event.update({key: clip(value) if isinstance(value, str) else value for key, value in facts.items()})
        with self._lock:
            self._ring.append(event)
        LOGGER.info(json.dumps(event, sort_keys=True, default=str))

    def recent(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._ring)
