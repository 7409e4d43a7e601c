"""Reading request bodies within bounds, and writing DotBoxD diagnostics as JSON responses.

A body is read chunk by chunk and refused as soon as it passes the byte cap (a declared
``Content-Length`` over the cap is refused before any byte is read), and the whole body must arrive
within ``body_timeout_seconds`` (a slowloris-style trickle gets 408 and the connection is closed,
instead of holding a worker forever). A body must be declared ``Content-Type: application/json``
(parameters allowed; a ``charset`` must be UTF-8): any other type is 415 before the body is read, and
a non-empty body without a type is 415 once read, so a form post, a text upload or a client that
forgot the header learns what to send instead of getting a JSON parse error about its bytes. An
empty body needs no type (it reads as ``{}``). The bytes are then parsed by the project's one bounded JSON
reader (``dotboxd.core.jsonread``) under budgets sized for requests: nesting deeper than 64, a
duplicate key or NaN is an E-JSON-* diagnostic with pointer and line:column, never a
RecursionError.

Every error response has the same shape: ``{"diagnostics": [Diagnostic.to_json(), ...]}`` with
the HTTP status chosen from the code, so ``dotboxd.client`` can rebuild the same ``DotBoxDError``
an in-process host would have raised.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse

from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_json
from dotboxd.core.visible import clipped

REQUEST_MAX_DEPTH = 64
"""Deepest JSON nesting a request may have: a module object nests well under this (the
validator's own statement limit is enforced on the imported tree), a typed argument at most 8."""

_STATUS_BY_CODE = {
    "E-SERVER-NOT-FOUND": 404,
    "E-EVENT-NOT-INSTALLED": 404,
    "E-SERVER-QUOTA": 429,
    "E-SERVER-RPC-FAILED": 500,
}


def status_for(error: DotBoxDError, default: int = 400) -> int:
    """The HTTP status of a refusal: 404 unknown target, 429 quota, 413/408 for size and time
    (carried as ``status`` evidence), 500 a failing RPC method, else ``default``."""
    evidence_status = error.diagnostic.evidence.get("status")
    if isinstance(evidence_status, int):
        return evidence_status
    return _STATUS_BY_CODE.get(error.code, default)


def diagnostics_response(error: DotBoxDError, status: int | None = None) -> JSONResponse:
    body = {"diagnostics": [d.to_json() for d in error.diagnostics]}
    return JSONResponse(body, status_code=status or status_for(error))


def _too_large(max_bytes: int) -> DotBoxDError:
    """413 for a body over ``max_bytes``: whether its Content-Length said so or its bytes did."""
    return reject(
        "E-SERVER-REQUEST",
        f"the request body is larger than {max_bytes} bytes",
        hint="send a smaller body",
        limit=max_bytes,
        status=413,
    )


async def read_body(request: Request, max_bytes: int, timeout_seconds: float) -> bytes:
    """The request body, at most ``max_bytes``, fully arrived within ``timeout_seconds``."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(max_bytes)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_bytes:
                    raise _too_large(max_bytes)
                chunks.append(chunk)
    except TimeoutError:
        raise reject(
            "E-SERVER-REQUEST",
            f"the request body did not arrive within {timeout_seconds:g} s",
            hint="send the whole body promptly",
            status=408,
        ) from None
    return b"".join(chunks)


JSON_MEDIA_TYPE = "application/json"


def _unsupported(declared: str | None) -> DotBoxDError:
    got = "no Content-Type" if declared is None else f"Content-Type {clipped(declared)!r}"
    return reject(
        "E-SERVER-REQUEST",
        f"the request body must be {JSON_MEDIA_TYPE} (got {got})",
        hint=f"send the header Content-Type: {JSON_MEDIA_TYPE} (curl: -H 'Content-Type: {JSON_MEDIA_TYPE}')",
        status=415,
    )


def is_json_media_type(declared: str) -> bool:
    """``application/json``, in any case, with parameters; a ``charset`` must name UTF-8."""
    kind, *parameters = declared.split(";")
    if kind.strip().lower() != JSON_MEDIA_TYPE:
        return False
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


async def read_json_body(request: Request, max_bytes: int, timeout_seconds: float) -> dict[str, Any]:
    """The request body as a JSON object (E-SERVER-REQUEST / E-JSON-* when it is not one; 415 when
    it is not declared as JSON)."""
    declared = request.headers.get("content-type")
    if declared is not None and not is_json_media_type(declared):
        raise _unsupported(declared)
    data = await read_body(request, max_bytes, timeout_seconds)
    if data and declared is None:
        raise _unsupported(None)
    budgets = replace(HOST_DOCUMENT_BUDGETS, max_document_bytes=max_bytes, max_depth=REQUEST_MAX_DEPTH)
    value = read_json(data, budgets) if data else {}
    if not isinstance(value, dict):
        raise reject("E-SERVER-REQUEST", "the request body must be a JSON object", "")
    return value


def _pointer_token(name: str) -> str:
    """``name`` (clipped) as one JSON Pointer reference token (RFC 6901: ``~`` and ``/`` escaped)."""
    return clipped(name).replace("~", "~0").replace("/", "~1")


def _unknown(what: str, name: str, pointer: str, hint: str) -> DotBoxDError:
    """The refusal of a request member or query parameter the route does not take (the client's
    name quoted clipped; ``pointer`` already names it)."""
    return reject("E-SERVER-REQUEST", f"unknown {what} {clipped(name)!r}", pointer, hint=hint)


def allowed_keys(body: dict[str, Any], allowed: set[str]) -> None:
    """Refuse unknown members of a request object (a typo must not be silently ignored)."""
    for key in body:
        if key not in allowed:
            raise _unknown("member", key, "/" + _pointer_token(key), f"allowed: {', '.join(sorted(allowed))}")


def _allowed_hint(allowed: tuple[str, ...]) -> str:
    return f"allowed: {', '.join(allowed)}" if allowed else "this route takes no query parameters"


def check_query(request: HTTPConnection, allowed: tuple[str, ...] = ()) -> None:
    """Refuse a query parameter the route does not take, or one it takes given twice: 400
    ``E-SERVER-REQUEST`` at pointer ``/query/<name>`` with a hint naming the allowed ones. Why: an
    ignored typo (``?sesion=``) or a silently resolved repeat (``?session=A&session=B``) acts on
    something the client did not mean, and a client learns nothing of it."""
    params = request.query_params
    for name in params:
        if name not in allowed:
            raise _unknown("query parameter", name, "/query/" + _pointer_token(name), _allowed_hint(allowed))
        if len(params.getlist(name)) > 1:
            raise reject(
                "E-SERVER-REQUEST",
                f"the query parameter {name!r} is given more than once",
                "/query/" + _pointer_token(name),
                hint=f"give it once; {_allowed_hint(allowed)}",
            )
