"""Pushdown extensions: install against the tenant's policy, invoke with usage, quotas, tenant isolation."""

from __future__ import annotations

import time

import httpx

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.grammar.text import parse_text
from dotboxd.grammar.wire import to_wire
from tests.server.helpers import BOB, HEALTH, SUM_HEALTH, auth, running_server


def _install(url: str, token: str | None = None, kernel: str = SUM_HEALTH) -> httpx.Response:
    return httpx.post(
        url + "/v1/extensions", headers=auth() if token is None else auth(token), json={"kernel": kernel}
    )


def test_install_invoke_uninstall_returns_value_and_resource_usage() -> None:
    with running_server() as (server, state):
        HEALTH.update({i: 10 + i for i in range(20)})
        installed = _install(server.url)
        assert installed.status_code == 201
        body = installed.json()
        plan = state.host.prepare(SUM_HEALTH, state.tenants["alice"].config.policy)
        assert body["planHash"] == plan.plan_hash and body["entrypoints"] == ["main"]
        run = httpx.post(
            f"{server.url}/v1/extensions/{body['id']}/invoke", headers=auth(), json={"args": [20]}
        ).json()
        assert run["outcome"] == "ok" and run["value"] == sum(10 + i for i in range(20))
        assert run["usage"]["hostCalls"] == 20 and run["usage"]["fuelUsed"] > 0
        assert run["bindingCalls"] == {"game.world.getHealth": 20}
        deleted = httpx.delete(f"{server.url}/v1/extensions/{body['id']}", headers=auth())
        assert deleted.status_code == 200
        again = httpx.post(
            f"{server.url}/v1/extensions/{body['id']}/invoke", headers=auth(), json={"args": [1]}
        )
        assert again.status_code == 404
        assert state.tenants["alice"].extensions == {}


def test_install_refusal_carries_the_same_diagnostics_as_in_process_prepare() -> None:
    with running_server() as (server, state):
        response = _install(server.url, BOB)  # bob's policy grants nothing
        assert response.status_code == 422
        try:
            state.host.prepare(SUM_HEALTH, state.tenants["bob"].config.policy)
        except DotBoxDError as error:
            expected = [d.to_json() for d in error.diagnostics]
        assert response.json()["diagnostics"] == expected
        syntax = _install(server.url, kernel="module oops").json()["diagnostics"][0]
        assert syntax["code"] == "E-TEXT-SYNTAX" and syntax["line"] == 1


def test_install_accepts_the_wire_json_module_object() -> None:
    with running_server() as (server, _):
        wire = to_wire(parse_text(SUM_HEALTH))
        response = httpx.post(server.url + "/v1/extensions", headers=auth(), json={"module": wire})
        assert response.status_code == 201


def test_failed_run_is_an_outcome_with_usage_not_an_http_error() -> None:
    with running_server() as (server, _):
        eid = _install(server.url).json()["id"]
        run = httpx.post(
            f"{server.url}/v1/extensions/{eid}/invoke", headers=auth(), json={"args": ["x"]}
        ).json()
        assert run["outcome"] == "error" and run["code"] == "R-VALUE-TYPE"
        starved = httpx.post(
            f"{server.url}/v1/extensions/{eid}/invoke", headers=auth(), json={"args": [10_000]}
        ).json()
        assert starved["outcome"] == "error" and starved["code"] == "R-QUOTA-HOST-CALLS"
        assert starved["usage"]["fuelUsed"] > 0


def test_tenant_cannot_see_invoke_or_uninstall_another_tenants_extension() -> None:
    with running_server() as (server, state):
        eid = _install(server.url).json()["id"]
        for method, path in [("POST", f"/v1/extensions/{eid}/invoke"), ("DELETE", f"/v1/extensions/{eid}")]:
            response = httpx.request(method, server.url + path, headers=auth(BOB), json={"args": [1]})
            assert response.status_code == 404
        assert httpx.get(server.url + "/v1/extensions", headers=auth(BOB)).json()["extensions"] == []
        assert eid in state.tenants["alice"].extensions


def test_installed_kernel_quota_is_enforced_and_a_refused_install_keeps_nothing() -> None:
    with running_server(max_installed_kernels=2) as (server, state):
        ids = [_install(server.url).json()["id"] for _ in range(2)]
        refused = _install(server.url)
        assert refused.status_code == 429 and refused.json()["diagnostics"][0]["code"] == "E-SERVER-QUOTA"
        assert sorted(state.tenants["alice"].extensions) == sorted(ids)
        httpx.delete(f"{server.url}/v1/extensions/{ids[0]}", headers=auth())
        assert _install(server.url).status_code == 201


def test_run_rate_limit_refuses_a_flood_with_429() -> None:
    with running_server(runs_per_second=2.0) as (server, _), httpx.Client(base_url=server.url) as client:
        eid = _install(server.url).json()["id"]
        started = time.monotonic()
        codes = [
            client.post(f"/v1/extensions/{eid}/invoke", headers=auth(), json={"args": [1]}).status_code
            for _ in range(20)
        ]
        elapsed = time.monotonic() - started
        # a bucket of 2 tokens refilled at 2/s admits at most 2 + 2 * elapsed runs
        assert 429 in codes and codes.count(200) <= 2 + 2 * elapsed + 1
        refused = client.post(f"/v1/extensions/{eid}/invoke", headers=auth(), json={"args": [1]})
        if refused.status_code == 429:
            assert refused.json()["diagnostics"][0]["code"] == "E-SERVER-QUOTA"
