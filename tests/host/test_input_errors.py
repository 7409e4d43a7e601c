"""Refused run inputs get a clear, located error on every backend (spec/semantics.md section 2).

Inputs that are not a list or tuple of one value per parameter are ``R-ENTRY-ARITY`` (never an
internal fault, never a run with values the host did not mean: a set's order, a text's characters);
an input that does not match its type is ``R-VALUE-TYPE`` whose diagnostic points at the refused
part inside the input (``/0/hp``), names the parameter and its type, and says what to do."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core import literal_rules
from dotboxd.core.ast import TypeRef
from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime.input_faults import KEY_NAME_UNITS, fault_pointer, host_check, pointer_segment

BACKENDS = ("reference", "optimized")
PAIR = """module "pair" version "1.0.0";
entrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }"""
EVENT = """module "event" version "1.0.0";
entrypoint fn check(ev Map<String, I32>) -> Bool { return map.get(ev, "hp") > 0; }"""
NESTED = """module "nested" version "1.0.0";
entrypoint fn main(flag Bool, rows List<Map<String, List<I32>>>) -> I32 { return 0; }"""
RECORD = """module "record" version "1.0.0";
entrypoint fn main(pair Record<I32, String>) -> I32 { return 0; }"""

_HOST = SandboxHost()
_PAIR = _HOST.prepare(PAIR)
_EVENT = _HOST.prepare(EVENT)
_NESTED = _HOST.prepare(NESTED)
_RECORD = _HOST.prepare(RECORD)


class _RaisingLength(Sequence[object]):
    def __len__(self) -> int:
        raise RuntimeError("secret host detail")

    def __getitem__(self, index: Any) -> object:
        return 1


class _RaisingItems(Sequence[object]):
    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: Any) -> object:
        raise KeyError(index)


class _Endless(Sequence[object]):
    """Claims two items and would give items forever: only two may ever be read."""

    def __init__(self) -> None:
        self.reads = 0

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: Any) -> object:
        self.reads += 1
        return 12


def _generator() -> Iterator[int]:
    yield from (1, 12)


NOT_INPUTS: list[object] = [
    5,
    None,
    {1, 12},
    frozenset({1, 12}),
    {"hp": 1, "level": 12},
    "ab",
    b"ab",
    bytearray(b"\x01\x0c"),
    memoryview(b"\x01\x0c"),
    _generator(),
    iter([1, 12]),
    _RaisingLength(),
    _RaisingItems(),
    [1],
    (1, 12, 3),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("args", NOT_INPUTS, ids=lambda a: type(a).__name__)
def test_inputs_that_are_not_one_value_per_parameter_are_an_arity_error(backend: str, args: object) -> None:
    result = _HOST.execute(_PAIR, "check", args, backend=backend)  # type: ignore[arg-type]
    assert not result.ok and result.error is not None
    assert (result.error.category, result.error.code) == ("InvalidInput", "R-ENTRY-ARITY")
    assert result.error.safe_message.startswith("entrypoint 'check' takes 2 input(s) as a list or tuple; ")
    assert "secret" not in result.error.safe_message
    diagnostic = result.error.diagnostic
    assert diagnostic is not None and diagnostic.hint and diagnostic.evidence["arity"] == 2
    assert result.usage.fuel_used == 0  # refused before any kernel code ran


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sequence_that_claims_more_items_is_read_only_as_far_as_the_parameters(backend: str) -> None:
    endless = _Endless()
    result = _HOST.execute(_PAIR, "check", endless, backend=backend)
    assert result.ok and result.value is True and endless.reads == 2
    assert _HOST.execute(_PAIR, "check", range(11, 13), backend=backend).value is True


@pytest.mark.parametrize("backend", BACKENDS)
def test_execute_many_refuses_each_bad_row_with_the_same_errors(backend: str) -> None:
    rows: list[Any] = [[1, 12], 5, None, {1, 12}, "ab", [1, "x"], [0, 12]]
    results = list(_HOST.execute_many(_PAIR, "check", rows, backend=backend))
    codes = [None if r.ok else r.error.code for r in results]  # type: ignore[union-attr]
    assert codes == [None, *["R-ENTRY-ARITY"] * 4, "R-VALUE-TYPE", None]
    assert [r.value for r in results if r.ok] == [True, False]


LOCATED: list[tuple[Any, str, list[object], str, str]] = [
    # plan, encoding, args, the pointer, the start of the message
    (_PAIR, "python", [1, "x"], "/1", "input 2: expected an I32"),
    (_PAIR, "python", [2**31, 1], "/0", "input 1: I32 out of range"),
    (_EVENT, "python", [{"hp": 1, "level": "x"}], "/0/level", "input 1: expected an I32 (at /0/level)"),
    (_EVENT, "python", [{"a/b~c": 1.5}], "/0/a~1b~0c", "input 1: expected an I32 (at /0/a~1b~0c)"),
    (_EVENT, "python", [{7: 1}], "/0/7", "input 1: expected a String (at /0/7)"),
    (_EVENT, "python", [{"hp": 2**40}], "/0/hp", "input 1: I32 out of range (at /0/hp)"),
    (_NESTED, "python", [True, [{"a": [1]}, {"b": [1, True]}]], "/1/1/b/1", "input 2: expected an I32"),
    (_NESTED, "python", [True, [{"a": (1, 2)}, [3]]], "/1/1", "input 2: expected a Map (at /1/1)"),
    (_NESTED, "json", [True, [[["a", [1]], ["a", [2]]]]], "/1/0/1", "input 2: duplicate key in a Map"),
    (_NESTED, "json", [True, [[["a", [1]], ["b", [2, 1.5]]]]], "/1/0/1/1/1", "input 2: expected an integer"),
    (_NESTED, "json", [True, [[["a", [1]], [5, []]]]], "/1/0/1/0", "input 2: expected a string for String"),
    (_NESTED, "json", [True, [[["a", [1]], ["b"]]]], "/1/0/1", "input 2: expected a [key, value] pair"),
    (_NESTED, "json", [1, []], "/0", "input 1: expected true or false for Bool"),
    (_RECORD, "python", [(1, 2)], "/0/1", "input 1: expected a String (at /0/1)"),
    (_RECORD, "json", [[1, "a", 3]], "/0", "input 1: expected an array of 2 fields"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("plan", "encoding", "args", "pointer", "message"), LOCATED)
def test_a_refused_input_points_at_the_part_that_is_wrong(
    backend: str, plan: Any, encoding: Any, args: list[object], pointer: str, message: str
) -> None:
    entry = "check" if plan in (_PAIR, _EVENT) else "main"
    result = _HOST.execute(plan, entry, args, backend=backend, encoding=encoding)
    assert not result.ok and result.error is not None
    assert (result.error.category, result.error.code) == ("InvalidInput", "R-VALUE-TYPE")
    assert result.error.safe_message.startswith(message), result.error.safe_message
    diagnostic = result.error.diagnostic
    assert diagnostic is not None and diagnostic.pointer == pointer
    position = int(pointer.split("/")[1]) + 1
    assert diagnostic.evidence["input"] == position
    assert diagnostic.hint.startswith(f"pass input {position} ('{diagnostic.evidence['parameter']}')")
    assert result.error.to_json()["diagnostic"]["pointer"] == pointer


# keys a pointer must not spell: each is named by its position in the event (``#1``)
UNSPELLED_KEYS = [
    "\ud800",  # an unpaired surrogate (the very fault the key is refused for)
    "ok\n[R-OK] forged log line",  # a control character
    "k" * 1_000_000,  # far longer than a pointer should carry
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("key", UNSPELLED_KEYS, ids=["surrogate", "newline", "long"])
def test_a_refused_key_that_cannot_be_spelled_safely_is_named_by_its_position(backend: str, key: str) -> None:
    """The error of an event whose second entry is refused (its key, or its value under that key)
    stays short, printable and encodable as UTF-8 - a host logs and encodes it - and still says where."""
    for args in ([{"hp": 1, key: "x"}], [{"hp": 1, key: 2**40}]):
        result = _HOST.execute(_EVENT, "check", args, backend=backend)
        assert result.error is not None and result.error.code == "R-VALUE-TYPE"
        diagnostic = result.error.diagnostic
        assert diagnostic is not None and diagnostic.pointer == "/0/#1"
        message = result.error.safe_message
        assert message.endswith("(at /0/#1)") and len(message) < 80 and message.isprintable()
        message.encode("utf-8")
        json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")


def test_a_short_printable_key_is_still_spelled() -> None:
    """Not vacuous: a key within the limit, non-ASCII and astral included, is still its own name."""
    for key in ("", "h\u00e9", "\U0001f600", "k" * KEY_NAME_UNITS):
        result = _HOST.execute(_EVENT, "check", [{"hp": 1, key: "x"}], backend="reference")
        assert result.error is not None and result.error.diagnostic is not None
        assert result.error.diagnostic.pointer == "/0/" + key
    result = _HOST.execute(_EVENT, "check", [{"k" * (KEY_NAME_UNITS + 1): "x"}], backend="reference")
    assert result.error is not None and result.error.diagnostic is not None
    assert result.error.diagnostic.pointer == "/0/#0"


def test_an_input_bound_error_points_at_the_input_without_revealing_the_bounds() -> None:
    source = """module "b" version "1.0.0";
