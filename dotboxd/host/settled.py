"""Fields of a frozen, slotted record that are filled in on first read (``SettledLater``).

Why: a host calls a small predicate once per event and mostly reads the result's ``value``; the
rest of an ``ExecutionResult`` (the usage record, the audit trail, the run id text, the plan's
identity) costs more to build than the run itself. A result made by a fast lane stores only what
every caller reads (``ok``, ``value``, ``error``) and keeps the run's compact record; the other
fields stay unset slots until one of them is read.

The record stays an ordinary frozen dataclass: its fields, equality, hash, repr, pickling and
``dataclasses`` functions all read the fields through attribute access, and Python falls back to
``__getattr__`` only for a slot that is not set - which here settles every field at once, from the
pending record, then answers as if the field had always been there. Settling happens once, under a
lock, so two threads reading a fresh result see the very same field objects. A record built the
ordinary way (every field set) never reaches ``__getattr__`` for a field.

The price is paid by every attribute miss and by the interpreter's attribute specialization (a
class with ``__getattr__`` reads its slots through the generic lookup: ~8 ns more per read,
measured), which is far below what the deferred fields cost to build.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

Settle = Callable[[Any], tuple[Any, ...]]
"""Computes every field of a record, in field order, from its pending record."""

_SETTLE = threading.Lock()
"""Serializes settling (rare: once per result that is read past ``ok``/``value``/``error``)."""


class SettledLater:
    """Base of a slotted dataclass whose unset fields are computed on first read.

    ``_pending`` is what the fields are computed from and ``_settle`` the function that computes
    them (``Settle``); both unset in a record built with all its fields, ``_settle`` None once the
    record was settled."""

    __slots__ = ("_pending", "_settle")

    def __getattr__(self, name: str) -> Any:
        """Only reached for an attribute the ordinary lookup did not find: a field not set yet is
        settled (with all the others), anything else is the usual AttributeError."""
        fields = type(self).__dataclass_fields__  # type: ignore[attr-defined]
        if name in fields:
            try:
                settle = object.__getattribute__(self, "_settle")
            except AttributeError:  # built with every field: a field cannot be missing
                settle = None
            if settle is not None:
                _settle_now(self)
                return object.__getattribute__(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)


def _settle_now(record: SettledLater) -> None:
    """Store every field of ``record`` that is still unset, once (later callers find it done)."""
    names = [f.name for f in dataclasses.fields(record)]  # type: ignore[arg-type]
    with _SETTLE:
        settle: Settle | None = object.__getattribute__(record, "_settle")
        if settle is None:
            return  # another thread settled it while this one waited
        values = settle(object.__getattribute__(record, "_pending"))
        store = object.__setattr__  # past the frozen ``__setattr__``, as a dataclass ``__init__`` does
        for name, value in zip(names, values, strict=True):
            try:
                object.__getattribute__(record, name)
            except AttributeError:
                store(record, name, value)
        store(record, "_pending", None)
        store(record, "_settle", None)
