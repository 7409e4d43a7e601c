"""Event-kernel routes: a WebSocket per client session, envelope install, live settings.

    WS     /v1/events                        -> {"type": "session", "session": ID}, then messages
    POST   /v1/plugins                       {"session": ID, "envelope": {...}}  -> install receipt
    PATCH  /v1/plugins/{id}/settings         {"session": ID, "values": {...}}    -> the new settings
    DELETE /v1/plugins/{id}?session=ID                                           -> {"removed": id}

Envelopes are installed into the host's ``EventHub`` for the owner ``tenant/session`` against the
tenant's policy (the hub re-validates the module and checks the contract, purity of the filter,
parameters and settings; refusals are its diagnostics). The WebSocket's life is the kernels' life:
when it closes, the session's kernels are unloaded. See ``dotboxd.server.sessions`` for the
bounded per-client queue and the disconnect of a client that does not read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from dotboxd.core.diagnostics import DotBoxDError, reject
from dotboxd.events.hub import EventHub
from dotboxd.server.httpio import check_query, diagnostics_response
from dotboxd.server.sessions import OVERFLOW_CLOSE_CODE, Session, Sessions
from dotboxd.server.state import Tenant

if TYPE_CHECKING:
    from dotboxd.server.app import ServerApp


class EventRoutes:
    def __init__(self, app: ServerApp, hub: EventHub) -> None:
        self.app = app
        self.state = app.state
        self.hub = hub
        self.sessions = Sessions()
        previous = hub.on_disconnect

        def on_disconnect(owner: str, reason: str) -> None:
            # the hub's own outbox overflowed (its rule is "disconnect"): close that client too
            session = self.sessions.by_owner(owner)
            if session is not None:
                with session.lock:
                    session.overflowed = True
                session.loop.call_soon_threadsafe(session.wake.set)
            if previous is not None:
                previous(owner, reason)

        hub.on_disconnect = on_disconnect

    def routes(self, authed: Callable[..., Callable[[Request], Awaitable[Response]]]) -> list[BaseRoute]:
        return [
            WebSocketRoute("/v1/events", self.events_socket),
            Route("/v1/plugins", authed(self.plugin_install), methods=["POST"]),
            Route("/v1/plugins/{id}/settings", authed(self.plugin_settings), methods=["PATCH"]),
            Route("/v1/plugins/{id}", authed(self.plugin_uninstall, ("session",)), methods=["DELETE"]),
        ]

    # --- HTTP ---------------------------------------------------------------------------------

    async def _session_object(
        self, request: Request, tenant: Tenant, key: str
    ) -> tuple[Session, dict[str, Any]]:
        """A plugin request's body ``{"session": ID, key: {...}}``: the tenant's open session it
        names and the JSON object under ``key`` (E-SERVER-REQUEST at ``/key`` when it is not one)."""
        body = await self.app.read_body(request, {"session", key})
        session = self.sessions.get(tenant.name, body.get("session"))
        value = body.get(key)
        if not isinstance(value, dict):
            raise reject("E-SERVER-REQUEST", f"{key} must be a JSON object", f"/{key}")
        return session, value

    async def plugin_install(self, request: Request, tenant: Tenant) -> Response:
        """Install a plugin envelope (event kernels) for an open event session of this tenant."""
        session, envelope = await self._session_object(request, tenant, "envelope")
        tenant.take_run()  # validation costs a run thread, as an extension install does
        install = partial(self.hub.install, session.owner, envelope, tenant.config.policy)
        try:
            receipt = await self.app.off_loop(install)
        except DotBoxDError as error:
            self.state.audit.record("plugin-install", tenant.name, "", error.code)
            return diagnostics_response(error, 429 if error.code == "E-EVENT-QUOTA" else 422)
        self.state.audit.record("plugin-install", tenant.name, receipt.plugin_id, planHash=receipt.plan_hash)
        return JSONResponse(
            {
                "pluginId": receipt.plugin_id,
                "moduleId": receipt.module_id,
                "moduleHash": receipt.module_hash,
                "planHash": receipt.plan_hash,
                "policyHash": receipt.policy_hash,
                "events": list(receipt.events),
                "settings": dict(receipt.settings),
            },
            status_code=201,
        )

    async def plugin_settings(self, request: Request, tenant: Tenant) -> Response:
        """Change a plugin's live settings; they apply from the next event, without re-validation."""
        session, values = await self._session_object(request, tenant, "values")
        plugin_id = request.path_params["id"]
        update = partial(self.hub.update_settings, session.owner, plugin_id, values)
        settings = await self.app.off_loop(update)
        self.state.audit.record("plugin-settings", tenant.name, plugin_id)
        return JSONResponse({"pluginId": plugin_id, "settings": settings})

    async def plugin_uninstall(self, request: Request, tenant: Tenant) -> Response:
        """Unload one plugin of an event session (all of them are unloaded when the socket closes)."""
        session = self.sessions.get(tenant.name, request.query_params.get("session"))  # checked: once at most
        plugin_id = request.path_params["id"]
        await self.app.off_loop(partial(self.hub.uninstall, session.owner, plugin_id))
        self.state.audit.record("plugin-uninstall", tenant.name, plugin_id)
        return JSONResponse({"removed": plugin_id})

    # --- WebSocket ----------------------------------------------------------------------------

    async def events_socket(self, websocket: WebSocket) -> None:
        """Open an event session and stream its messages until either side closes."""
        tenant = self.app.tenant_of(websocket.headers.get("authorization", ""))
        if tenant is None:
            self.state.audit.record("auth-failed", "", "/v1/events", "401")
            await websocket.send_denial_response(
                Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
            )
            return
        try:
            check_query(websocket)  # after the token check, as on every /v1 route
        except DotBoxDError as error:
            await websocket.send_denial_response(diagnostics_response(error))
            return
        await websocket.accept()
        session = self.sessions.open(tenant.name, self.state.config.limits.ws_queue_size)
        self.state.audit.record("session-open", tenant.name, session.id)
        reason = "closed"
        try:
            await self.app.off_loop(partial(self.hub.attach_sink, session.owner, session.offer))
            await websocket.send_json({"type": "session", "session": session.id})
            sender = asyncio.ensure_future(self._send_loop(websocket, session))
            receiver = asyncio.ensure_future(self._receive_loop(websocket))
            _done, pending = await asyncio.wait({sender, receiver}, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if session.overflowed:
                reason = "overflow"
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        websocket.close(OVERFLOW_CLOSE_CODE, "message queue overflow"), 1.0
                    )
        finally:
            self.sessions.close(session)
            removed = await self.app.off_loop(partial(self.hub.uninstall_owner, session.owner))
            self.state.audit.record("session-close", tenant.name, session.id, reason, unloaded=removed)

    async def _send_loop(self, websocket: WebSocket, session: Session) -> None:
        timeout = self.state.config.limits.ws_send_timeout_seconds
        while True:
            await session.wake.wait()
            session.wake.clear()
            if session.overflowed:
                return
            items, refused = session.take()
            for item in items:
                try:
                    await asyncio.wait_for(websocket.send_json(item), timeout)
                except TimeoutError:
                    session.overflowed = True  # the client is not reading: disconnect it
                    return
                session.sent += 1
            if refused:  # messages wait in the hub's outbox: pull them now that there is room
                await self.app.off_loop(partial(self.hub.attach_sink, session.owner, session.offer))

    async def _receive_loop(self, websocket: WebSocket) -> None:
        """Reads (and ignores) what the client sends, to notice when it goes away."""
        with contextlib.suppress(WebSocketDisconnect):
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
