"""The pickle state of a frozen, slotted record whose mapping fields are read-only views.

Why: records a host receives (``ExecutionResult``, ``AuditEvent``) keep their mapping fields behind
a ``MappingProxyType`` so the host can never change them, and the view itself can be neither pickled
nor deep-copied - yet a host ships results to another process (multiprocessing, a queue) or keeps
snapshots of them. The state is every field by name, each read-only view as a plain ``dict`` copy;
restoring wraps a fresh copy in a new view again, so the restored record is as immutable as the
original and shares nothing mutable with the state it came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


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
    ``__setattr__`` as a dataclass ``__init__`` does, the fields named in ``views`` behind new
    read-only views. A state that does not name every field exactly once is refused (TypeError)
    rather than leaving a record with unset fields."""
    names = [f.name for f in dataclasses.fields(record)]
    if not isinstance(state, dict) or sorted(state) != sorted(names):
        raise TypeError(f"a {type(record).__name__} state names each of its fields once")
    for name in names:
        value = state[name]
        if name in views:
            if not isinstance(value, Mapping):
                raise TypeError(f"the {name} of a {type(record).__name__} state is a mapping")
            value = MappingProxyType(dict(value))
        object.__setattr__(record, name, value)
