"""The Python client of ``dotboxd serve``: sync and async, on httpx.

    with DotBoxDClient("http://127.0.0.1:8765", token) as client:
        installed = client.install(kernel_text)          # DotBoxDError if the server refuses it
        result = client.invoke(installed.id, [100])      # InvokeResult: value or error, and usage
        client.rpc("game.world.spawn", [3, 40])          # a trusted host method
        client.uninstall(installed.id)
        with client.subscribe() as events:                # event kernels live as long as this
            client.install_plugin(events.session, envelope)
            client.update_settings(events.session, "low-health", {"threshold": 30})
            print(events.receive(timeout=5)["text"])

A refusal comes back as the very ``DotBoxDError`` an in-process ``SandboxHost.prepare`` raises (same
codes, pointers, line:column, hints), rebuilt from the server's JSON diagnostics; a failed *run* is
an ``InvokeResult`` with ``ok`` False, as ``SandboxHost.execute`` returns a failed result (a refused
input keeps its located diagnostic: ``pointer`` into the args and ``hint``). A missing or wrong token
is ``ServerAuthError`` (the server says nothing more than 401). An answer the client cannot use (not
JSON, the wrong shape, larger than ``max_response_bytes``, or not complete within ``timeout``) is an
``R-HOST-INTERNAL`` DotBoxDError (``dotboxd.client.replies``); a server that cannot be reached, that
resets the connection or sends no answer within ``timeout`` is an ``E-SERVER-UNREACHABLE``
DotBoxDError with the httpx or socket error as its ``__cause__`` (``dotboxd.client.transport``); a
server at its connection limit answers ``E-SERVER-BUSY``. An event stream the server closed or
dropped is ``E-SERVER-UNREACHABLE`` too, from ``receive`` and from iteration (``for message in
events``), which ends quietly only at a clean close (code 1000 or 1001, or the client's own).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import quote

import httpx
import websockets.asyncio.client
import websockets.exceptions
import websockets.sync.client

from dotboxd.client.encode import request_json
from dotboxd.client.replies import (
    DEFAULT_MAX_RESPONSE_BYTES,
    BodyReader,
    ServerAuthError,
    checked,
    diagnostic,
    malformed,
    member,
    usage_of,
)
from dotboxd.client.transport import STREAM_CLOSED, TRANSPORT_ERRORS, stream_closed, unreachable
from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, DotBoxDException, reject

DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Installed:
    """An installed extension: its id (for invoke/uninstall) and the hashes of its plan."""

    id: str
    module_hash: str
    plan_hash: str
    policy_hash: str
    entrypoints: tuple[str, ...]
    warnings: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True)
class InvokeResult:
    """One run: ``value`` (typed JSON encoding) when ``ok``, else ``code``/``error``/``message``;
    ``usage`` is the run's ResourceUsage as JSON (``fuelUsed``, ``hostCalls``, ...); ``pointer`` and
    ``hint`` say where and how a refused input is wrong (``/0/hp``: field hp of the first arg)."""

    ok: bool
    value: Any
    code: str
    error: str
    message: str
    usage: Mapping[str, int]
    raw: Mapping[str, Any] = field(repr=False)
    pointer: str = ""
    hint: str = ""

    @property
    def fuel_used(self) -> int:
        return int(self.usage.get("fuelUsed", 0))


def _installed(body: Mapping[str, Any]) -> Installed:
    entrypoints = member(body, "entrypoints", list) if "entrypoints" in body else []
    warnings = member(body, "warnings", list) if "warnings" in body else []
    if not all(isinstance(e, str) for e in entrypoints) or not all(isinstance(w, dict) for w in warnings):
        raise malformed("'entrypoints' or 'warnings' holds an item of the wrong type")
    return Installed(
        member(body, "id", str),
        member(body, "moduleHash", str),
        member(body, "planHash", str),
        member(body, "policyHash", str),
        tuple(entrypoints),
        tuple(diagnostic(w) for w in warnings),
    )


def _result(body: Mapping[str, Any]) -> InvokeResult:
    outcome = member(body, "outcome", str)
    ok = outcome == "ok"
    if not ok and "code" not in body:
        raise malformed("a failed run without its error 'code'")

    def text(key: str) -> str:
        return "" if ok or key not in body else str(member(body, key, str))

    return InvokeResult(
        ok,
        body.get("value"),
        text("code"),
        text("error"),
        text("message"),
        usage_of(body),
        body,
        text("pointer"),
        text("hint"),
    )


def _value(body: Mapping[str, Any]) -> Any:
    """An RPC answer's ``value`` (its typed JSON encoding)."""
    if "value" not in body:
        raise malformed("an RPC answer without its 'value'")
    return body["value"]


