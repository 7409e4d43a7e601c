"""The ``game.world.kill`` binding as a conformance-case entry, shared by tests of every layer.

The example kernel (``examples/game-world.dbk``) calls it; the validator, host, CLI and conformance
pipeline tests each need its manifest entry, and they must all mean the same binding.
"""

from __future__ import annotations

from typing import Any


def kill_entry(**changes: Any) -> dict[str, Any]:
    """The conformance-case entry of ``game.world.kill`` (a fixture that returns true), with
    ``changes`` applied on top."""
    entry: dict[str, Any] = {
        "id": "game.world.kill",
        "parameters": ["I32"],
        "returnType": "Bool",
        "effects": ["Cpu", "HostStateWrite"],
        "capability": "game.world.monster.write.kill",
        "cost": {"baseFuel": 10, "maxCallsPerRun": 100},
        "isAsync": False,
        "audit": "PerCall",
        "safety": "SideEffectingExternal",
        "behavior": {"kind": "return", "value": True},
    }
    entry.update(changes)
    return entry
