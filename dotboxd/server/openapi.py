"""The server's HTTP API as an OpenAPI 3.1 document, built from the app's own route table.

Paths and methods come from the routes themselves (so a route cannot be added without appearing
here; a test checks it), summaries from each endpoint's docstring, and request bodies from the
small table below. Every ``/v1`` operation requires the bearer token.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.routing import BaseRoute, Route, WebSocketRoute

_DIAGNOSTICS = {
    "description": "refused: a list of DotBoxD diagnostics",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Diagnostics"}}},
}

_BUSY = {
    "description": "E-SERVER-BUSY: the server is at max_connections (diagnostics, Retry-After: 1)",
    "content": _DIAGNOSTICS["content"],
}

_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/v1/rpc/{method}"): {
        "type": "object",
        "properties": {"args": {"type": "array", "description": "typed JSON encoding, one per parameter"}},
        "additionalProperties": False,
    },
    ("post", "/v1/extensions"): {
        "type": "object",
        "properties": {
            "kernel": {"type": "string", "description": "the text form, or wire JSON as a string"},
            "module": {"type": "object", "description": "the wire JSON module"},
        },
        "additionalProperties": False,
    },
    ("post", "/v1/plugins"): {
        "type": "object",
        "properties": {"session": {"type": "string"}, "envelope": {"type": "object"}},
        "required": ["session", "envelope"],
        "additionalProperties": False,
    },
    ("patch", "/v1/plugins/{id}/settings"): {
        "type": "object",
        "properties": {"session": {"type": "string"}, "values": {"type": "object"}},
        "required": ["session", "values"],
        "additionalProperties": False,
    },
    ("post", "/v1/extensions/{id}/invoke"): {
        "type": "object",
        "properties": {
            "entrypoint": {"type": "string", "default": "main"},
            "args": {"type": "array"},
            "backend": {"enum": ["reference", "optimized", "auto"], "default": "reference"},
        },
        "additionalProperties": False,
    },
}


def _operation(path: str, method: str, summary: str, query: Sequence[str] = ()) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "responses": {"200": {"description": "success"}, "4XX": _DIAGNOSTICS, "503": _BUSY},
    }
    if path.startswith("/v1"):
        op["security"] = [{"bearer": []}]
        op["responses"]["401"] = {"description": "missing or unknown token (empty body)"}
    params = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    parameters = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in params]
    # the only query parameters a route takes (any other, or one given twice, is refused with 400)
    parameters += [{"name": q, "in": "query", "required": True, "schema": {"type": "string"}} for q in query]
    if parameters:
        op["parameters"] = parameters
    body = _BODIES.get((method, path))
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    return op


def openapi_document(routes: Sequence[BaseRoute]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        if isinstance(route, WebSocketRoute):
            paths.setdefault(route.path, {})["get"] = _websocket_operation(route.path)
            continue
        if not isinstance(route, Route):
            continue
        summary = (route.endpoint.__doc__ or route.name).strip().splitlines()[0]
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            query = getattr(route.endpoint, "query_parameters", ())
            paths.setdefault(route.path, {})[method.lower()] = _operation(
                route.path, method.lower(), summary, query
            )
    return {
        "openapi": "3.1.0",
        "info": {"title": "dotboxd server", "version": "1"},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Diagnostics": {
                    "type": "object",
                    "properties": {"diagnostics": {"type": "array", "items": {"type": "object"}}},
                }
            },
        },
    }


def _websocket_operation(path: str) -> dict[str, Any]:
    return {
        "summary": "WebSocket: open an event session; the server sends {type: session, session} and then "
        "{type: message, plugin, event, eventId, text} for each message the session's event kernels send",
        "security": [{"bearer": []}],
        "responses": {
            "101": {"description": "switching protocols"},
            "401": {"description": "bad token"},
            "503": _BUSY,
        },
    }
