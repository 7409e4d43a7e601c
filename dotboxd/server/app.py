"""The ASGI application (Starlette): health, OpenAPI, service RPC and pushdown extensions.

Every ``/v1`` route authenticates first: ``Authorization: Bearer <token>`` maps to a tenant, and a
missing or unknown token gets ``401`` with an empty body (no hint whether the tenant exists).
Request bodies are read within the byte cap and time limit and parsed by the bounded JSON reader
(``dotboxd.server.httpio``). Kernel validation, kernel runs and RPC methods execute on worker threads
(at most ``run_threads`` at once) so the event loop keeps serving other clients while a kernel runs.
Each refusal is a JSON list of DotBoxD diagnostics; each authenticated action is audited.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.core.visible import clipped
from dotboxd.host.result import ExecutionResult
from dotboxd.server.event_routes import EventRoutes
from dotboxd.server.httpio import allowed_keys, check_query, diagnostics_response, read_json_body
from dotboxd.server.openapi import openapi_document
from dotboxd.server.rpc import call_method, decode_args
from dotboxd.server.state import ServerState, Tenant

Handler = Callable[[Request, Tenant], Awaitable[Response]]
BACKENDS = ("reference", "optimized", "auto")


class ServerApp:
    """Builds the Starlette app around a ``ServerState``; ``app`` is the ASGI callable."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.limiter = anyio.CapacityLimiter(state.config.limits.run_threads)
        routes: list[BaseRoute] = [
            Route("/health", self._open(self.health), methods=["GET"]),
            Route("/openapi.json", self._open(self.openapi), methods=["GET"]),
            Route("/v1/rpc", self._authed(self.rpc_list), methods=["GET"]),
            Route("/v1/rpc/{method}", self._authed(self.rpc_call), methods=["POST"]),
            Route("/v1/extensions", self._authed(self.extension_list), methods=["GET"]),
            Route("/v1/extensions", self._authed(self.extension_install), methods=["POST"]),
            Route("/v1/extensions/{id}/invoke", self._authed(self.extension_invoke), methods=["POST"]),
            Route("/v1/extensions/{id}", self._authed(self.extension_uninstall), methods=["DELETE"]),
        ]
        self.events: EventRoutes | None = None
        if state.hub is not None:
            self.events = EventRoutes(self, state.hub)
            routes.extend(self.events.routes(self._authed))
        self.routes = routes
        self.app = Starlette(
            routes=routes,
            exception_handlers={HTTPException: self._http_error, Exception: self._internal_error},
        )

    # --- plumbing -------------------------------------------------------------------------------

    def tenant_of(self, header: str) -> Tenant | None:
        """The tenant of an ``Authorization: Bearer TOKEN`` header (None when missing or unknown)."""
        scheme, _, token = header.partition(" ")
        token = token.strip()
        # an empty token never authenticates, even if a config lists the hash of the empty string
        return self.state.tenant_for_token(token) if scheme.lower() == "bearer" and token else None

    def _authed(
        self, handler: Handler, query: tuple[str, ...] = ()
    ) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` behind the token check (401 first), then the query check: a route takes only
        the query parameters in ``query``, each once (``httpio.check_query``)."""

        async def endpoint(request: Request) -> Response:
            tenant = self.tenant_of(request.headers.get("authorization", ""))
            if tenant is None:
                self.state.audit.record("auth-failed", "", request.url.path, "401")
                return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
            try:
                check_query(request, query)
                return await handler(request, tenant)
            except DotBoxDError as error:
                self.state.audit.record("refused", tenant.name, request.url.path, error.code)
                return diagnostics_response(error)

        return _described(endpoint, handler, query)

    def _open(
        self, handler: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """An open route (no token) that takes no query parameters (``httpio.check_query``)."""

        async def endpoint(request: Request) -> Response:
            try:
                check_query(request)
            except DotBoxDError as error:
                return diagnostics_response(error)
            return await handler(request)

        return _described(endpoint, handler, ())

    async def read_body(self, request: Request, allowed: set[str]) -> dict[str, Any]:
        limits = self.state.config.limits
        body = await read_json_body(request, limits.max_body_bytes, limits.body_timeout_seconds)
        allowed_keys(body, allowed)
        return body

    async def off_loop(self, fn: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(fn, limiter=self.limiter)

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        """A route or method the router does not know. Under ``/v1`` a caller without a valid token
        gets the bare 401 of every ``/v1`` route first (nothing about which paths or methods exist);
        a 405 names the methods the path takes in ``Allow`` (RFC 9110 requires it) and the hint."""
        path = request.url.path
        if (path == "/v1" or path.startswith("/v1/")) and (
            self.tenant_of(request.headers.get("authorization", "")) is None
        ):
            self.state.audit.record("auth-failed", "", path, "401")
            return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
        status = exc.status_code if isinstance(exc, HTTPException) else 400
        # the method and path are the client's: quoted clipped and escaped, never as sent
        method, shown = clipped(request.method, 16), clipped(path)
        if status == 405:
            allowed = self._methods_of(path)
            error = reject(
                "E-SERVER-NOT-FOUND",
                f"{method} {shown}: the route does not take {method}",
                hint=f"allowed: {', '.join(allowed)}",
                status=405,
            )
            response = diagnostics_response(error, status)
            response.headers["Allow"] = ", ".join(allowed)
            return response
        code = "E-SERVER-NOT-FOUND" if status == 404 else "E-SERVER-REQUEST"
        hint = "the routes are listed at GET /openapi.json" if status == 404 else ""
        error = reject(code, f"{method} {shown}: HTTP {status}", hint=hint, status=status)
        return diagnostics_response(error, status)

    def _methods_of(self, path: str) -> list[str]:
        """Every method some route of ``path`` takes (a path may have one route per method)."""
        methods: set[str] = set()
        for route in self.routes:
            if isinstance(route, Route) and route.methods and route.path_regex.match(path):
                methods |= route.methods
        return sorted(methods)

    async def _internal_error(self, request: Request, exc: Exception) -> Response:
        error = reject("R-HOST-INTERNAL", f"the server failed handling the request ({type(exc).__name__})")
        return diagnostics_response(error, 500)

    # --- open routes ----------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        """Liveness and readiness: 200 once the server has loaded its config and plugins."""
        return JSONResponse({"status": "ok"})

    async def openapi(self, request: Request) -> Response:
        """The machine-readable description of every route."""
        return JSONResponse(openapi_document(self.routes))

    # --- service RPC ----------------------------------------------------------------------------

    async def rpc_list(self, request: Request, tenant: Tenant) -> Response:
        """The RPC methods and their typed signatures."""
        return JSONResponse({"methods": self.state.rpc.describe()})

    async def rpc_call(self, request: Request, tenant: Tenant) -> Response:
        """Call a trusted host method with typed arguments; answers ``{"value": ...}``."""
        name = request.path_params["method"]
        method = self.state.rpc.get(name)
        body = await self.read_body(request, {"args"})
        values = decode_args(method, body.get("args", []))
        tenant.take_run()  # RPC calls share the tenant's rate with kernel invocations
        try:
            value = await self.off_loop(partial(call_method, method, values))
        except DotBoxDError as error:
            self.state.audit.record("rpc", tenant.name, name, error.code)
            raise
        self.state.audit.record("rpc", tenant.name, name)
        return JSONResponse({"value": value})

    # --- pushdown extensions --------------------------------------------------------------------

    async def extension_list(self, request: Request, tenant: Tenant) -> Response:
        """The tenant's installed extensions."""
        with tenant.lock:
            found = [e.describe() for e in tenant.extensions.values()]
        return JSONResponse({"extensions": found, "quota": tenant.config.max_installed_kernels})

    async def extension_install(self, request: Request, tenant: Tenant) -> Response:
        """Validate a kernel against the tenant's policy and keep it; answers its id and hashes."""
        body = await self.read_body(request, {"kernel", "module"})
        if ("kernel" in body) == ("module" in body):
            raise reject(
                "E-SERVER-REQUEST",
                "give exactly one of kernel (text or wire JSON as a string) and module (wire JSON object)",
            )
        if "kernel" in body:
            source = body["kernel"]
            if not isinstance(source, str):
                raise reject("E-SERVER-REQUEST", "kernel must be a string", "/kernel")
        else:
            if not isinstance(body["module"], dict):
                raise reject("E-SERVER-REQUEST", "module must be a JSON object", "/module")
            source = json.dumps(body["module"])
        policy = tenant.config.policy
        try:
            # validation can cost seconds of a run thread (a module at the import budgets), and a
            # refused install keeps nothing, so installs spend the run rate's tokens too
            tenant.take_run()
            tenant.check_room()  # before paying for validation; add_extension checks again under the lock
            plan = await self.off_loop(partial(self.state.host.prepare, source, policy))
            extension = tenant.add_extension(plan)
        except DotBoxDError as error:
            self.state.audit.record("install", tenant.name, "", error.code)
            return diagnostics_response(error, 429 if error.code == "E-SERVER-QUOTA" else 422)
        self.state.audit.record("install", tenant.name, extension.id, planHash=plan.plan_hash)
        warnings = [w.to_json() for w in plan.warnings]
        return JSONResponse({**extension.describe(), "warnings": warnings}, status_code=201)

    async def extension_invoke(self, request: Request, tenant: Tenant) -> Response:
        """Run an entrypoint of an installed extension; answers the result with its ResourceUsage."""
        extension = tenant.extension(request.path_params["id"])
        body = await self.read_body(request, {"entrypoint", "args", "backend"})
        entrypoint = body.get("entrypoint", "main")
        args = body.get("args", [])
        backend = body.get("backend", "reference")
        if not isinstance(entrypoint, str):
            raise reject("E-SERVER-REQUEST", "entrypoint must be a string", "/entrypoint")
        if backend not in BACKENDS:
            raise reject("E-SERVER-REQUEST", f"backend must be one of {', '.join(BACKENDS)}", "/backend")
        tenant.take_run()
        run = partial(
            self.state.host.execute, extension.plan, entrypoint, args, backend=backend, encoding="json"
        )
        result = await self.off_loop(run)
        outcome = "ok" if result.ok else (result.error.code if result.error else "error")
        self.state.audit.record(
            "invoke", tenant.name, extension.id, outcome, entrypoint=entrypoint, fuel=result.fuel_used
        )
        return JSONResponse(_result_json(result))

    async def extension_uninstall(self, request: Request, tenant: Tenant) -> Response:
        """Remove an installed extension (its plan is dropped; later invokes get 404)."""
        extension = tenant.remove_extension(request.path_params["id"])
        self.state.host.release(extension.plan)  # no dispatch record keeps the dropped plan alive
        self.state.audit.record("uninstall", tenant.name, extension.id)
        return JSONResponse({"removed": extension.id})


Endpoint = Callable[[Request], Awaitable[Response]]


def _described(endpoint: Endpoint, handler: Callable[..., Any], query: tuple[str, ...]) -> Endpoint:
    """``endpoint`` named and documented as ``handler``, its query parameters kept as
    ``query_parameters`` (the OpenAPI document lists them)."""
    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    endpoint.query_parameters = query  # type: ignore[attr-defined]
    return endpoint


def _result_json(result: ExecutionResult) -> dict[str, Any]:
    """A run's JSON answer: ``ExecutionResult.to_json`` plus the ``hint`` of a refused input's
    diagnostic, so a client learns what to send instead (the pointer is already there), as an
    in-process host does from ``ErrorInfo.diagnostic``."""
    body = result.to_json()
    diagnostic = result.error.diagnostic if result.error is not None else None
    if diagnostic is not None and diagnostic.hint:
        body["hint"] = diagnostic.hint
    return body


def build_app(state: ServerState) -> Starlette:
    """The ASGI app serving ``state``."""
    return ServerApp(state).app
