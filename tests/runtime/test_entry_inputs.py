"""The entrypoint input readers: the direct tests for common scalar inputs accept exactly what the
general decoding (``decode_typed``) and checking (``coerce_host_value``) accept, and give the same
value, or leave the input to them (which then writes the error)."""

from __future__ import annotations

import enum
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core.ast import TypeRef
from dotboxd.core.values import SandboxFault, coerce_host_value, decode_typed
from dotboxd.grammar import literals
from dotboxd.runtime.execution import _input_reader


class Level(enum.IntEnum):
    HIGH = 3


class Text(str):
    pass


_raw = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63), Level.HIGH]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(["\ud800", "a\udc00", "\U0001f600", Text("abc"), b"ab", [1], (1,)]),
)


def _outcome(read: Any, raw: object) -> tuple[str, Any]:
    try:
        value = read(raw)
    except SandboxFault as fault:
        return ("fault", (fault.code, fault.safe_message))
    if isinstance(value, float) and math.isnan(value):
        return ("value", ("nan", type(value)))
    return ("value", (value, type(value)))


@pytest.mark.parametrize("name", ["I32", "I64", "Bool", "F64", "String", "Unit"])
@pytest.mark.parametrize("encoding", ["python", "json"])
@given(raw=_raw)
def test_fast_readers_agree_with_the_general_routines(name: str, encoding: str, raw: object) -> None:
    ref = TypeRef(name)
    fast = _input_reader(ref, encoding)  # type: ignore[arg-type]
    if encoding == "json":
        general = _outcome(lambda r: decode_typed(r, ref, literals), raw)
    else:
        general = _outcome(lambda r: coerce_host_value(r, ref, literals), raw)
    assert _outcome(fast, raw) == general


_events = st.dictionaries(
    st.one_of(st.text(max_size=8), st.sampled_from(["hp", "level", "\u00e9t\u00e9", "\U0001f600", ""])),
    st.one_of(st.integers(-(2**40), 2**40), st.booleans(), st.floats(allow_nan=False), st.none()),
    max_size=6,
)


@pytest.mark.parametrize("value_type", ["I32", "I64", "Bool", "F64"])
@given(raw=_events)
def test_text_keyed_map_reader_agrees_with_the_general_routine(value_type: str, raw: dict[str, Any]) -> None:
    """A host event as ``Map<String, scalar>``: the one-pass reader (shape summed while the entries
    are checked) gives the value, shape and faults the general routine gives."""
    from dotboxd.core.values import MapValue, values_equal

    ref = TypeRef("Map", (TypeRef("String"), TypeRef(value_type)))
    fast = _outcome(_input_reader(ref, "python"), raw)
    general = _outcome(lambda r: coerce_host_value(r, ref, literals), raw)
    assert fast[0] == general[0]
    if fast[0] == "fault":
        assert fast == general
        return
    ours, theirs = fast[1][0], general[1][0]
    assert isinstance(ours, MapValue) and isinstance(theirs, MapValue)
    assert values_equal(ours, theirs) and ours.shape == theirs.shape
    assert type(ours) is MapValue  # the same key tokens, holding the same entries:
    assert dict(ours.entries.items()) == dict(theirs.entries.items()) and len(ours) == len(theirs)
