"""The sample client: run it against ``dotboxd serve --config examples/game_server/server.toml``.

    python examples/game_server/client.py --url http://127.0.0.1:8765

It opens an event session and installs the low-health event kernel, spawns and damages monsters
through service RPC (the filter runs server-side for every hit and only low-health hits reach us),
raises the filter's threshold live, runs the KillMonsters pushdown once, and prints what happened.
Exit 0 when every step did what it should, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from world import KILL_MONSTERS, load_envelope  # noqa: E402

from dotboxd.client import DotBoxDClient, EventStream  # noqa: E402
from dotboxd.core.diagnostics import DotBoxDError  # noqa: E402

SAMPLE_TOKEN = "demo-player-token"


def _expect_messages(events: EventStream, count: int) -> list[str]:
    return [events.receive(timeout=10)["text"] for _ in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8765")
    parser.add_argument("--token", default=SAMPLE_TOKEN)
    args = parser.parse_args(argv)
    with DotBoxDClient(args.url, args.token) as client, client.subscribe() as events:
        print(f"connected to {args.url}: event session {events.session}")
        receipt = client.install_plugin(events.session, load_envelope())
        print(
            f"installed event kernel {receipt['pluginId']} (plan {receipt['planHash'][:12]}), settings {receipt['settings']}"
        )

        healths = [100, 40, 25, 90, 60]
        ids = [client.rpc("game.world.spawn", [h]) for h in healths]
        print(f"rpc game.world.spawn x{len(ids)}: monsters {ids}")

        # each hit publishes monster.damaged; the filter passes only health < threshold (20)
        after = [client.rpc("game.world.damage", [m, 10]) for m in ids]
        low = sum(1 for h in after if h < 20)
        print(f"rpc game.world.damage x{len(ids)}: healths now {after}")
        for text in _expect_messages(events, low):
            print(f"  event: {text}")

        client.update_settings(events.session, receipt["pluginId"], {"threshold": 60})
        after = [client.rpc("game.world.damage", [m, 5]) for m in ids]
        low = sum(1 for h in after if h < 60)
        print(f"threshold raised to 60 (live, no re-validation); damage x{len(ids)}: healths now {after}")
        for text in _expect_messages(events, low):
            print(f"  event: {text}")

        extension = client.install(KILL_MONSTERS.read_text(encoding="utf-8"))
        result = client.invoke(extension.id, [30])
        if not result.ok:
            print(f"pushdown failed: {result.code} {result.message}")
            return 1
        print(
            f"pushdown KillMonsters(threshold=30): killed {result.value} in one request "
            f"({result.usage['hostCalls']} host calls, {result.fuel_used} fuel server-side)"
        )
        left = [client.rpc("game.world.health", [m]) for m in ids]
        print(f"rpc game.world.health: {left}")
        client.uninstall(extension.id)
        try:
            client.rpc("game.world.spawn", [0])
        except DotBoxDError as error:
            print(f"refused as expected: {error.code}")
    print("done: event kernel unloaded on disconnect")
    return 0


if __name__ == "__main__":
    sys.exit(main())
