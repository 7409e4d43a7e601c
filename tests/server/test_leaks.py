"""Clients that install in a loop or go away mid-run leave nothing behind (measured, not assumed)."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
import tracemalloc

import httpx

from dotboxd.client import DotBoxDClient
from tests.server.events_helpers import envelope, event_server
from tests.server.helpers import ALICE, SPIN, SUM_HEALTH, auth, running_server


def _grown_kib(step: object, rounds: int) -> tuple[float, float]:
    """Memory after a warm-up of ``rounds`` and after ``rounds`` more (KiB, traced by tracemalloc)."""
    tracemalloc.start()
    try:
        for _ in range(rounds):
            step()  # type: ignore[operator]
        gc.collect()
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(rounds):
            step()  # type: ignore[operator]
        gc.collect()
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return first / 1024, second / 1024


def test_installing_and_uninstalling_in_a_loop_leaks_no_plans_threads_or_memory() -> None:
    with (
        running_server(max_installed_kernels=4) as (server, state),
        DotBoxDClient(server.url, ALICE) as client,
    ):
        threads_before = threading.active_count()

        def step() -> None:
            installed = client.install(SUM_HEALTH)
            assert client.invoke(installed.id, [3]).ok
            client.uninstall(installed.id)

        first, second = _grown_kib(step, 15)
        print(f"install/invoke/uninstall x15 more: {first:.0f} KiB -> {second:.0f} KiB traced")
        assert state.tenants["alice"].extensions == {}
        assert state.host.dispatch_records == 0  # every dropped plan was released
        assert second - first < 1024, (first, second)
        assert threading.active_count() <= threads_before + state.config.limits.run_threads


def test_sessions_opened_and_closed_in_a_loop_leave_no_owner_kernel_or_session() -> None:
    with event_server() as (server, state, hub), DotBoxDClient(server.url, ALICE) as client:

        def step() -> None:
            with client.subscribe() as events:
                client.install_plugin(events.session, envelope())
                client.rpc("test.tick", [0, 2])
                assert events.receive(timeout=60)["text"] == "tick 0"

        first, second = _grown_kib(step, 12)
        print(f"session open/install/close x12 more: {first:.0f} KiB -> {second:.0f} KiB traced")

        def closed_sessions() -> int:
            return sum(1 for r in state.audit.recent() if r["action"] == "session-close")

        # a session's close is audited after its owner is unloaded, on the server's loop: wait for both
        deadline = time.monotonic() + 10
        while (hub.footprint()["owners"] or closed_sessions() < 24) and time.monotonic() < deadline:
            time.sleep(0.02)
        footprint = hub.footprint()
        assert footprint["owners"] == 0 and footprint["plugins"] == 0 and footprint["subscriptions"] == 0
        assert footprint["host_dispatch"] == 0
        assert closed_sessions() == 24
        assert second - first < 1024, (first, second)


def test_a_client_that_disconnects_mid_run_leaves_the_server_serving_and_nothing_installed_twice() -> None:
    with running_server() as (server, state):
        installed = httpx.post(server.url + "/v1/extensions", headers=auth(), json={"kernel": SPIN}).json()
        assert "id" in installed, installed
        url = f"{server.url}/v1/extensions/{installed['id']}/invoke"
        for _ in range(3):
            with contextlib.suppress(httpx.TimeoutException):  # the client gives up before the run ends
                httpx.post(url, headers=auth(), json={"args": [90_000]}, timeout=0.05)
        # the runs finish on their threads; the server keeps serving and keeps one extension
        ok = httpx.post(url, headers=auth(), json={"args": [10]}, timeout=30).json()
        assert ok["outcome"] == "ok" and ok["value"] == 45
        assert list(state.tenants["alice"].extensions) == [installed["id"]]
        assert httpx.get(server.url + "/health").status_code == 200
