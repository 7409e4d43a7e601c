"""spec/schema/event-envelope.schema.json describes what ``read_envelope`` accepts: the sample
envelope (text and wire module) validates, and the shape errors the reader refuses are refused by
the schema too, so a client can check its upload before sending it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from world import GameWorld, load_envelope, player_policy

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.events import read_envelope
from dotboxd.grammar.wire import to_wire

SCHEMAS = Path(__file__).resolve().parents[2] / "spec" / "schema"


def _validator() -> Draft202012Validator:
    resources = []
    for name in ("event-envelope", "kernel-module"):
        document = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))
        resources.append((document["$id"], Resource.from_contents(document)))
    schema = json.loads((SCHEMAS / "event-envelope.schema.json").read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=Registry().with_resources(resources))


def test_the_sample_envelope_validates_in_text_and_wire_form() -> None:
    validator = _validator()
    envelope = load_envelope()
    validator.validate(envelope)
    wire = copy.deepcopy(envelope)
    wire["module"] = to_wire(GameWorld().host.prepare(envelope["module"], player_policy()).module)
    validator.validate(wire)
    assert read_envelope(wire).module_is_text is False


def _mutations() -> list[tuple[str, Any]]:
    def change(path: list[Any], value: Any) -> dict[str, Any]:
        envelope: dict[str, Any] = load_envelope()
        target: Any = envelope
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return envelope

    return [
        ("unknown top-level key", change(["extra"], 1)),
        ("unknown manifest key", change(["manifest", "mode"], "Sync")),
        ("missing pluginId", change(["manifest", "pluginId"], KeyError)),
        ("pluginId with a slash", change(["manifest", "pluginId"], "../x")),
        ("no subscriptions", change(["manifest", "subscriptions"], [])),
        (
            "subscription without kernel",
            change(["manifest", "subscriptions"], [{"event": "monster.damaged"}]),
        ),
        ("unknown setting key", change(["manifest", "liveSettings", 0, "step"], 1)),
        ("setting type", change(["manifest", "liveSettings", 0, "type"], "Int")),
        ("setting named like a field", change(["manifest", "liveSettings", 0, "name"], "e_x")),
        ("module a number", change(["module"], 7)),
        ("entrypoints missing handle", change(["entrypoints", "handle"], KeyError)),
    ]


@pytest.mark.parametrize(("why", "envelope"), _mutations(), ids=[m[0] for m in _mutations()])
def test_schema_and_reader_refuse_the_same_shapes(why: str, envelope: dict[str, Any]) -> None:
    assert not _validator().is_valid(envelope), why
    with pytest.raises(DotBoxDError) as caught:
        read_envelope(envelope)
    assert caught.value.code.startswith(("E-JSON-", "E-EVENT-SETTING")), why
