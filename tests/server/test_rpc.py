"""Service RPC: typed, audited, and not a binding (a method reachable over RPC is not reachable from a kernel)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.server import ServerState, parse_config
from dotboxd.server.rpc import RpcTable
from tests.server.helpers import ALICE, BOB, HEALTH, auth, config_text, running_server

CALLS_SPAWN = """
module "sneaky" version "1.0.0";

entrypoint fn main(n I32) -> I32 {
    ids = game.world.spawn(n, 100);
    return list.count(ids);
}
"""


def test_rpc_method_is_called_with_typed_arguments_and_audited() -> None:
    with running_server() as (server, state):
        response = httpx.post(server.url + "/v1/rpc/game.world.spawn", headers=auth(), json={"args": [3, 40]})
        assert response.status_code == 200 and response.json() == {"value": [0, 1, 2]}
        assert HEALTH == {0: 40, 1: 40, 2: 40}
        total = httpx.post(
            server.url + "/v1/rpc/game.world.totalHealth", headers=auth(), json={"args": [[0, 2]]}
        )
        assert total.json() == {"value": 80}
        assert state.audit.recent()[-1]["target"] == "game.world.totalHealth"
        listing = httpx.get(server.url + "/v1/rpc", headers=auth()).json()["methods"]
        assert {m["name"] for m in listing} >= {"game.world.spawn", "game.world.totalHealth"}


@pytest.mark.parametrize(
    ("args", "pointer"),
    [
        ([1], "/args"),
        (["1", 2], "/args/0"),
        ([1, 2**31], "/args/1"),
        ([1.5, 2], "/args/0"),
        ({"a": 1}, "/args"),
    ],
)
def test_rpc_arguments_are_schema_checked_before_the_method_runs(args: object, pointer: str) -> None:
    with running_server() as (server, _):
        response = httpx.post(server.url + "/v1/rpc/game.world.spawn", headers=auth(), json={"args": args})
        assert response.status_code == 400
        diagnostic = response.json()["diagnostics"][0]
        assert diagnostic["code"] == "E-SERVER-RPC-ARGS" and diagnostic["pointer"] == pointer
        assert HEALTH == {}  # the method never ran


def test_unknown_method_is_404_and_a_raising_method_leaks_no_detail() -> None:
    with running_server() as (server, _):
        missing = httpx.post(server.url + "/v1/rpc/no.such", headers=auth(), json={"args": []})
        assert missing.status_code == 404 and missing.json()["diagnostics"][0]["code"] == "E-SERVER-NOT-FOUND"
        boom = httpx.post(server.url + "/v1/rpc/test.explode", headers=auth(), json={"args": [1]})
        assert boom.status_code == 500
        assert boom.json()["diagnostics"][0]["code"] == "E-SERVER-RPC-FAILED"
        assert "secret" not in boom.text


def test_rpc_method_is_not_reachable_from_a_kernel_unless_exposed_as_binding() -> None:
    """game.world.spawn is an RPC method: installing a kernel that calls it is refused (E-CALL-UNKNOWN),
    for every tenant, while the same method is callable over RPC."""
    with running_server() as (server, state):
        assert "game.world.spawn" in state.rpc.names()
        assert "game.world.spawn" not in state.host.catalog
        for token in (ALICE, BOB):
            response = httpx.post(
                server.url + "/v1/extensions", headers=auth(token), json={"kernel": CALLS_SPAWN}
            )
            assert response.status_code == 422
            assert response.json()["diagnostics"][0]["code"] == "E-CALL-UNKNOWN"
        assert (
            httpx.post(
                server.url + "/v1/rpc/game.world.spawn", headers=auth(), json={"args": [1, 1]}
            ).status_code
            == 200
        )
        assert HEALTH == {0: 1}  # only the RPC spawned


def test_rpc_methods_need_sandbox_type_hints() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    def bare_int(x: int) -> int:
        return x

    for handler in (untyped, bare_int):
        with pytest.raises(DotBoxDError) as caught:
            RpcTable([("m", handler)])
        assert caught.value.code == "E-SERVER-CONFIG"


def test_a_trusted_plugin_contributes_rpc_methods(tmp_path: Path) -> None:
    plugin = tmp_path / "spawner.py"
    plugin.write_text(
        "from dotboxd.host import Int32\n"
        "class _P:\n"
        "    name = 'spawner'\n    version = '1'\n"
        "    def setup(self, registry):\n"
        "        registry.add_method('plugin.double', self.double)\n"
        "    def teardown(self):\n        pass\n"
        "    def double(self, x: Int32) -> Int32:\n        return 2 * x\n"
        "PLUGIN = _P()\n",
        "utf-8",
    )
    text = config_text().replace("[limits]", f"[server]\nplugins = [{str(plugin)!r}]\n\n[limits]")
    config = parse_config(text, tmp_path, {"T_ALICE": ALICE, "T_BOB": BOB})
    state = ServerState(config)
    assert "plugin.double" in state.rpc.names()
    from dotboxd.server.rpc import call_method, decode_args

    method = state.rpc.get("plugin.double")
    assert call_method(method, decode_args(method, [21])) == 42


def test_rpc_calls_share_the_tenants_rate_limit() -> None:
    with running_server(runs_per_second=1.0) as (server, _), httpx.Client(base_url=server.url) as client:
        codes = [
            client.post("/v1/rpc/game.world.getHealth", headers=auth(), json={"args": [0]}).status_code
            for _ in range(5)
        ]
        assert codes[0] == 200 and 429 in codes
        # another tenant has its own bucket
        assert (
            client.post("/v1/rpc/game.world.getHealth", headers=auth(BOB), json={"args": [0]}).status_code
            == 200
        )
