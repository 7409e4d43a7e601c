"""What ``dataclasses.asdict``/``astuple`` of a record must give, checked against the record itself.

Why a checker rather than expected literals: the records differ from run to run (run ids,
timestamps), and what matters is the relation - every field, in order, in the converted form,
nested dataclasses converted, lists/tuples/dicts rebuilt, everything else an equal deep copy - and
that the record itself is unchanged and as read-only as before. Shared by the asdict tests of host
results (``tests/host``) and of the event hub's records (``tests/events``).
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping, MutableMapping
from typing import Any, Literal

import pytest

from dotboxd.core.values import shape_of

Mode = Literal["asdict", "astuple"]
CONVERT = {"asdict": dataclasses.asdict, "astuple": dataclasses.astuple}


def is_record(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def assert_converts(record: Any) -> None:
    """``asdict`` and ``astuple`` of ``record`` work and match it field by field (``matches``), and
    leave it as it was (equal to a snapshot taken before, mapping fields still read-only)."""
    snapshot = pickle.dumps(record) if _picklable(record) else None
    for mode, convert in CONVERT.items():
        matches(convert(record), record, mode, type(record).__name__)  # type: ignore[arg-type]
    if snapshot is not None:
        assert pickle.loads(snapshot) == record
    assert_read_only_mappings(record)


def matches(converted: Any, original: Any, mode: Mode, where: str) -> None:
    """``converted`` is what ``mode`` makes of ``original``: a dataclass becomes a dict of its fields
    (``asdict``) or a tuple of them (``astuple``), a list, tuple or dict the same type rebuilt from
    its converted items, anything else an equal copy of the same type (sandbox values of the same
    shape; exceptions of the same type and arguments)."""
    if is_record(original):
        names = [f.name for f in dataclasses.fields(original)]
        if mode == "asdict":
            assert type(converted) is dict and list(converted) == names, where
            items = [converted[name] for name in names]
        else:
            assert type(converted) is tuple and len(converted) == len(names), where
            items = list(converted)
        for name, item in zip(names, items, strict=True):
            matches(item, getattr(original, name), mode, f"{where}.{name}")
    elif isinstance(original, list | tuple):
        assert type(converted) is type(original) and len(converted) == len(original), where
        for index, (item, was) in enumerate(zip(converted, original, strict=True)):
            matches(item, was, mode, f"{where}[{index}]")
    elif isinstance(original, dict):
        assert type(converted) is type(original) and list(converted) == list(original), where
        assert converted is not original, f"{where}: a new mapping, not the record's own"
        for key, was in original.items():
            matches(converted[key], was, mode, f"{where}[{key!r}]")
    elif isinstance(original, BaseException):
        assert type(converted) is type(original) and converted.args == original.args, where
    else:
        assert type(converted) is type(original) and converted == original, where
        assert shape_of(converted) == shape_of(original), where


def mapping_fields(record: Any) -> list[tuple[str, Mapping[Any, Any]]]:
    """The fields of ``record`` (and of the records it holds in tuples) that are mappings."""
    found: list[tuple[str, Mapping[Any, Any]]] = []
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if isinstance(value, Mapping):
            found.append((f"{type(record).__name__}.{f.name}", value))
        elif isinstance(value, tuple):
            found.extend(m for item in value if is_record(item) for m in mapping_fields(item))
    return found


def assert_read_only(mapping: Mapping[Any, Any], where: str) -> None:
    """Every way a caller can change ``mapping`` through it raises TypeError and changes nothing (a
    mapping that is no ``dict`` must have no mutators at all, as ``BindingCatalog``)."""
    before = dict(mapping)
    with pytest.raises(TypeError):
        mapping["x"] = 1  # type: ignore[index]
    if not isinstance(mapping, dict):
        assert not isinstance(mapping, MutableMapping), where
        return
    attempts = [
        lambda m: m.__setitem__("x", 1),
        lambda m: m.__delitem__(next(iter(m), "x")),
        lambda m: m.update({"x": 1}),
        lambda m: m.setdefault("x", 1),
        lambda m: m.pop(next(iter(m), "x")),
        lambda m: m.popitem(),
        lambda m: m.clear(),
        lambda m: m.__ior__({"x": 1}),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError):
            attempt(mapping)
    assert dict(mapping) == before, where


def assert_read_only_mappings(record: Any) -> None:
    """The mapping fields of ``record`` refuse every change, except plain ``dict`` fields: those are
    the record's own copy, made for this caller (``InstallReceipt.settings``, ``PartitionResult.audit``)."""
    for where, mapping in mapping_fields(record):
        if type(mapping) is not dict:
            assert_read_only(mapping, where)


def _picklable(record: Any) -> bool:
    try:
        pickle.dumps(record)
    except (TypeError, AttributeError, pickle.PicklingError):
        return False
    return True
