"""``net.http.get`` against real HTTP servers this module starts on 127.0.0.1 (ephemeral ports, shut
down at the end): success, oversized and slow bodies, redirects, names that resolve inward, IP
literals, schemes, proxies from the environment. 127.0.0.1 is reachable only under
``allowPrivateNetwork``, which is exactly what most of these tests check.

Every run goes through ``SandboxHost`` on both backends (they must agree on value, error, usage
and audit) with the blocking facade (``HttpFacade.get``, what ``execute`` uses) and the coroutine
facade (``HttpFacade.get_async``, an async binding the runtime awaits under the async grant). A
made-up name (``svc.test``) is mapped to 127.0.0.1 by an injected resolver, never /etc/hosts.
"""

from __future__ import annotations

import ipaddress
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from dotboxd.core.bindings import standard_bindings
from dotboxd.core.values import SandboxUri
from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.runtime.errors import BindingError
from dotboxd.runtime.facades.http import HttpFacade
from dotboxd.runtime.facades.http_rules import address_problem, parse_target
from dotboxd.runtime.meter import CancelToken

BACKENDS = ("reference", "optimized")
FLAVOURS = ("sync", "async")
NAME = "svc.test"

HTTP = """module "http" version "1.0.0";
entrypoint fn main(u SandboxUri) -> String {
    return net.http.get(u);
}
"""


@dataclass
class Hits:
    """What one server saw: request paths and Host headers."""

    paths: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> int:
        with self.lock:
            return len(self.paths)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits: Hits
    redirect_to: str = ""

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, headers: Sequence[tuple[str, str]] = ()) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        with self.hits.lock:
            self.hits.paths.append(self.path)
            self.hits.hosts.append(self.headers.get("Host", ""))
        route = self.path.split("?", 1)[0]
        if route == "/ok":
            self._send(200, "héllo from the server".encode())
        elif route == "/big":
            self._send(200, b"x" * 5000)
        elif route == "/big-chunked":  # no Content-Length: the limit must hold while streaming
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(10):
                self.wfile.write(b"3e8\r\n" + b"y" * 1000 + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif route == "/slow":  # a byte every 50 ms, 200 bytes: 10 s if nobody stops it
            self.send_response(200)
            self.send_header("Content-Length", "200")
            self.end_headers()
            try:
                for _ in range(200):
                    self.wfile.write(b"s")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
        elif route == "/redirect":
            self._send(302, b"", [("Location", self.redirect_to)])
        elif route == "/gzip":
            self._send(200, b"\x1f\x8b not really", [("Content-Encoding", "gzip")])
        elif route == "/huge-head":  # 200 KiB of headers: past the client's 100 KiB head limit
            self._send(200, b"ok", [(f"X-Pad-{i}", "p" * 1000) for i in range(200)])
        elif route == "/missing":
            self._send(404, b"no")
        else:
            self._send(500, b"boom")


@dataclass
class Server:
    port: int
    hits: Hits
    stop: Callable[[], None]


def _start(redirect_to: str = "", tls: ssl.SSLContext | None = None) -> Server:
    hits = Hits()
    handler = type("Handler", (_Handler,), {"hits": hits, "redirect_to": redirect_to})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)

    return Server(httpd.server_address[1], hits, stop)


@pytest.fixture(scope="module")
def inner() -> Iterator[Server]:
    """The private target a redirect points at: it must never be reached."""
    server = _start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(inner: Server) -> Iterator[Server]:
    started = _start(redirect_to=f"http://127.0.0.1:{inner.port}/ok")
    yield started
    started.stop()


class FakeResolver:
    """Maps names to fixed answers and counts lookups (one answer per lookup, in turn)."""

    def __init__(self, *answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls += 1
        if host != NAME:
            raise OSError("no such name")
        return self.answers[min(self.calls, len(self.answers)) - 1]


@dataclass
class Tls:
    """A self-signed certificate for ``svc.test`` only (no IP address in it), and a client context
    that trusts exactly that certificate."""

    server: Server
    client: ssl.SSLContext


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tls]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    folder: Path = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={NAME}",
         "-addext", f"subjectAltName=DNS:{NAME}"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    started = _start(tls=server_side)
    yield Tls(started, client)
    started.stop()


