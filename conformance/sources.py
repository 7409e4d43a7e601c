"""The module input of a case, exactly as an importer must receive it.

``module`` objects are serialized once here (so pointers, not line numbers, are meaningful for
them); ``moduleText`` and ``kernelText`` are passed through untouched; ``moduleBase64`` gives
exact bytes (invalid UTF-8, a byte-order mark); a ``moduleTextGenerator`` is expanded.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dotboxd.conformance.generate import expand_generator
from dotboxd.conformance.model import SOURCE_KEYS, Case


@dataclass(frozen=True, slots=True)
class ModuleSource:
    """``form`` is ``"wire"`` (JSON IR), ``"text"`` (the readable kernel text form) or ``"python"``
    (a kernel in restricted Python)."""

    form: str
    data: bytes | str


def source_key_of(raw: Mapping[str, Any]) -> str | None:
    """The one module source a case object uses, or None if it has none or several."""
    present = [key for key in SOURCE_KEYS if key in raw]
    return present[0] if len(present) == 1 else None


def module_source(raw: Mapping[str, Any], key: str, where: str = "case") -> ModuleSource:
    """The bytes or text the importer must see for a case object whose source is ``key``."""
    if key == "module":
        return ModuleSource("wire", json.dumps(raw["module"], ensure_ascii=False, allow_nan=False))
    if key == "kernelText":
        return ModuleSource("text", str(raw["kernelText"]))
    if key == "kernelPython":  # a kernel in restricted Python: lowered, never run (spec/python-front.md)
        return ModuleSource("python", str(raw["kernelPython"]))
    if key == "moduleBase64":
        return ModuleSource("wire", base64.b64decode(str(raw["moduleBase64"]), validate=True))
    if key == "moduleTextGenerator":
        return ModuleSource("wire", expand_generator(raw["moduleTextGenerator"], where))
    return ModuleSource("wire", str(raw["moduleText"]))


def wire_request_case(case: Case) -> dict[str, Any]:
    """The case as sent to an external implementation: without ``expect`` and with any generator
    expanded into plain ``moduleText`` (generators are a convenience of this runner only)."""
    sent = {key: value for key, value in case.raw.items() if key != "expect"}
    if case.source_key == "moduleTextGenerator":
        del sent["moduleTextGenerator"]
        sent["moduleText"] = expand_generator(case.raw["moduleTextGenerator"], case.origin)
    return sent
