"""The plugin envelope: what an owner uploads to install event kernels.

    {"manifest": {"pluginId": "low-health", "contract": "game.world",
                  "liveSettings": [{"name": "threshold", "type": "I32", "defaultValue": 20, "min": 0, "max": 100}],
                  "subscriptions": [{"event": "monster.damaged", "kernel": "low-health-filter"}]},
     "entrypoints": {"shouldHandle": "shouldHandle", "handle": "handle"},
     "module": "module \\"low-health-filter\\" version \\"1.0.0\\"; ..."}

The module is the text form (a string) or the wire form (an object). Reading an envelope checks its
shape only (unknown or missing keys, wrong JSON kinds, bounds: E-JSON-*), each refusal with the JSON
pointer of the offending value; what the names mean (events, entrypoints, parameters, purity) is
checked by ``EventHub.install`` against the host's contract and the owner's policy. The envelope
carries no code the host executes other than the module, which is imported and validated like any
kernel; ``spec/schema/event-envelope.schema.json`` is the same shape as a JSON Schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dotboxd.core.diagnostics import reject
from dotboxd.core.jsonread import HOST_DOCUMENT_BUDGETS, read_json
from dotboxd.events.settings import MAX_SETTINGS, SettingSpec, parse_setting

#: The most subscriptions one envelope may hold.
MAX_SUBSCRIPTIONS = 32
#: A pluginId, setting name, event or kernel name: short, printable, no separators or traversal.
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,127}")
_SETTING_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


@dataclass(frozen=True)
class Subscription:
    """Run the envelope's kernel (``kernel``: the module's id) for each published ``event``."""

    event: str
    kernel: str


@dataclass(frozen=True)
class Envelope:
    """A shape-checked plugin envelope (not yet validated against any policy or contract)."""

    plugin_id: str
    contract: str
    settings: tuple[SettingSpec, ...]
    subscriptions: tuple[Subscription, ...]
    should_handle: str
    handle: str
    module: str
    module_is_text: bool


def _object(value: Any, pointer: str, keys: Mapping[str, bool]) -> Mapping[str, Any]:
    """``value`` as a JSON object holding only ``keys`` (name -> required)."""
    if not isinstance(value, Mapping):
        raise reject("E-JSON-TYPE", "expected an object", pointer)
    for key in value:
        if key not in keys:
            raise reject(
                "E-JSON-SCHEMA",
                f"unknown property {key!r}",
                f"{pointer}/{_escape(str(key))}",
                hint=_hint(keys),
            )
    for key, required in keys.items():
        if required and key not in value:
            raise reject("E-JSON-MISSING", f"missing property {key!r}", pointer, hint=_hint(keys))
    return value


def _hint(keys: Mapping[str, bool]) -> str:
    return "allowed properties: " + ", ".join(keys)


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


def _name(value: Any, pointer: str, pattern: re.Pattern[str] = NAME) -> str:
    if not isinstance(value, str):
        raise reject("E-JSON-TYPE", "expected a string", pointer)
    if not pattern.fullmatch(value):
        raise reject(
            "E-JSON-TYPE",
            "not a valid name",
            pointer,
            hint=f"a name matches {pattern.pattern}",
        )
    return value


def _array(value: Any, pointer: str, limit: int) -> list[Any]:
    if not isinstance(value, list):
        raise reject("E-JSON-TYPE", "expected an array", pointer)
    if len(value) > limit:
        raise reject("E-JSON-LIMIT", f"at most {limit} entries", pointer, count=len(value), limit=limit)
    return value


def read_envelope(source: Mapping[str, Any] | str | bytes) -> Envelope:
    """Shape-check an envelope given as a parsed object or as JSON text (read strictly, with the
    host-document budgets: no duplicate keys, NaN or unbounded nesting)."""
    raw: Any = source
    if isinstance(source, str | bytes):
        raw = read_json(source, HOST_DOCUMENT_BUDGETS)
    top = _object(raw, "", {"manifest": True, "entrypoints": True, "module": True})
    manifest = _object(
        top["manifest"],
        "/manifest",
        {
            "pluginId": True,
            "contract": True,
            "liveSettings": False,
            "subscriptions": True,
            "description": False,
        },
    )
    plugin_id = _name(manifest["pluginId"], "/manifest/pluginId")
    contract = _name(manifest["contract"], "/manifest/contract")
    if "description" in manifest and not isinstance(manifest["description"], str):
        raise reject("E-JSON-TYPE", "expected a string", "/manifest/description")
    settings: list[SettingSpec] = []
    seen: set[str] = set()
    for index, entry in enumerate(
        _array(manifest.get("liveSettings", []), "/manifest/liveSettings", MAX_SETTINGS)
    ):
        pointer = f"/manifest/liveSettings/{index}"
        fields = _object(
            entry,
            pointer,
            {
                "name": True,
                "type": True,
                "defaultValue": True,
                "min": False,
                "max": False,
                "maxLength": False,
            },
        )
        name = _name(fields["name"], pointer + "/name", _SETTING_NAME)
        if name in seen:
            raise reject("E-EVENT-SETTING", f"setting {name} is declared twice", pointer + "/name")
        if name.startswith("e_"):
            raise reject(
                "E-EVENT-SETTING",
                f"setting {name} uses the event-field prefix e_",
                pointer + "/name",
                hint="parameters named e_<field> bind event fields; name settings without that prefix",
            )
        if not isinstance(fields["type"], str):
            raise reject("E-JSON-TYPE", "expected a string", pointer + "/type")
        seen.add(name)
        settings.append(parse_setting(fields, pointer))
    subscriptions: list[Subscription] = []
    subs = _array(manifest["subscriptions"], "/manifest/subscriptions", MAX_SUBSCRIPTIONS)
    if not subs:
        raise reject(
            "E-JSON-MISSING", "an envelope needs at least one subscription", "/manifest/subscriptions"
        )
    for index, entry in enumerate(subs):
        pointer = f"/manifest/subscriptions/{index}"
        fields = _object(entry, pointer, {"event": True, "kernel": True})
        sub = Subscription(
            _name(fields["event"], pointer + "/event"), _name(fields["kernel"], pointer + "/kernel")
        )
        if sub in subscriptions:
            raise reject("E-JSON-SCHEMA", f"subscription to {sub.event} is repeated", pointer)
        subscriptions.append(sub)
    entry = _object(top["entrypoints"], "/entrypoints", {"shouldHandle": True, "handle": True})
    should_handle = _name(entry["shouldHandle"], "/entrypoints/shouldHandle")
    handle = _name(entry["handle"], "/entrypoints/handle")
    module = top["module"]
    if isinstance(module, str):
        text, is_text = module, True
    elif isinstance(module, Mapping):
        try:
            text, is_text = json.dumps(module, ensure_ascii=False, allow_nan=False), False
        except (TypeError, ValueError, RecursionError):
            raise reject(
                "E-JSON-TYPE", "the wire-form module holds a value JSON cannot represent", "/module"
            ) from None
    else:
        raise reject(
            "E-JSON-TYPE", "module must be the text form (a string) or the wire form (an object)", "/module"
        )
    return Envelope(
        plugin_id, contract, tuple(settings), tuple(subscriptions), should_handle, handle, text, is_text
    )