def _host(facade: HttpFacade, flavour: str) -> SandboxHost:
    invoke = facade.get if flavour == "sync" else facade.get_async
    return SandboxHost(
        [
            replace(d, invoke=invoke, takes_context=True) if d.id == "net.http.get" else d
            for d in standard_bindings()
        ]
    )


def _policy(hosts: Sequence[str], **options: Any) -> Policy:
    options.setdefault("allowed_schemes", ("http",))
    options.setdefault("max_response_bytes", 1000)
    # a generous run budget: the call's own limit is the grant's timeoutMs
    return (
        Policy.builder().grant_http_get(list(hosts), **options).with_limits(max_wall_time_ms=20_000).build()
    )


def _runs(
    uri: str,
    policy: Policy,
    resolver: Callable[[str, int], Sequence[str]] | None = None,
    tls: ssl.SSLContext | None = None,
    *,
    bytes_by_timing: bool = False,
) -> list[ExecutionResult]:
    """One run per (flavour, backend); all must agree on everything but timing. With
    ``bytes_by_timing`` (a body the server trickles until the timeout stops it) how many bytes
    arrived before the deadline depends on scheduling, so the byte counts are left to the caller."""
    results = []
    for flavour in FLAVOURS:
        host = _host(HttpFacade(resolver, tls), flavour)
        plan = host.prepare(HTTP, policy)
        for backend in BACKENDS:
            results.append(host.execute(plan, "main", [SandboxUri(uri)], backend=backend))
    first = results[0]
    for other in results[1:]:
        assert (other.ok, other.value, other.error) == (first.ok, first.value, first.error)
        if not bytes_by_timing:
            assert other.usage.network_bytes_read == first.usage.network_bytes_read
        assert other.usage.network_bytes_written == first.usage.network_bytes_written
        assert other.usage.fuel_used == first.usage.fuel_used
        assert _http_events(other, bytes_by_timing) == _http_events(first, bytes_by_timing)
    return results


def _http_events(result: ExecutionResult, without_bytes: bool = False) -> list[tuple[Any, ...]]:
    return [
        (
            e.success,
            e.resource_id,
            e.error_code,
            e.message,
            None if without_bytes else e.bytes,
            dict(e.fields),
        )
        for e in result.audit_events
        if e.binding_id == "net.http.get"
    ]


def _code(result: ExecutionResult) -> tuple[str, str]:
    assert result.error is not None
    return result.error.category, result.error.code


# --- success -----------------------------------------------------------------------------------


def test_http_get_fetches_from_the_pinned_address_with_the_original_host_header(server: Server) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True)
    before = server.hits.count()
    results = _runs(f"http://{NAME}:{server.port}/ok?token=s3cret#frag", policy, resolver)
    body = "héllo from the server"
    for result in results:
        assert result.ok and result.value == body
        assert result.usage.network_bytes_read == len(body.encode())
        assert result.usage.network_bytes_written > 0
    assert server.hits.count() - before == len(results)
    assert set(server.hits.hosts[before:]) == {f"{NAME}:{server.port}"}
    assert set(server.hits.paths[before:]) == {"/ok?token=s3cret"}  # the fragment is never sent
    events = _http_events(results[0])
    assert events == [
        (True, f"http:http://{NAME}:{server.port}", None, None, len(body.encode()), {"status": 200})
    ]
    assert "s3cret" not in repr(results[0].audit_events)


def test_http_get_charges_fuel_per_byte_of_the_body(server: Server) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True)
    ok = _runs(f"http://{NAME}:{server.port}/ok", policy, resolver)[0]
    big = _runs(
        f"http://{NAME}:{server.port}/big",
        _policy([f"{NAME}:{server.port}"], allow_private_network=True, max_response_bytes=6000),
        resolver,
    )[0]
    assert big.ok and ok.ok
    # the same kernel, 5000 - 22 more body bytes: at least that much more fuel
    assert big.usage.fuel_used - ok.usage.fuel_used >= 5000 - len("héllo from the server".encode())


