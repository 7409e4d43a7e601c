"""``ReadOnlyDict``, the type of the records' read-only mapping fields: a dict that refuses every
change through its interface, and that ``asdict``, pickle, copy and JSON all take."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from dotboxd.core.read_only import EMPTY, ReadOnlyDict

from .record_shapes import assert_read_only


@dataclasses.dataclass(frozen=True)
class _Holder:
    mapping: ReadOnlyDict[str, Any]


def test_every_mutator_refuses_with_a_type_error_that_says_how_to_copy() -> None:
    items = ReadOnlyDict({"a": 1, "b": [2]})
    assert_read_only(items, "items")
    assert_read_only(EMPTY, "EMPTY")
    with pytest.raises(
        TypeError, match=r"ReadOnlyDict cannot be changed.*dict\(\.\.\.\) makes a mutable copy"
    ):
        items["c"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        ReadOnlyDict.fromkeys("ab")
    assert items == {"a": 1, "b": [2]} and len(EMPTY) == 0


def test_copies_and_unions_are_plain_mutable_dicts() -> None:
    items = ReadOnlyDict({"a": 1})
    for made in (items.copy(), items | {"b": 2}, {"b": 2} | items, dict(items)):
        assert type(made) is dict
        made["z"] = 0
    assert items == {"a": 1}


def test_equality_hashing_and_repr_are_a_dicts() -> None:
    items = ReadOnlyDict({"a": 1})
    assert items == {"a": 1} and dict.__eq__({"a": 1}, items) and items != {"a": 2}
    with pytest.raises(TypeError, match="unhashable"):
        hash(items)
    assert repr(items) == "ReadOnlyDict({'a': 1})"
    assert json.dumps(ReadOnlyDict({"n": ReadOnlyDict({"m": 1})})) == '{"n": {"m": 1}}'


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_as_a_new_read_only_dict(protocol: int) -> None:
    items = ReadOnlyDict({"a": 1, "b": (2, 3)})
    back = pickle.loads(pickle.dumps(items, protocol=protocol))
    assert type(back) is ReadOnlyDict and back == items and back is not items
    assert_read_only(back, "unpickled")


def test_copy_shares_and_deepcopy_copies_the_values() -> None:
    inner: list[int] = [1]
    items = ReadOnlyDict({"a": inner})
    assert copy.copy(items) is items, "nothing can change it: its own shallow copy"
    deep = copy.deepcopy(items)
    assert type(deep) is ReadOnlyDict and deep == items and deep["a"] is not inner
    assert_read_only(deep, "deep copy")


def test_asdict_rebuilds_it_from_its_pairs() -> None:
    holder = _Holder(ReadOnlyDict({"a": 1, "b": 2}))
    as_dict = dataclasses.asdict(holder)
    assert as_dict == {"mapping": {"a": 1, "b": 2}}
    assert type(as_dict["mapping"]) is ReadOnlyDict and as_dict["mapping"] is not holder.mapping
    assert dataclasses.astuple(holder) == ({"a": 1, "b": 2},)
