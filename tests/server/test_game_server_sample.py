"""The sample: `dotboxd serve --config examples/game_server/server.toml` and its client script, end to end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "game_server"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_sample_server_and_client_install_events_pushdown_and_rpc() -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    dotboxd = Path(sys.executable).with_name("dotboxd")
    server = subprocess.Popen(
        [str(dotboxd), "serve", "--config", str(SAMPLE / "server.toml"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        client = subprocess.run(
            [sys.executable, str(SAMPLE / "client.py"), "--url", url],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert client.returncode == 0, client.stdout + client.stderr
        out = client.stdout
        assert "installed event kernel low-health" in out
        assert "event: monster 3 is low: health 15" in out  # the filter's threshold 20
        assert "event: monster 5 is low: health 45" in out  # after the live change to 60
        assert "pushdown KillMonsters(threshold=30): killed 2 in one request" in out
        assert "rpc game.world.spawn x5" in out
        guest = httpx.post(
            url + "/v1/extensions",
            headers={"Authorization": "Bearer demo-guest-token"},
            json={"kernel": (SAMPLE / "kill_monsters.dbx").read_text("utf-8")},
        )
        assert guest.status_code == 422 and guest.json()["diagnostics"][0]["code"] == "E-POLICY-CAP"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