def test_http_get_resolves_once_so_a_rebinding_answer_is_never_used(server: Server) -> None:
    """The DNS-rebinding defence: the first answer is pinned; a second lookup never happens."""
    resolver = FakeResolver(["127.0.0.1"], ["10.255.255.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True)
    host = _host(HttpFacade(resolver), "sync")
    result = host.execute(host.prepare(HTTP, policy), "main", [SandboxUri(f"http://{NAME}:{server.port}/ok")])
    assert result.ok and resolver.calls == 1


def test_http_get_with_the_standard_facade_and_an_allowed_loopback_literal(server: Server) -> None:
    host = SandboxHost(standard_bindings())
    policy = _policy([f"127.0.0.1:{server.port}"], allow_ip_literals=True, allow_private_network=True)
    plan = host.prepare(HTTP, policy)
    for backend in BACKENDS:
        result = host.execute(
            plan, "main", [SandboxUri(f"http://127.0.0.1:{server.port}/ok")], backend=backend
        )
        assert result.ok and result.value == "héllo from the server"


def test_https_get_to_a_pinned_address_verifies_the_certificate_of_the_original_name(tls_server: Tls) -> None:
    """The connection goes to 127.0.0.1, but SNI and certificate verification use ``svc.test`` (the
    certificate names no address, so verifying against the address would fail)."""
    port = tls_server.server.port
    policy = _policy([f"{NAME}:{port}"], allowed_schemes=("https",), allow_private_network=True)
    for result in _runs(f"https://{NAME}:{port}/ok", policy, FakeResolver(["127.0.0.1"]), tls_server.client):
        assert result.ok and result.value == "héllo from the server"
    assert set(tls_server.server.hits.hosts) == {f"{NAME}:{port}"}


def test_https_get_refuses_a_certificate_for_another_name(tls_server: Tls) -> None:
    """Verification stays on: a name the certificate does not cover fails, without details."""
    port = tls_server.server.port
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"other.test:{port}"], allowed_schemes=("https",), allow_private_network=True)

    def other(host: str, port: int) -> Sequence[str]:
        return resolver(NAME, port) if host == "other.test" else []

    for result in _runs(f"https://other.test:{port}/ok", policy, other, tls_server.client):
        assert _code(result) == ("BindingFailure", "R-BINDING-FAILED")
        assert result.error is not None and "certificate" not in result.error.safe_message.lower()


# --- SSRF ---------------------------------------------------------------------------------------


def test_http_get_refuses_a_name_resolving_to_loopback_without_allow_private_network(server: Server) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    before = server.hits.count()
    for result in _runs(f"http://{NAME}:{server.port}/ok", _policy([f"{NAME}:{server.port}"]), resolver):
        assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")
        assert result.error is not None and "127.0.0.1" not in result.error.safe_message
        assert result.usage.network_bytes_written == 0
    assert server.hits.count() == before


def test_http_get_refuses_a_name_with_mixed_public_and_private_answers() -> None:
    resolver = FakeResolver(["93.184.216.34", "10.0.0.7"])
    for result in _runs(f"http://{NAME}/ok", _policy([NAME]), resolver):
        assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")
        assert result.usage.network_bytes_written == 0  # refused before any connection


def test_http_get_never_follows_a_redirect_to_a_private_address(server: Server, inner: Server) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy(
        [f"{NAME}:{server.port}", f"127.0.0.1:{inner.port}"],
        allow_private_network=True,
        allow_ip_literals=True,
    )
    results = _runs(f"http://{NAME}:{server.port}/redirect", policy, resolver)
    for result in results:
        assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")
    assert inner.hits.count() == 0
    assert _http_events(results[0])[0][5] == {"status": 302}


@pytest.mark.parametrize("literal", ["127.0.0.1", "2130706433", "127.1", "0x7f.0.0.1"])
def test_http_get_refuses_ip_literals_without_allow_ip_literals(server: Server, literal: str) -> None:
    before = server.hits.count()
    policy = _policy([f"{literal}:{server.port}", f"127.0.0.1:{server.port}"], allow_private_network=True)
    for result in _runs(f"http://{literal}:{server.port}/ok", policy):
        assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")
    assert server.hits.count() == before


