"""Live settings: typed, range-checked inputs an owner changes while its plugin stays installed.

A setting is declared in the envelope (``{name, type, defaultValue, min?, max?, maxLength?}``) and
reaches ``shouldHandle``/``handle`` as a parameter bound by name. Changing one never re-validates the
module: the kernel's parameter types were checked once against the declaration at install, and every
new value is checked against the same declaration here, so the plan's facts stay true. Updates are
all-or-nothing: a batch with one bad value changes nothing (E-EVENT-SETTING names the bad one).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dotboxd.core.diagnostics import reject
from dotboxd.core.types import SandboxType
from dotboxd.events.contracts import SCALARS, scalar_problem

#: A String setting longer than this is refused unless the declaration says otherwise.
DEFAULT_MAX_STRING_SETTING = 1024
#: The most live settings one envelope may declare (each becomes a possible kernel parameter).
MAX_SETTINGS = 64


@dataclass(frozen=True)
class SettingSpec:
    """One declared live setting: its type, default and (numeric) range or (text) length bound."""

    name: str
    type_name: str
    default: object
    minimum: int | float | None = None
    maximum: int | float | None = None
    max_length: int = DEFAULT_MAX_STRING_SETTING

    @property
    def sandbox_type(self) -> SandboxType:
        return SCALARS[self.type_name]

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not acceptable for this setting (None when it is)."""
        typed = scalar_problem(value, self.sandbox_type)
        if typed is not None:
            return typed
        if isinstance(value, int | float) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                return f"{value} is below the minimum {self.minimum}"
            if self.maximum is not None and value > self.maximum:
                return f"{value} is above the maximum {self.maximum}"
        if isinstance(value, str) and len(value) > self.max_length:
            return f"is longer than {self.max_length} characters"
        return None

    def coerce(self, value: object) -> object:
        """JSON has one number kind: an integral ``int`` is accepted for an F64 setting."""
        if self.type_name == "F64" and type(value) is int and abs(value) <= 2**53:
            return float(value)
        return value

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type_name, "defaultValue": self.default}
        if self.minimum is not None:
            out["min"] = self.minimum
        if self.maximum is not None:
            out["max"] = self.maximum
        if self.type_name == "String":
            out["maxLength"] = self.max_length
        return out


def _bound(raw: object, spec_type: str, pointer: str) -> int | float | None:
    if raw is None:
        return None
    if spec_type not in ("I32", "I64", "F64"):
        raise reject("E-EVENT-SETTING", "only numeric settings take min/max", pointer)
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise reject("E-EVENT-SETTING", "a setting bound must be a finite number", pointer)
    return raw


def parse_setting(raw: Mapping[str, Any], pointer: str) -> SettingSpec:
    """One ``liveSettings`` entry (already shape-checked by the envelope reader) as a SettingSpec;
    E-EVENT-SETTING when its type is unsupported, its range is empty or its default falls outside."""
    name = raw["name"]
    type_name = raw["type"]
    if type_name not in SCALARS:
        raise reject(
            "E-EVENT-SETTING",
            f"setting {name}: unsupported type {type_name!r}",
            pointer + "/type",
            hint=f"use one of {', '.join(SCALARS)}",
        )
    minimum = _bound(raw.get("min"), type_name, pointer + "/min")
    maximum = _bound(raw.get("max"), type_name, pointer + "/max")
    if minimum is not None and maximum is not None and minimum > maximum:
        raise reject("E-EVENT-SETTING", f"setting {name}: min {minimum} > max {maximum}", pointer)
    max_length = raw.get("maxLength", DEFAULT_MAX_STRING_SETTING)
    if type_name != "String" and "maxLength" in raw:
        raise reject("E-EVENT-SETTING", "only String settings take maxLength", pointer + "/maxLength")
    if isinstance(max_length, bool) or not isinstance(max_length, int) or not 0 <= max_length <= 1 << 20:
        raise reject("E-EVENT-SETTING", "maxLength must be an integer in 0..1048576", pointer + "/maxLength")
    spec = SettingSpec(name, type_name, None, minimum, maximum, max_length)
    default = spec.coerce(raw["defaultValue"])
    problem = spec.problem(default)
    if problem is not None:
        raise reject(
            "E-EVENT-SETTING",
            f"setting {name}: defaultValue {problem}",
            pointer + "/defaultValue",
            setting=name,
        )
    return SettingSpec(name, type_name, default, minimum, maximum, max_length)


def checked_update(specs: Mapping[str, SettingSpec], values: Mapping[str, object]) -> dict[str, object]:
    """The new values of an update, each checked against its declaration; E-EVENT-SETTING on the
    first unknown name or bad value, in which case nothing is to be applied."""
    if not isinstance(values, Mapping):
        raise reject("E-EVENT-SETTING", "settings must be given as a name -> value mapping")
    accepted: dict[str, object] = {}
    for name in sorted(values, key=str):
        spec = specs.get(name) if isinstance(name, str) else None
        if spec is None:
            raise reject(
                "E-EVENT-SETTING",
                f"unknown setting {name!r}",
                "/" + str(name),
                hint=f"declared settings: {sorted(specs)}",
                setting=str(name),
            )
        value = spec.coerce(values[name])
        problem = spec.problem(value)
        if problem is not None:
            bounds: dict[str, Any] = {"min": spec.minimum, "max": spec.maximum}
            raise reject(
                "E-EVENT-SETTING",
                f"setting {name}: {problem}",
                "/" + name,
                None,
                "",
                setting=name,
                **{key: bound for key, bound in bounds.items() if bound is not None},
            )
        accepted[name] = value
    return accepted