def _segment(name: str) -> str:
    """``name`` as one path segment: every reserved character percent-encoded, and "." and ".."
    spelled out, so an id from anywhere (``"x/../e2"``, ``"../plugins/p?session=s"``) names that id
    and never another route, method or query (httpx resolves dot segments and keeps ``?``)."""
    segment = quote(name, safe="")
    return segment.replace(".", "%2E") if segment in (".", "..") else segment


def _install_body(kernel: str | Mapping[str, Any]) -> dict[str, Any]:
    return {"kernel": kernel} if isinstance(kernel, str) else {"module": dict(kernel)}


def _invoke_body(args: Sequence[Any], entrypoint: str, backend: str) -> dict[str, Any]:
    """The invoke request. Only a list or tuple is the inputs, one per parameter (as for
    ``SandboxHost.execute``): anything else is sent as it is, so the server answers the same
    R-ENTRY-ARITY result an in-process run gives, instead of the client turning a string into its
    characters or a dict into its keys. What JSON cannot carry (a set, a generator) is sent as its
    type name, which the server refuses the same way."""
    if isinstance(args, (list, tuple)):
        sent: Any = list(args)
    elif args is None or isinstance(args, (str, int, float, dict)):
        sent = args
    else:
        sent = type(args).__name__
    return {"entrypoint": entrypoint, "args": sent, "backend": backend}


def _ws_url(url: str) -> str:
    return "ws" + url.removeprefix("http") + "/v1/events"