def test_http_get_refuses_a_loopback_literal_without_allow_private_network(server: Server) -> None:
    policy = _policy([f"127.0.0.1:{server.port}"], allow_ip_literals=True)
    for result in _runs(f"http://127.0.0.1:{server.port}/ok", policy):
        assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED")


def test_http_get_refuses_a_disallowed_scheme_host_or_port(server: Server) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    https_only = _policy([f"{NAME}:{server.port}"], allowed_schemes=("https",), allow_private_network=True)
    port_bound = _policy([f"{NAME}:{server.port}"], allow_private_network=True)
    before = server.hits.count()
    for uri, policy in (
        (f"http://{NAME}:{server.port}/ok", https_only),
        (f"http://{NAME}:{server.port + 1}/ok", port_bound),
        (f"http://{NAME}/ok", port_bound),
        (f"http://other.test:{server.port}/ok", port_bound),
        (f"ftp://{NAME}:{server.port}/ok", port_bound),
    ):
        for result in _runs(uri, policy, resolver):
            assert _code(result) == ("PermissionDenied", "R-BINDING-DENIED"), uri
    assert server.hits.count() == before and resolver.calls == 0


def test_http_get_ignores_proxies_from_the_environment(
    server: Server, inner: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = f"http://127.0.0.1:{inner.port}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True)
    for result in _runs(f"http://{NAME}:{server.port}/ok", policy, resolver):
        assert result.ok
    assert inner.hits.count() == 0


@pytest.mark.parametrize(
    ("address", "special"),
    [
        ("10.1.2.3", True),
        ("172.16.0.1", True),
        ("192.168.1.1", True),
        ("127.0.0.1", True),
        ("169.254.169.254", True),
        ("100.64.0.1", True),
        ("fc00::1", True),
        ("fe80::1", True),
        ("::1", True),
        ("::ffff:8.8.8.8", True),
        ("2002:7f00:1::", True),
        ("240.0.0.1", True),
        ("93.184.216.34", False),
        ("2606:4700::1111", False),
    ],
)
def test_http_address_rule_refuses_every_special_range(address: str, special: bool) -> None:
    ip = ipaddress.ip_address(address)
    assert (address_problem(ip, allow_private=False) is not None) is special
    assert address_problem(ip, allow_private=True) is None


@pytest.mark.parametrize("address", ["0.0.0.0", "224.0.0.1", "::", "ff02::1"])
def test_http_address_rule_never_allows_unspecified_or_multicast(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address), allow_private=True) is not None


@pytest.mark.parametrize(
    "uri",
    [
        "http://user:pw@svc.test/",
        "http://svc.test:99999/",
        "http://svc.test:8o/",
        "http://[::1]/",
        "http://svc.test/a b",
        "http://svc.test/é",
        "http://sv%63.test/",
    ],
)
def test_http_uri_parser_refuses_credentials_and_ambiguous_authorities(uri: str) -> None:
    with pytest.raises(BindingError) as refused:
        parse_target(uri)
    assert refused.value.category == "InvalidInput"


# --- size, time and transport failures ----------------------------------------------------------


@pytest.mark.parametrize("route", ["/big", "/big-chunked"])
def test_http_get_stops_an_oversized_body_at_max_response_bytes(server: Server, route: str) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True, max_response_bytes=1500)
    for result in _runs(f"http://{NAME}:{server.port}{route}", policy, resolver):
        assert _code(result) == ("QuotaExceeded", "R-BINDING-QUOTA")
        assert result.usage.network_bytes_read <= 1500


def test_http_get_stops_a_slow_body_at_the_timeout(server: Server) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True, timeout_ms=300)
    started = time.monotonic()
    results = _runs(f"http://{NAME}:{server.port}/slow", policy, resolver, bytes_by_timing=True)
    elapsed = time.monotonic() - started
    for result in results:
        assert _code(result) == ("Timeout", "R-BINDING-TIMEOUT")
        assert 0 < result.usage.network_bytes_read < 200
    assert elapsed < 4 * 1.0  # four runs of 0.3 s (plus at most one 50 ms socket wait each)


