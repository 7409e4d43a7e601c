"""The server's audit log: one JSON line per authenticated action, never a token.

Each event names the tenant (its configured name), the action (``rpc``, ``install``, ``invoke``,
``uninstall``, ``auth-failed``...), the target and the outcome code. Tokens are hashed when the
config is read and never passed here, and no request header is ever copied into an event, so a
token cannot reach this log. Events go to the ``dotboxd.server.audit`` logger and to a bounded
in-memory ring (``recent``) that tests and operators can read.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from typing import Any

LOGGER = logging.getLogger("dotboxd.server.audit")
RING_SIZE = 1024


class AuditLog:
    def __init__(self, ring_size: int = RING_SIZE) -> None:
        self._ring: deque[dict[str, Any]] = deque(maxlen=ring_size)
        self._lock = threading.Lock()

    def record(self, action: str, tenant: str, target: str = "", outcome: str = "ok", **facts: Any) -> None:
        event = {"ts": round(time.time(), 3), "action": action, "tenant": tenant, "target": target}
        event["outcome"] = outcome
        event.update(facts)
        with self._lock:
            self._ring.append(event)
        LOGGER.info(json.dumps(event, sort_keys=True, default=str))

    def recent(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._ring)
