"""The pickle state of a frozen, slotted record whose mapping fields are read-only dicts.

Why: records a host receives (``ExecutionResult``, ``AuditEvent``, ``Command``) keep their mapping
fields as ``core.read_only.ReadOnlyDict`` so the host cannot change them, yet a host ships results to
another process (multiprocessing, a queue) or keeps snapshots of them. The state is every field by
name (a deferred record settled first), each read-only field as a plain ``dict`` copy, so the state
is version-neutral data; restoring makes a fresh read-only copy again, so the restored record is as
immutable as the original and shares nothing mutable with the state it came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from dotboxd.core.read_only import ReadOnlyDict


def frozen_state(record: Any, views: frozenset[str], dropped: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Every field of the dataclass ``record`` by name, the fields named in ``views`` as dicts and
    those named in ``dropped`` as None (handles that only mean something in this process).

    Fields are read through attribute access, so a record whose fields are settled on first read
    (``dotboxd.host.settled``) is settled first and its state holds every field."""
    state = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    for name in views:
        state[name] = dict(state[name])
    for name in dropped:
        state[name] = None
    return state


def restore_frozen_state(record: Any, state: Any, views: frozenset[str]) -> None:
    """Store ``state`` (``frozen_state``'s form) into the blank ``record``, past its frozen
    ``__setattr__`` as a dataclass ``__init__`` does, the fields named in ``views`` as new
    read-only dicts. A state that does not name every field exactly once is refused (TypeError)
    rather than leaving a record with unset fields."""
    names = [f.name for f in dataclasses.fields(record)]
    if not isinstance(state, dict) or sorted(state) != sorted(names):
        raise TypeError(f"a {type(record).__name__} state names each of its fields once")
    for name in names:
        value = state[name]
        if name in views:
            if not isinstance(value, Mapping):
                raise TypeError(f"the {name} of a {type(record).__name__} state is a mapping")
            value = ReadOnlyDict(value)
        object.__setattr__(record, name, value)