def test_http_get_stops_a_slow_body_when_the_host_cancels_the_run(server: Server) -> None:
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True, timeout_ms=10_000)
    for flavour in FLAVOURS:
        host = _host(HttpFacade(FakeResolver(["127.0.0.1"])), flavour)
        plan = host.prepare(HTTP, policy)
        for backend in BACKENDS:
            token = CancelToken()
            timer = threading.Timer(0.3, token.cancel)
            timer.start()
            started = time.monotonic()
            result = host.execute(
                plan, "main", [SandboxUri(f"http://{NAME}:{server.port}/slow")], backend=backend, cancel=token
            )
            timer.join()
            assert _code(result) == ("Cancelled", "R-CANCELLED")
            assert time.monotonic() - started < 3.0  # the body alone would take 10 s


def test_http_get_refuses_a_request_over_max_request_bytes(server: Server) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True, max_request_bytes=200)
    before = server.hits.count()
    for result in _runs(f"http://{NAME}:{server.port}/ok?q={'a' * 300}", policy, resolver):
        assert _code(result) == ("QuotaExceeded", "R-BINDING-QUOTA")
        assert result.usage.network_bytes_written == 0
    assert server.hits.count() == before


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        ("/gzip", ("BindingFailure", "R-BINDING-FAILED")),
        ("/missing", ("NotFound", "R-BINDING-NOT-FOUND")),
        ("/boom", ("BindingFailure", "R-BINDING-FAILED")),
        ("/huge-head", ("BindingFailure", "R-BINDING-FAILED")),
    ],
)
def test_http_get_refuses_compressed_unsuccessful_and_oversized_head_answers(
    server: Server, route: str, expected: tuple[str, str]
) -> None:
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{server.port}"], allow_private_network=True)
    for result in _runs(f"http://{NAME}:{server.port}{route}", policy, resolver):
        assert _code(result) == expected
        assert result.usage.network_bytes_read == 0


def test_http_get_connection_errors_never_reveal_addresses_or_exception_text() -> None:
    closed = _start()
    port = closed.port
    closed.stop()  # nothing listens there any more: connection refused
    resolver = FakeResolver(["127.0.0.1"])
    policy = _policy([f"{NAME}:{port}"], allow_private_network=True)
    for result in _runs(f"http://{NAME}:{port}/ok?token=s3cret", policy, resolver):
        assert _code(result) == ("BindingFailure", "R-BINDING-FAILED")
        assert result.error is not None
        assert result.error.safe_message == "the HTTP request failed (connection, TLS or protocol error)"
        shown = repr(result.error) + repr(result.audit_events)
        assert "127.0.0.1" not in shown and "s3cret" not in shown and "Errno" not in shown


def test_http_get_of_an_unknown_name_is_not_found() -> None:
    policy = _policy(["nowhere.test"], allow_private_network=True)
    for result in _runs("http://nowhere.test/ok", policy, FakeResolver(["127.0.0.1"])):
        assert _code(result) == ("NotFound", "R-BINDING-NOT-FOUND")


# --- the coroutine facade on the caller's own event loop -----------------------------------------


def test_http_get_async_runs_on_the_callers_event_loop(server: Server) -> None:
    """What an async host does with an async binding: await ``get_async`` on its own loop (no helper
    thread); the result, charges and audit event are those of the blocking facade."""
    import asyncio

    from dotboxd.runtime.context import BindingContext, RunContext

    facade = HttpFacade(FakeResolver(["127.0.0.1"]))
    host = _host(facade, "async")
    plan = host.prepare(HTTP, _policy([f"{NAME}:{server.port}"], allow_private_network=True))
    run = RunContext(plan)
    binding = plan.binding("net.http.get")
    assert binding is not None

    async def call() -> tuple[str, int]:
        loop = asyncio.get_running_loop()
        ctx = BindingContext(run, binding)
        body = await facade.get_async(ctx, SandboxUri(f"http://{NAME}:{server.port}/ok?k=v"))
        assert asyncio.get_running_loop() is loop
        return body, run.meter.network_bytes_read

    body, read = asyncio.run(call())
    assert body == "héllo from the server" and read == len(body.encode())
    events = [e for e in run.audit.events if e.binding_id == "net.http.get"]
    assert [(e.success, e.resource_id, dict(e.fields)) for e in events] == [
        (True, f"http:http://{NAME}:{server.port}", {"status": 200})
    ]