entrypoint fn main(a I32, xs List<I32>) -> I32 { return a; }"""
    policy = Policy.builder().with_input_bounds("main", xs=(0, 2)).build()
    plan = _HOST.prepare(source, policy)
    for backend in BACKENDS:
        result = _HOST.execute(plan, "main", [1, [1, 2, 3]], backend=backend)
        assert result.error is not None and result.error.code == "R-INPUT-BOUND"
        diagnostic = result.error.diagnostic
        assert diagnostic is not None and diagnostic.pointer == "/1"
        assert diagnostic.evidence == {"input": 2, "parameter": "xs"}
        assert "2" not in diagnostic.hint.replace("input 2", "")  # the bound itself is not told


# --- the locator alone: a bad leaf planted at a known place is found there ------------------------

_LEAF = TypeRef("I32")
_GOOD_LEAF = st.integers(-(2**31), 2**31 - 1)
_BAD_LEAF = st.one_of(st.text(max_size=2), st.just(2**31), st.booleans(), st.floats(allow_nan=False))


@st.composite
def _planted(draw: st.DrawFn) -> tuple[TypeRef, object, str]:
    """A value of a nested List/Map type with exactly one refused leaf, and that leaf's pointer."""
    depth = draw(st.integers(1, 4))
    kinds = [draw(st.sampled_from(["list", "map"])) for _ in range(depth)]
    declared: TypeRef = _LEAF
    for kind in reversed(kinds):
        declared = (
            TypeRef("List", (declared,)) if kind == "list" else TypeRef("Map", (TypeRef("String"), declared))
        )

    def build(level: int, path: str) -> tuple[object, str]:
        if level == depth:
            return draw(_BAD_LEAF), path
        size = draw(st.integers(1, 3))
        bad_at = draw(st.integers(0, size - 1))
        names = [f"k{i}/~{i}" for i in range(size)]
        parts: list[object] = []
        found = ""
        for index in range(size):
            if index == bad_at:
                segment = str(index) if kinds[level] == "list" else names[index]
                part, found = build(level + 1, path + pointer_segment(segment))
            else:
                part = good(level + 1)
            parts.append(part)
        if kinds[level] == "list":
            return parts, found
        return dict(zip(names, parts, strict=True)), found

    def good(level: int) -> object:
        if level == depth:
            return draw(_GOOD_LEAF)
        if kinds[level] == "list":
            return [good(level + 1) for _ in range(draw(st.integers(0, 2)))]
        return {f"g{i}": good(level + 1) for i in range(draw(st.integers(0, 2)))}

    value, pointer = build(0, "")
    return declared, value, pointer


@given(_planted())
def test_the_locator_finds_a_planted_bad_leaf(planted: tuple[TypeRef, object, str]) -> None:
    declared, value, pointer = planted
    assert fault_pointer(value, declared, host_check, literal_rules) == pointer


def test_a_locator_check_that_raises_ends_the_walk_without_raising() -> None:
    def lying_check(raw: object, declared: Any, rules: Any) -> object:
        raise RuntimeError("a part raised something other than a fault")

    declared = TypeRef("List", (_LEAF,))
    assert fault_pointer([1, 2], declared, lying_check, literal_rules) == ""
