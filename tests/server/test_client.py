"""dotboxd.client: the same DotBoxDError diagnostics as in-process, sync and async."""

from __future__ import annotations

import asyncio

import pytest

from dotboxd.client import AsyncDotBoxDClient, DotBoxDClient, ServerAuthError
from dotboxd.core.diagnostics import DotBoxDError
from tests.server.helpers import ALICE, BOB, HEALTH, SUM_HEALTH, running_server


def test_sync_client_installs_invokes_calls_rpc_and_uninstalls() -> None:
    with running_server() as (server, state), DotBoxDClient(server.url, ALICE) as client:
        assert client.health()
        assert client.rpc("game.world.spawn", [4, 25]) == [0, 1, 2, 3]
        installed = client.install(SUM_HEALTH)
        assert installed.entrypoints == ("main",) and len(installed.plan_hash) == 64
        result = client.invoke(installed.id, [4])
        assert result.ok and result.value == 100 and result.usage["hostCalls"] == 4 and result.fuel_used > 0
        failed = client.invoke(installed.id, ["no"])
        assert not failed.ok and failed.code == "R-VALUE-TYPE"
        client.uninstall(installed.id)
        assert state.tenants["alice"].extensions == {}
        with pytest.raises(DotBoxDError) as gone:
            client.invoke(installed.id, [1])
        assert gone.value.code == "E-SERVER-NOT-FOUND"


def test_client_raises_the_same_diagnostics_as_in_process_prepare() -> None:
    with running_server() as (server, state), DotBoxDClient(server.url, BOB) as client:
        with pytest.raises(DotBoxDError) as remote:
            client.install(SUM_HEALTH)
        with pytest.raises(DotBoxDError) as local:
            state.host.prepare(SUM_HEALTH, state.tenants["bob"].config.policy)
        assert remote.value.diagnostics == local.value.diagnostics
        assert str(remote.value) == str(local.value)


def test_client_with_a_bad_token_gets_server_auth_error() -> None:
    with running_server() as (server, _), DotBoxDClient(server.url, "wrong") as client:
        with pytest.raises(ServerAuthError):
            client.rpc("game.world.spawn", [1, 1])
        assert HEALTH == {}


def test_async_client_does_the_same_concurrently() -> None:
    async def scenario(url: str) -> list[int]:
        async with AsyncDotBoxDClient(url, ALICE) as client:
            await client.rpc("game.world.spawn", [10, 3])
            installed = await client.install(SUM_HEALTH)
            results = await asyncio.gather(*(client.invoke(installed.id, [n]) for n in range(1, 6)))
            with pytest.raises(DotBoxDError) as refused:
                await client.rpc("game.world.spawn", ["x", 1])
            assert refused.value.code == "E-SERVER-RPC-ARGS"
            await client.uninstall(installed.id)
            return [r.value for r in results]

    with running_server() as (server, _):
        assert asyncio.run(scenario(server.url)) == [3, 6, 9, 12, 15]
