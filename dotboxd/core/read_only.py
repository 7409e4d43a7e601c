"""``ReadOnlyDict``: the read-only mapping fields of the records a host receives.

Why not ``types.MappingProxyType``: the records (``ExecutionResult.binding_calls``, each audit
event's ``fields``, each command's ``payload``, ...) are dataclasses, and a host that logs or
serializes them with ``dataclasses.asdict``/``astuple`` has every field value that is not a
dataclass, list, tuple or dict deep-copied - and a view can be neither deep-copied nor pickled. A
``dict`` subclass is rebuilt by ``asdict`` from its pairs (``type(d)(pairs)``, which is
``dict.__init__``, not the refused mutators), pickles and copies through ``__reduce__``, and
``json.dumps`` takes it as a dict. A process-wide ``copyreg`` reducer for ``MappingProxyType`` would
have done the copying too, but it changes every view in the host's process, not only ours.

What stays as with the view: every mutator a caller can reach through the object (item assignment
and deletion, ``update``, ``|=``, ``pop``, ``popitem``, ``setdefault``, ``clear``) raises
TypeError; ``copy()`` and ``|`` give a new plain, mutable ``dict``; it equals any mapping with the
same items and hashes like a dict (not at all). What a view hid and this does not: ``dict``'s own
unbound methods (``dict.__setitem__(d, k, v)``) and a second explicit ``d.__init__(...)`` still reach
the storage, as ``object.__setattr__`` reaches a frozen dataclass's fields - host code deliberately
going around the record's interface (a Python ``__init__`` guarding against that would cost every
construction a Python call).
The sandboxed kernel never holds one of these objects, so no kernel-observable value can change.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def _refuse(self: ReadOnlyDict[Any, Any], *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(
        f"a {type(self).__name__} cannot be changed (a record's read-only field); "
        "dict(...) makes a mutable copy"
    )


class ReadOnlyDict(dict[K, V]):
    """A ``dict`` whose mutators raise TypeError: the type of the mapping fields of results, audit
    events and commands (see the module docstring for why a subclass rather than a view)."""

    __slots__ = ()

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __reduce__(self) -> tuple[type[ReadOnlyDict[K, V]], tuple[dict[K, V]]]:
        """Pickled (and copied, deep or not) as its items in a plain dict: the default reduction of
        a dict subclass replays ``__setitem__``, which this class refuses."""
        return (type(self), (dict(self),))

    def __copy__(self) -> ReadOnlyDict[K, V]:
        """Itself: nothing can change it, so a shallow copy needs no new object."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ReadOnlyDict[K, V]:
        """A new read-only dict of deep copies of the items (the values may be mutable host data)."""
        return type(self)(copy.deepcopy(dict(self), memo))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


EMPTY: ReadOnlyDict[Any, Any] = ReadOnlyDict()
"""The empty read-only dict every record with no entries shares (nothing can fill it)."""
