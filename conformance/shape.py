"""Strict shape checking of one case object (the case format of conformance/README.md).

A corpus is only trustworthy if a typo cannot silently turn a case into a weaker one: an unknown
key, a misspelled outcome or a second module source is an error here, before anything runs. Only
the *shape* is checked; the meaning of a policy, binding or module is the pipeline's business
(a case may carry a deliberately bad grant to test the policy resolver).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from dotboxd.conformance.errors import CaseFormatError
from dotboxd.conformance.generate import check_generator
from dotboxd.conformance.model import (
    BACKENDS,
    CATEGORIES,
    CHARGE_COUNTERS,
    OUTCOMES,
    REFUSE_CATEGORIES,
    SOURCE_KEYS,
    STAGES,
    TEXT_SOURCES,
    Case,
    Expect,
)
from dotboxd.conformance.standard import STANDARD_KEY, standard_ids
from dotboxd.conformance.workspace import unsafe_file_path
from dotboxd.core.limits import LIMIT_BY_JSON
from dotboxd.validator import policy_json

NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
CODE_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")

CASE_KEYS = frozenset(
    {"name", "description", "tags", "policy", "bindings", "files", "entrypoint", "args", "backends", "expect"}
) | frozenset(SOURCE_KEYS)
REQUEST_CASE_KEYS = CASE_KEYS - {"expect"}
EXPECT_KEYS = frozenset(
    {
        "stage",
        "outcome",
        "diagnostic",
        "error",
        "pointer",
        "line",
        "column",
        "value",
        "fuelUsed",
        "usage",
        "bindingCalls",
    }
)
POLICY_KEYS = policy_json.POLICY_KEYS
"""A case's policy has the keys of the policy JSON form (one list: the policy reader's)."""
BINDING_KEYS = frozenset(
    {
        "id",
        "version",
        "parameters",
        "returnType",
        "effects",
        "capability",
        "cost",
        "isAsync",
        "audit",
        "auditKind",
        "safety",
        "behavior",
        # our additions, read by the binding manifest loader (spec/validation.md section 8)
        "compiledTarget",
        "grantParameters",
        # our addition: ask for the standard contract of a standard binding id (dotboxd.conformance.standard)
        STANDARD_KEY,
    }
)
# behaviour kind -> (required parameters, optional parameters)
BEHAVIOR_PARAMS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "return": (frozenset({"value"}), frozenset()),
    "echo": (frozenset({"arg"}), frozenset()),
    "sequence": (frozenset({"values"}), frozenset()),
    "raise": (frozenset(), frozenset({"message"})),
    "pending": (frozenset(), frozenset()),
    "async-return": (frozenset({"value"}), frozenset()),
    "sleep": (frozenset({"ms"}), frozenset({"value"})),
    "foreign": (frozenset(), frozenset()),
    "malformed": (frozenset({"value"}), frozenset()),
    # our extension: refuse on purpose with a chosen category (see dotboxd.conformance.fixtures)
    "refuse": (frozenset({"category"}), frozenset({"message"})),
    # our extension: charge facade counters through the binding context (dotboxd.conformance.fixtures)
    "charge": (frozenset(), frozenset({*CHARGE_COUNTERS, "logMessage", "value"})),
}
RUN_ONLY_EXPECT = ("fuelUsed", "usage", "bindingCalls")


def check_case(raw: Any, where: str, area: str) -> Case:
    """Check ``raw`` against the case format and return the typed :class:`Case`."""
    obj = _object(raw, where, "a case")
    _keys(obj, CASE_KEYS, where)
    name, where, tags, source_key, backends = _inputs(obj, where)
    if "expect" not in obj:
        raise CaseFormatError(where, "missing 'expect'")
    expect = _expect(obj["expect"], where, source_key)
    return Case(
        name=name,
        area=area,
        origin=where,
        source_key=source_key,
        expect=expect,
        raw=obj,
        tags=tags,
        backends=backends,
    )


def check_request_case(raw: Any, where: str) -> Mapping[str, Any]:
    """Check the ``case`` of a protocol request: a case object without ``expect``, every field
    shaped as in a case file (``conformance serve`` answers a violation with ``unsupported``
    instead of letting a malformed ``files`` or generator reach the pipeline)."""
    obj = _object(raw, where, "a case")
    _keys(obj, REQUEST_CASE_KEYS, where)
    _inputs(obj, where)
    return obj


def _inputs(
    obj: Mapping[str, Any], where: str
) -> tuple[str, str, tuple[str, ...], str, tuple[str, ...] | None]:
    """Everything of a case but ``expect``: (name, where with the name, tags, source key, backends)."""
    name = obj.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise CaseFormatError(where, f"'name' must be a kebab-case string, got {_shown(name)}")
    where = f"{where} ({name})"
    if "description" in obj and not isinstance(obj["description"], str):
        raise CaseFormatError(where, "'description' must be a string")
    tags = _strings(obj.get("tags", []), where, "tags")
    source_key = _source(obj, where)
    if "policy" in obj:
        _policy(obj["policy"], where)
    if "bindings" in obj:
        _bindings(obj["bindings"], where)
    if "files" in obj:
        files = _object(obj["files"], where, "'files'")
        for path, content in files.items():
            if not isinstance(content, str):
                raise CaseFormatError(where, f"files[{_shown(path)}] must be a string")
            problem = unsafe_file_path(path)
            if problem is not None:
                raise CaseFormatError(where, f"files[{_shown(path)}] {problem}")
    if "entrypoint" in obj and not isinstance(obj["entrypoint"], str):
        raise CaseFormatError(where, "'entrypoint' must be a string")
    if "args" in obj and not isinstance(obj["args"], list):
        raise CaseFormatError(where, "'args' must be an array (positional arguments)")
    backends: tuple[str, ...] | None = None
    if "backends" in obj:
        backends = _strings(obj["backends"], where, "backends")
        for backend in backends:
            if backend not in BACKENDS:
                raise CaseFormatError(
                    where, f"unknown backend {_shown(backend)} (known: {', '.join(BACKENDS)})"
                )
        if not backends:
            raise CaseFormatError(where, "'backends' must not be empty (omit it for every backend)")
    return name, where, tags, source_key, backends


def _shown(value: Any) -> str:
    """``repr`` of a value from the input, cut short (a message must not echo a megabyte)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _object(value: Any, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise CaseFormatError(where, f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _keys(obj: Mapping[str, Any], allowed: frozenset[str], where: str, what: str = "case") -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        shown = ", ".join(map(_shown, unknown[:5])) + (", ..." if len(unknown) > 5 else "")
        raise CaseFormatError(where, f"unknown {what} key(s) {shown}")


def _strings(value: Any, where: str, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise CaseFormatError(where, f"'{what}' must be an array of non-empty strings")
    return tuple(value)


def _source(obj: Mapping[str, Any], where: str) -> str:
    present = [key for key in SOURCE_KEYS if key in obj]
    if len(present) != 1:
        raise CaseFormatError(
            where,
            f"exactly one module source ({', '.join(SOURCE_KEYS)}) is required, found {present or 'none'}",
        )
    key = present[0]
    value = obj[key]
    if key == "module":
        _object(value, where, "'module'")
    elif key == "moduleTextGenerator":
        check_generator(value, f"{where} moduleTextGenerator")
    elif not isinstance(value, str):
        raise CaseFormatError(where, f"'{key}' must be a string")
    elif key == "moduleBase64":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise CaseFormatError(where, f"'moduleBase64' is not valid base64: {exc}") from None
    return key


def _policy(value: Any, where: str) -> None:
    policy = _object(value, where, "'policy'")
    _keys(policy, POLICY_KEYS, where, "policy")
    if "limits" in policy:
        limits = _object(policy["limits"], where, "'policy.limits'")
        for limit, amount in limits.items():
            # an unknown limit name is the pipeline's to reject (a case may test that error)
            spec = LIMIT_BY_JSON.get(limit)
            if not _is_int(amount) and not (amount is None and spec is not None and spec.null_is_default):
                raise CaseFormatError(where, f"policy limit {limit!r} must be an integer")
    if "grants" in policy:
        grants = policy["grants"]
        if not isinstance(grants, list) or not all(isinstance(grant, dict) for grant in grants):
            raise CaseFormatError(where, "'policy.grants' must be an array of objects")


def _bindings(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise CaseFormatError(where, "'bindings' must be an array")
    for index, item in enumerate(value):
        here = f"{where} bindings[{index}]"
        binding = _object(item, here, "a binding")
        _keys(binding, BINDING_KEYS, here, "binding")
        if not isinstance(binding.get("id"), str):
            raise CaseFormatError(here, "a binding needs a string 'id'")
        if STANDARD_KEY in binding:
            _standard(binding, here)
        elif "behavior" in binding:
            _behavior(binding["behavior"], here)


def _standard(binding: Mapping[str, Any], where: str) -> None:
    """``{"id": ..., "standard": true}`` and nothing else: the marker names a contract, it cannot
    amend one or add a behaviour (the standard facade is the behaviour)."""
    if binding[STANDARD_KEY] is not True:
        raise CaseFormatError(where, "'standard' must be true (leave it out for a declared binding)")
    _keys(binding, frozenset({"id", STANDARD_KEY}), where, "standard binding")
    if binding["id"] not in standard_ids():
        raise CaseFormatError(
            where, f"{binding['id']!r} is not a standard binding (known: {', '.join(standard_ids())})"
        )


def _behavior(value: Any, where: str) -> None:
    behavior = _object(value, where, "'behavior'")
    kind = behavior.get("kind")
    if kind not in BEHAVIOR_PARAMS:
        raise CaseFormatError(where, f"unknown behavior kind {kind!r} (known: {', '.join(BEHAVIOR_PARAMS)})")
    required, optional = BEHAVIOR_PARAMS[kind]
    params = set(behavior) - {"kind"}
    missing = sorted(required - params)
    if missing:
        raise CaseFormatError(where, f"behavior {kind!r} needs {', '.join(missing)}")
    _keys(behavior, required | optional | {"kind"}, where, f"behavior {kind!r}")
    if kind == "sequence" and not isinstance(behavior["values"], list):
        raise CaseFormatError(where, "behavior 'sequence' needs an array 'values'")
    if kind == "echo" and not (_is_int(behavior["arg"]) and behavior["arg"] >= 0):
        raise CaseFormatError(where, "behavior 'echo' needs a non-negative integer 'arg'")
    if kind == "sleep" and not (_is_int(behavior["ms"]) and behavior["ms"] >= 0):
        raise CaseFormatError(where, "behavior 'sleep' needs a non-negative integer 'ms'")
    if kind in ("raise", "refuse") and not isinstance(behavior.get("message", ""), str):
        raise CaseFormatError(where, f"behavior {kind!r} takes a string 'message'")
    if kind == "charge":
        for counter in CHARGE_COUNTERS:
            if counter in behavior and not (_is_int(behavior[counter]) and behavior[counter] >= 0):
                raise CaseFormatError(where, f"behavior 'charge' needs a non-negative integer {counter!r}")
        if "logMessage" in behavior and not isinstance(behavior["logMessage"], str):
            raise CaseFormatError(where, "behavior 'charge' takes a string 'logMessage'")
    if kind == "refuse" and behavior["category"] not in REFUSE_CATEGORIES:
        raise CaseFormatError(
            where, f"behavior 'refuse' needs a 'category' among {', '.join(REFUSE_CATEGORIES)}"
        )


def _expect(value: Any, where: str, source_key: str) -> Expect:
    here = f"{where} expect"
    obj = _object(value, here, "'expect'")
    _keys(obj, EXPECT_KEYS, here, "expect")
    stage, outcome = obj.get("stage"), obj.get("outcome")
    if stage not in STAGES:
        raise CaseFormatError(here, f"'stage' must be one of {', '.join(STAGES)}, got {stage!r}")
    if outcome not in OUTCOMES:
        raise CaseFormatError(here, f"'outcome' must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    assert isinstance(stage, str) and isinstance(outcome, str)
    if outcome == "rejected" and stage == "run":
        raise CaseFormatError(here, "'rejected' ends at import or validate; a failed run is outcome 'error'")
    if outcome == "error" and stage != "run":
        raise CaseFormatError(here, "outcome 'error' is a failed run: stage must be 'run'")
    if outcome == "rejected" and "diagnostic" not in obj:
        raise CaseFormatError(here, "a rejected case must name its 'diagnostic'")
    if outcome == "error" and "error" not in obj:
        raise CaseFormatError(here, "a failed run must name its 'error' category")
    if outcome == "ok" and ("diagnostic" in obj or "error" in obj):
        raise CaseFormatError(here, "an 'ok' case cannot expect a diagnostic or an error")
    if stage == "run" and outcome == "ok" and "value" not in obj:
        raise CaseFormatError(here, "a successful run must pin its 'value' (null for Unit)")
    if "value" in obj and not (stage == "run" and outcome == "ok"):
        raise CaseFormatError(here, "'value' only belongs to a successful run")
    for key in RUN_ONLY_EXPECT:
        if key in obj and stage != "run":
            raise CaseFormatError(here, f"'{key}' only belongs to stage 'run'")
    diagnostic = _optional_str(obj, "diagnostic", here)
    if diagnostic is not None and not CODE_RE.match(diagnostic):
        raise CaseFormatError(here, f"'diagnostic' {diagnostic!r} is not a code like E-JSON-LIMIT")
    error = _optional_str(obj, "error", here)
    if error is not None and error not in CATEGORIES:
        raise CaseFormatError(here, f"'error' must be a category ({', '.join(CATEGORIES)}), got {error!r}")
    pointer = _optional_str(obj, "pointer", here)
    if pointer is not None and pointer and not pointer.startswith("/"):
        raise CaseFormatError(here, f"'pointer' must be an RFC 6901 pointer, got {pointer!r}")
    line, column = _positive(obj, "line", here), _positive(obj, "column", here)
    if (line is not None or column is not None) and source_key not in TEXT_SOURCES:
        raise CaseFormatError(
            here, "line/column need a text source (moduleText, kernelText, ...), not 'module'"
        )
    return Expect(
        stage=stage,
        outcome=outcome,
        diagnostic=diagnostic,
        error=error,
        pointer=pointer,
        line=line,
        column=column,
        has_value="value" in obj,
        value=obj.get("value"),
        fuel_used=_non_negative(obj, "fuelUsed", here),
        usage=_counters(obj, "usage", here),
        binding_calls=_counters(obj, "bindingCalls", here),
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _optional_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    if key not in obj:
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise CaseFormatError(where, f"'{key}' must be a string")
    return value


def _positive(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    return _int_at_least(obj, key, where, 1, "a positive integer (1-based)")


def _non_negative(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    return _int_at_least(obj, key, where, 0, "a non-negative integer")


def _int_at_least(obj: Mapping[str, Any], key: str, where: str, least: int, what: str) -> int | None:
    """The optional integer ``obj[key]`` (None when absent); below ``least`` is a format error."""
    if key not in obj:
        return None
    value = obj[key]
    if not _is_int(value) or value < least:
        raise CaseFormatError(where, f"'{key}' must be {what}")
    return int(value)


def _counters(obj: Mapping[str, Any], key: str, where: str) -> Mapping[str, int] | None:
    if key not in obj:
        return None
    counters = _object(obj[key], where, f"'{key}'")
    for name, amount in counters.items():
        if not _is_int(amount) or amount < 0:
            raise CaseFormatError(where, f"'{key}.{name}' must be a non-negative integer")
    return dict(counters)