def _event(raw: str | bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise reject("R-HOST-INTERNAL", "the server sent an event frame that is not JSON") from None
    if not isinstance(value, dict):
        raise reject("R-HOST-INTERNAL", "the server sent an event frame that is not a JSON object")
    return value


def _no_session(error: BaseException, timeout: float) -> BaseException:
    """What ``subscribe`` raises when the first frame is not a session: a silent server is a
    DotBoxDError too, not the WebSocket library's TimeoutError, and so is a server that closes the
    stream first (``E-SERVER-UNREACHABLE``, its exception as the ``__cause__``)."""
    if isinstance(error, TimeoutError):
        return reject("R-HOST-INTERNAL", f"the server did not open an event session within {timeout:g} s")
    if isinstance(error, STREAM_CLOSED):
        return stream_closed(error)
    return error


def _session_cause(error: BaseException) -> BaseException | None:
    """The ``__cause__`` ``_no_session``'s refusal keeps: the library's exception of a closed
    stream (as for ``receive``), nothing for the others (their refusal says it all)."""
    return error if isinstance(error, STREAM_CLOSED) else None


def _session_of(first: dict[str, Any]) -> str:
    if first.get("type") != "session" or not isinstance(first.get("session"), str):
        raise reject("R-HOST-INTERNAL", "the server did not open an event session")
    return str(first["session"])


class _ClosedOnExit:
    """``with`` support for the blocking clients: the object is closed when the block ends."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _AsyncClosedOnExit:
    """``async with`` support for the asyncio clients: the object is closed (``aclose``) when the
    block ends."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class EventStream(_ClosedOnExit):
    """An open event session (a WebSocket): its ``session`` id names the owner of the event kernels
    installed with it; ``receive`` returns the next message (``{"type": "message", "plugin",
    "event", "eventId", "text"}``). Closing it unloads the session's kernels on the server."""

    def __init__(
        self, connection: websockets.sync.client.ClientConnection, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self._connection = connection
        try:
            self.session = _session_of(_event(connection.recv(timeout=timeout)))
        except BaseException as error:
            connection.close()  # a server that does not open a session keeps no socket of ours
            raise _no_session(error, timeout) from _session_cause(error)

    def receive(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message; TimeoutError when none comes in ``timeout`` seconds, an
        ``E-SERVER-UNREACHABLE`` DotBoxDError once the stream is closed (by the server, a broken
        connection, or ``close``), the WebSocket library's exception as its ``__cause__``."""
        try:
            return _event(self._connection.recv(timeout=timeout))
        except STREAM_CLOSED as error:
            raise stream_closed(error) from error

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Every message as it comes, until the stream is closed: a clean close (the client's own,
        or the server's close frame with code 1000 or 1001) ends the iteration; any other end (a
        reset, a frame cut off, an error code) raises what ``receive`` raises."""
        while True:
            try:
                yield _event(self._connection.recv())
            except websockets.exceptions.ConnectionClosedOK:
                return
            except STREAM_CLOSED as error:
                raise stream_closed(error) from error

    def close(self) -> None:
        self._connection.close()


class AsyncEventStream(_AsyncClosedOnExit):
    """The asyncio twin of :class:`EventStream`."""

    def __init__(self, connection: websockets.asyncio.client.ClientConnection, session: str) -> None:
        self._connection = connection
        self.session = session

    async def receive(self, timeout: float | None = None) -> dict[str, Any]:
        """As ``EventStream.receive``."""
        try:
            async with asyncio.timeout(timeout):
                return _event(await self._connection.recv())
        except STREAM_CLOSED as error:
            raise stream_closed(error) from error

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        """As ``EventStream.__iter__``."""
        while True:
            try:
                yield _event(await self._connection.recv())
            except websockets.exceptions.ConnectionClosedOK:
                return
            except STREAM_CLOSED as error:
                raise stream_closed(error) from error

    async def aclose(self) -> None:
        await self._connection.close()

    close = aclose
    """The stream's own name for ``aclose`` (the twin of ``EventStream.close``)."""


def _open_failed(error: Exception, url: str, timeout: float) -> DotBoxDException:
    if isinstance(error, websockets.exceptions.InvalidStatus):
        # a refused handshake carries the server's answer: 401, or diagnostics (503 E-SERVER-BUSY)
        try:
            checked(error.response.status_code, bytes(error.response.body))
        except DotBoxDException as refused:
            return refused
    if isinstance(error, TRANSPORT_ERRORS):
        return unreachable(url, error, timeout)
    return reject("R-HOST-INTERNAL", f"cannot open the event stream ({type(error).__name__})")


def _undecodable(error: httpx.DecodingError) -> DotBoxDError:
    return malformed(f"its body cannot be decoded ({type(error).__name__})")


class _Endpoint:
    """What both clients know of the server, stated once: its base URL, the bearer header every
    request and the event WebSocket carry, and the options their connections are opened with."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = url.rstrip("/")
        self._auth = {"Authorization": f"Bearer {token}"}
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self._open()

    def _open(self) -> None:
        """Open the client's HTTP connection pool (sync or asyncio)."""
        raise NotImplementedError

    def _http_options(self) -> dict[str, Any]:
        return {"base_url": self.url, "headers": self._auth, "timeout": self.timeout}

    def _request(self, method: str, path: str, options: dict[str, Any]) -> dict[str, Any]:
        """``build_request`` arguments: a ``json`` body is encoded by ``request_json`` (the caller's
        values reach the server, which answers them as an in-process host would)."""
        if "json" in options:
            options = dict(options)
            body = request_json(options.pop("json"))
            options.update(content=body, headers={"Content-Type": "application/json"})
        return {"method": method, "url": path, **options}

    def _reader(self) -> BodyReader:
        """A fresh reader for one answer: at most ``max_response_bytes``, all within ``timeout``."""
        return BodyReader(self.max_response_bytes, self.timeout)

    def _ws_options(self) -> dict[str, Any]:
        """The event WebSocket's ``connect`` arguments (no proxy: the server is addressed as given)."""
        return {
            "uri": _ws_url(self.url),
            "additional_headers": self._auth,
            "proxy": None,
            "open_timeout": self.timeout,
        }


class DotBoxDClient(_Endpoint, _ClosedOnExit):
    """A synchronous client (one pooled httpx connection set; close it, or use ``with``)."""

    def _open(self) -> None:
        self._http = httpx.Client(**self._http_options())

    def _call(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        """One request; its answer read within the bounds and checked (see ``replies``)."""
        reader = self._reader()
        try:
            request = self._http.build_request(**self._request(method, path, options))
            response = self._http.send(request, stream=True)
            try:
                content = reader.read(response.iter_bytes())
            finally:
                response.close()
        except TRANSPORT_ERRORS as error:
            raise unreachable(self.url, error, self.timeout) from error
        except httpx.DecodingError as error:
            raise _undecodable(error) from error
        return checked(response.status_code, content)

    def health(self) -> bool:
        """True when the server answers ``/health`` with 200 (E-SERVER-UNREACHABLE if it cannot)."""
        try:
            return self._http.get("/health").status_code == 200
        except TRANSPORT_ERRORS as error:
            raise unreachable(self.url, error, self.timeout) from error

    def rpc(self, method: str, args: Sequence[Any] = ()) -> Any:
        """Call a service RPC method; returns its value (typed JSON encoding)."""
        return _value(self._call("POST", f"/v1/rpc/{_segment(method)}", json={"args": list(args)}))

    def install(self, kernel: str | Mapping[str, Any]) -> Installed:
        """Install a pushdown kernel (text form or wire JSON text, or a wire JSON object)."""
        return _installed(self._call("POST", "/v1/extensions", json=_install_body(kernel)))

    def invoke(
        self,
        extension_id: str,
        args: Sequence[Any] = (),
        *,
        entrypoint: str = "main",
        backend: str = "reference",
    ) -> InvokeResult:
        body = _invoke_body(args, entrypoint, backend)
        return _result(self._call("POST", f"/v1/extensions/{_segment(extension_id)}/invoke", json=body))

    def uninstall(self, extension_id: str) -> None:
        self._call("DELETE", f"/v1/extensions/{_segment(extension_id)}")

    def subscribe(self) -> EventStream:
        """Open an event session (WebSocket); install plugins with its ``session`` id."""
        try:
            connection = websockets.sync.client.connect(**self._ws_options(), legacy=True)
        except (OSError, websockets.exceptions.InvalidHandshake) as error:
            raise _open_failed(error, self.url, self.timeout) from error
        return EventStream(connection, self.timeout)

    def install_plugin(self, session: str, envelope: Mapping[str, Any]) -> dict[str, Any]:
        """Install a plugin envelope (event kernels) for ``session``; returns the install receipt."""
        body = {"session": session, "envelope": dict(envelope)}
        result: dict[str, Any] = self._call("POST", "/v1/plugins", json=body)
        return result

    def update_settings(self, session: str, plugin_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Change live settings; returns all of the plugin's settings after the change."""
        body = {"session": session, "values": dict(values)}
        response = self._call("PATCH", f"/v1/plugins/{_segment(plugin_id)}/settings", json=body)
        result: dict[str, Any] = member(response, "settings", dict)
        return result

    def uninstall_plugin(self, session: str, plugin_id: str) -> None:
        self._call("DELETE", f"/v1/plugins/{_segment(plugin_id)}", params={"session": session})

    def close(self) -> None:
        self._http.close()


class AsyncDotBoxDClient(_Endpoint, _AsyncClosedOnExit):
    """The asyncio twin of :class:`DotBoxDClient` (same methods, awaited)."""

    def _open(self) -> None:
        self._http = httpx.AsyncClient(**self._http_options())

    async def _call(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        reader = self._reader()
        try:
            request = self._http.build_request(**self._request(method, path, options))
            response = await self._http.send(request, stream=True)
            try:
                content = await reader.aread(response.aiter_bytes())
            finally:
                await response.aclose()
        except TRANSPORT_ERRORS as error:
            raise unreachable(self.url, error, self.timeout) from error
        except httpx.DecodingError as error:
            raise _undecodable(error) from error
        return checked(response.status_code, content)

    async def health(self) -> bool:
        try:
            return (await self._http.get("/health")).status_code == 200
        except TRANSPORT_ERRORS as error:
            raise unreachable(self.url, error, self.timeout) from error

    async def rpc(self, method: str, args: Sequence[Any] = ()) -> Any:
        return _value(await self._call("POST", f"/v1/rpc/{_segment(method)}", json={"args": list(args)}))

    async def install(self, kernel: str | Mapping[str, Any]) -> Installed:
        return _installed(await self._call("POST", "/v1/extensions", json=_install_body(kernel)))

    async def invoke(
        self,
        extension_id: str,
        args: Sequence[Any] = (),
        *,
        entrypoint: str = "main",
        backend: str = "reference",
    ) -> InvokeResult:
        body = _invoke_body(args, entrypoint, backend)
        return _result(await self._call("POST", f"/v1/extensions/{_segment(extension_id)}/invoke", json=body))

    async def uninstall(self, extension_id: str) -> None:
        await self._call("DELETE", f"/v1/extensions/{_segment(extension_id)}")

    async def subscribe(self) -> AsyncEventStream:
        try:
            connection = await websockets.asyncio.client.connect(**self._ws_options())
        except (OSError, websockets.exceptions.InvalidHandshake) as error:
            raise _open_failed(error, self.url, self.timeout) from error
        try:
            session = _session_of(_event(await asyncio.wait_for(connection.recv(), self.timeout)))
        except BaseException as error:
            await connection.close()
            raise _no_session(error, self.timeout) from _session_cause(error)
        return AsyncEventStream(connection, session)

    async def install_plugin(self, session: str, envelope: Mapping[str, Any]) -> dict[str, Any]:
        body = {"session": session, "envelope": dict(envelope)}
        result: dict[str, Any] = await self._call("POST", "/v1/plugins", json=body)
        return result

    async def update_settings(
        self, session: str, plugin_id: str, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        body = {"session": session, "values": dict(values)}
        response = await self._call("PATCH", f"/v1/plugins/{_segment(plugin_id)}/settings", json=body)
        result: dict[str, Any] = member(response, "settings", dict)
        return result

    async def uninstall_plugin(self, session: str, plugin_id: str) -> None:
        await self._call("DELETE", f"/v1/plugins/{_segment(plugin_id)}", params={"session": session})

    async def aclose(self) -> None:
        await self._http.aclose()


__all__ = ["AsyncDotBoxDClient", "DotBoxDClient", "Installed", "InvokeResult", "ServerAuthError"]
