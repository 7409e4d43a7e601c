"""Reading the server's answers without trusting them: size, time, shape.

The client talks to a server it does not control (a wrong URL, a proxy, a server of another
version, a hostile host). Whatever comes back must end as either the value the caller asked for or
a ``DotBoxDError`` (``ServerAuthError`` for 401) - never a ``KeyError``/``TypeError`` traceback from
a body of the wrong shape, never unbounded memory for a huge body, never a wait past the client's
``timeout`` for a server that trickles its answer one byte at a time (httpx's own timeout is per
read, so a trickle would reset it forever). So a body is read chunk by chunk within a byte cap and
one overall deadline, parsed as JSON, and each member the client uses is checked for its type.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, DotBoxDException, Span, reject

DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""Largest answer body the client reads: far above any result a policy's limits let a kernel
return, far below what would hurt the client's process."""


class ServerAuthError(DotBoxDException):
    """The server answered 401: the token is missing or maps to no tenant."""


def malformed(what: str) -> DotBoxDError:
    """The refusal for an answer the client cannot use (its code: R-HOST-INTERNAL, failed closed)."""
    return reject(
        "R-HOST-INTERNAL",
        f"the server's answer is malformed: {what}",
        hint="check that the URL names a dotboxd server of this version",
    )


class BodyReader:
    """Collects a streamed body within ``max_bytes`` and ``seconds`` from its creation."""

    def __init__(self, max_bytes: int, seconds: float) -> None:
        self.max_bytes = max_bytes
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.max_bytes:
            raise malformed(f"the body is larger than {self.max_bytes} bytes")
        if time.monotonic() > self.deadline:
            raise malformed(f"the body did not arrive within {self.seconds:g} s")
        self.chunks.append(chunk)

    def read(self, chunks: Iterator[bytes]) -> bytes:
        for chunk in chunks:
            self.add(chunk)
        return b"".join(self.chunks)

    async def aread(self, chunks: AsyncIterator[bytes]) -> bytes:
        async for chunk in chunks:
            self.add(chunk)
        return b"".join(self.chunks)


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key, "")
    return value if isinstance(value, str) else ""


def _int(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def diagnostic(data: Mapping[str, Any]) -> Diagnostic:
    """A diagnostic rebuilt from its JSON form; members of the wrong type are dropped (a code that
    is not a string becomes R-HOST-INTERNAL)."""
    line, column = _int(data, "line"), _int(data, "column")
    span = Span(line, column) if line is not None and column is not None else None
    evidence = data.get("evidence")
    code = data.get("code")
    return Diagnostic(
        code if isinstance(code, str) and code else "R-HOST-INTERNAL",
        _text(data, "message"),
        _text(data, "pointer"),
        span,
        dict(evidence) if isinstance(evidence, dict) else {},
        _text(data, "hint"),
    )


def checked(status: int, content: bytes) -> dict[str, Any]:
    """The JSON object of a 2xx answer; else the DotBoxDError (or ServerAuthError) it carries."""
    if status == 401:
        raise ServerAuthError("the server refused the token (401)")
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser recurses
        body = None
    if 200 <= status < 300:
        if isinstance(body, dict):
            return body
        raise malformed(f"HTTP {status} with a body that is not a JSON object")
    found = body.get("diagnostics") if isinstance(body, dict) else None
    diagnostics = [diagnostic(d) for d in found if isinstance(d, dict)] if isinstance(found, list) else []
    if diagnostics:
        raise DotBoxDError(diagnostics)
    raise reject("R-HOST-INTERNAL", f"the server answered HTTP {status} without diagnostics")


def member(body: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """``body[key]`` when it is of ``kind``, else the malformed-answer refusal."""
    value = body.get(key)
    if not isinstance(value, kind):
        raise malformed(f"{key!r} is missing or not of the expected type")
    return value


def usage_of(body: Mapping[str, Any]) -> dict[str, int]:
    """A run's ``usage`` object: counter names to integers."""
    usage = body.get("usage", {})
    if not isinstance(usage, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in usage.values()
    ):
        raise malformed("'usage' is not an object of integer counters")
    return usage
