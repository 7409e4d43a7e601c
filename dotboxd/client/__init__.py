"""The Python client of ``dotboxd serve``: sync and async, on httpx.

    with DotBoxDClient("http://127.0.0.1:8765", token) as client:
        installed = client.install(kernel_text)          # DotBoxDError if the server refuses it
        result = client.invoke(installed.id, [100])      # InvokeResult: value or error, and usage
        client.rpc("game.world.spawn", [3, 40])          # a trusted host method
        client.uninstall(installed.id)

A refusal comes back as the very ``DotBoxDError`` an in-process ``SandboxHost.prepare`` raises (same
codes, pointers, line:column, hints), rebuilt from the server's JSON diagnostics; a failed *run* is
an ``InvokeResult`` with ``ok`` False, as ``SandboxHost.execute`` returns a failed result. A missing
or wrong token is ``ServerAuthError`` (the server says nothing more than 401).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from dotboxd.core.diagnostics import Diagnostic, DotBoxDError, DotBoxDException, Span, reject

DEFAULT_TIMEOUT = 30.0


class ServerAuthError(DotBoxDException):
    """The server answered 401: the token is missing or maps to no tenant."""


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
    ``usage`` is the run's ResourceUsage as JSON (``fuelUsed``, ``hostCalls``, ...)."""

    ok: bool
    value: Any
    code: str
    error: str
    message: str
    usage: Mapping[str, int]
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def fuel_used(self) -> int:
        return int(self.usage.get("fuelUsed", 0))


def _diagnostic(data: Mapping[str, Any]) -> Diagnostic:
    line, column = data.get("line"), data.get("column")
    span = Span(line, column) if isinstance(line, int) and isinstance(column, int) else None
    evidence = data.get("evidence")
    return Diagnostic(
        str(data.get("code", "R-HOST-INTERNAL")),
        str(data.get("message", "")),
        str(data.get("pointer", "")),
        span,
        dict(evidence) if isinstance(evidence, dict) else {},
        str(data.get("hint", "")),
    )


def _checked(response: httpx.Response) -> Any:
    """The JSON body of a 2xx response; else the DotBoxDError (or ServerAuthError) it carries."""
    if response.status_code == 401:
        raise ServerAuthError("the server refused the token (401)")
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.is_success and body is not None:
        return body
    if isinstance(body, dict) and isinstance(body.get("diagnostics"), list) and body["diagnostics"]:
        raise DotBoxDError([_diagnostic(d) for d in body["diagnostics"] if isinstance(d, dict)])
    raise reject("R-HOST-INTERNAL", f"the server answered HTTP {response.status_code} without diagnostics")


def _installed(body: Mapping[str, Any]) -> Installed:
    return Installed(
        body["id"],
        body["moduleHash"],
        body["planHash"],
        body["policyHash"],
        tuple(body.get("entrypoints", ())),
        tuple(_diagnostic(w) for w in body.get("warnings", ())),
    )


def _result(body: Mapping[str, Any]) -> InvokeResult:
    ok = body.get("outcome") == "ok"
    return InvokeResult(
        ok,
        body.get("value"),
        "" if ok else str(body.get("code", "")),
        "" if ok else str(body.get("error", "")),
        "" if ok else str(body.get("message", "")),
        dict(body.get("usage", {})),
        body,
    )


def _install_body(kernel: str | Mapping[str, Any]) -> dict[str, Any]:
    return {"kernel": kernel} if isinstance(kernel, str) else {"module": dict(kernel)}


def _invoke_body(args: Sequence[Any], entrypoint: str, backend: str) -> dict[str, Any]:
    return {"entrypoint": entrypoint, "args": list(args), "backend": backend}


class DotBoxDClient:
    """A synchronous client (one pooled httpx connection set; close it, or use ``with``)."""

    def __init__(self, url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    def health(self) -> bool:
        return self._http.get("/health").status_code == 200

    def rpc(self, method: str, args: Sequence[Any] = ()) -> Any:
        """Call a service RPC method; returns its value (typed JSON encoding)."""
        return _checked(self._http.post(f"/v1/rpc/{method}", json={"args": list(args)}))["value"]

    def install(self, kernel: str | Mapping[str, Any]) -> Installed:
        """Install a pushdown kernel (text form or wire JSON text, or a wire JSON object)."""
        return _installed(_checked(self._http.post("/v1/extensions", json=_install_body(kernel))))

    def invoke(
        self,
        extension_id: str,
        args: Sequence[Any] = (),
        *,
        entrypoint: str = "main",
        backend: str = "reference",
    ) -> InvokeResult:
        body = _invoke_body(args, entrypoint, backend)
        return _result(_checked(self._http.post(f"/v1/extensions/{extension_id}/invoke", json=body)))

    def uninstall(self, extension_id: str) -> None:
        _checked(self._http.delete(f"/v1/extensions/{extension_id}"))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> DotBoxDClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncDotBoxDClient:
    """The asyncio twin of :class:`DotBoxDClient` (same methods, awaited)."""

    def __init__(self, url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self._http = httpx.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    async def health(self) -> bool:
        return (await self._http.get("/health")).status_code == 200

    async def rpc(self, method: str, args: Sequence[Any] = ()) -> Any:
        return _checked(await self._http.post(f"/v1/rpc/{method}", json={"args": list(args)}))["value"]

    async def install(self, kernel: str | Mapping[str, Any]) -> Installed:
        return _installed(_checked(await self._http.post("/v1/extensions", json=_install_body(kernel))))

    async def invoke(
        self,
        extension_id: str,
        args: Sequence[Any] = (),
        *,
        entrypoint: str = "main",
        backend: str = "reference",
    ) -> InvokeResult:
        body = _invoke_body(args, entrypoint, backend)
        return _result(_checked(await self._http.post(f"/v1/extensions/{extension_id}/invoke", json=body)))

    async def uninstall(self, extension_id: str) -> None:
        _checked(await self._http.delete(f"/v1/extensions/{extension_id}"))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncDotBoxDClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["AsyncDotBoxDClient", "DotBoxDClient", "Installed", "InvokeResult", "ServerAuthError"]
