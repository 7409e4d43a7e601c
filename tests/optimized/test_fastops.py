"""Each fast built-in path agrees with its exact stub, call by call, including every refusal.

The fast paths (``runtime/optimized/fastops.py``) apply all of a built-in's charges at once when
they all fit and otherwise hand over to the exact stub. Here both run on twin meters with small,
random limits, random remaining fuel and a random position in the deadline-check cycle, on random
operands; the outcome (value, or error code), the fuel left and every meter counter must be equal.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dotboxd.core import costs
from dotboxd.core.values import ListValue, MapValue, SandboxFault, SandboxPath, Value, shape_of, values_equal
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import Meter, MeterLimits
from dotboxd.runtime.optimized.fastops import FAST_PATHS
from dotboxd.runtime.optimized.stubs import STUBS, RunState, exact_intrinsic_stub, intrinsic_stub_name
from dotboxd.runtime.optimized.stubs import text as text_stub

SEGMENT = 3
"""The fuel of the generated code's own segment that the call closes (site 0)."""

COUNTERS = (
    "fuel_used",
    "loop_iterations",
    "allocated_bytes",
    "collection_elements",
    "string_bytes",
    "call_depth",
    "host_calls",
    "_fuel_ticks",
)

scalars = st.integers(-(2**31), 2**31 - 1)
texts = st.text(alphabet=st.sampled_from("ab\u00e9\U0001f600"), max_size=12)
small_lists = st.lists(scalars, max_size=12).map(ListValue)
nested_lists = st.lists(st.one_of(scalars.map(lambda v: ListValue([v])), texts), max_size=6).map(ListValue)
maps = st.dictionaries(st.integers(0, 9), st.one_of(scalars, texts), max_size=10).map(
    lambda d: MapValue(d.items())
)

limits = st.builds(
    MeterLimits,
    max_fuel=st.integers(0, 80) | st.integers(80, 400),
    max_allocated_bytes=st.integers(0, 600),
    max_list_length=st.integers(0, 14),
    max_map_entries=st.integers(0, 12),
    max_collection_depth=st.integers(0, 3),
    max_total_collection_elements=st.integers(0, 40),
    max_string_length=st.integers(0, 30),
    max_total_string_bytes=st.integers(0, 80),
    max_host_calls=st.integers(0, 2) | st.just(100),
)

spent_fuel = st.integers(0, 10) | st.integers(0, 200)
tick_positions = st.integers(
    costs.DEADLINE_EVERY_FUEL_CHARGES - 3, costs.DEADLINE_EVERY_FUEL_CHARGES - 1
) | st.integers(0, 8)
"""Where the deadline-check cycle stands: just before the charge that checks the clock, or early."""
cancellations = st.sampled_from([False] * 9 + [True])

OPERANDS: dict[str, st.SearchStrategy[tuple[Value, ...]]] = {
    "list.count": st.tuples(st.one_of(small_lists, nested_lists)),
    "list.get": st.tuples(st.one_of(small_lists, nested_lists), st.integers(-2, 14)),
    "list.add": st.tuples(small_lists, scalars) | st.tuples(nested_lists, texts),
    "map.containsKey": st.tuples(maps, st.integers(0, 12)),
    "map.get": st.tuples(maps, st.integers(0, 12)),
    "map.set": st.tuples(maps, st.integers(0, 12), st.one_of(scalars, texts)),
    "string.concatBudgeted": st.tuples(texts, texts),
    "int32.toStringInvariant": st.tuples(scalars),
    "string.length": st.tuples(texts),
    "string.isEmpty": st.tuples(texts),
    "math.abs": st.tuples(scalars | st.just(-(2**31))),
    "math.min": st.tuples(scalars, scalars),
    "math.max": st.tuples(scalars, scalars),
    "math.clamp": st.tuples(scalars, scalars, scalars),
    "math.sqrt": st.tuples(st.floats(-1e6, 1e300)),
    "math.floor": st.tuples(st.floats(-1e300, 1e300)),
    "math.ceil": st.tuples(st.floats(-1e300, 1e300)),
    "math.round": st.tuples(st.floats(-1e300, 1e300)),
    "math.sin": st.tuples(st.floats(-1e300, 1e300)),
    "math.cos": st.tuples(st.floats(-1e300, 1e300)),
    "math.tan": st.tuples(st.floats(-1e300, 1e300)),
}


def _state(lim: MeterLimits, ticks: int, cancelled: bool, timed_out: bool) -> RunState:
    cancel = SimpleNamespace(cancelled=cancelled)
    now = [0.0]
    meter = Meter(lim, cancel, lambda: now[0])  # type: ignore[arg-type]  # a token is anything with .cancelled
    if timed_out:
        now[0] = 1e9  # every deadline check from now on finds the wall-time budget spent
    meter._fuel_ticks = ticks
    run: Any = SimpleNamespace(meter=meter)
    return RunState(run, ((1,) * SEGMENT,), (SEGMENT,), (), ())


def _outcome(stub: Callable[..., tuple[Value, int]], state: RunState, f: int, args: tuple[Value, ...]) -> Any:
    try:
        value, left = stub(state, f, 0, 0, *args)
    except (SandboxError, SandboxFault) as error:
        return ("error", error.code, state.meter.fuel_used)
    return ("ok", value, left)


def _same(a: Any, b: Any) -> bool:
    if a[0] != b[0] or a[2] != b[2]:
        return False
    return a[1] == b[1] if a[0] == "error" else values_equal(a[1], b[1]) and type(a[1]) is type(b[1])


def _agree_at(
    name: str, lim: MeterLimits, f: int, flags: tuple[int, bool, bool], args: tuple[Value, ...]
) -> None:
    fast_state = _state(lim, *flags)
    exact_state = _state(lim, *flags)
    fast = _outcome(STUBS[intrinsic_stub_name(name)], fast_state, f, args)
    exact = _outcome(exact_intrinsic_stub(name), exact_state, f, args)
    assert _same(fast, exact), (name, f, fast, exact)
    for counter in COUNTERS:
        if counter == "fuel_used" and fast[0] == "ok":
            continue  # on success the fuel lives in the returned local, compared above
        assert getattr(fast_state.meter, counter) == getattr(exact_state.meter, counter), counter
    assert fast_state.meter.calls_by_binding == exact_state.meter.calls_by_binding


def _agree(
    name: str, lim: MeterLimits, spent: int, flags: tuple[int, bool, bool], args: tuple[Value, ...]
) -> None:
    """Agreement at the drawn fuel, and at the three budgets around what the call needs (one short,
    exactly enough, one spare), where an off-by-one in a fast path would show."""
    _agree_at(name, lim, lim.max_fuel - spent, flags, args)
    ample = _state(MeterLimits(), 0, False, False)
    outcome = _outcome(exact_intrinsic_stub(name), ample, 10**6, args)
    if outcome[0] == "ok":
        need = 10**6 - outcome[2]
        for f in (need - 1, need, need + 1):
            if 0 <= f <= lim.max_fuel:
                _agree_at(name, lim, f, flags, args)


def test_every_fast_path_is_installed_in_front_of_its_exact_stub() -> None:
    assert set(FAST_PATHS) == set(OPERANDS)
    for name in FAST_PATHS:
        assert STUBS[intrinsic_stub_name(name)] is not exact_intrinsic_stub(name)


@pytest.mark.parametrize("name", sorted(OPERANDS))
@settings(max_examples=150)
@given(
    data=st.data(),
    lim=limits,
    spent=spent_fuel,
    ticks=tick_positions,
    cancelled=cancellations,
    timed_out=st.booleans(),
)
def test_fast_path_agrees_with_the_exact_stub(
    name: str, data: st.DataObject, lim: MeterLimits, spent: int, ticks: int, cancelled: bool, timed_out: bool
) -> None:
    args = data.draw(OPERANDS[name], label="operands")
    _agree(name, lim, min(spent, lim.max_fuel), (ticks, cancelled, timed_out), args)


def test_a_list_grown_from_an_old_version_never_changes_the_newer_one() -> None:
    """list.add through the fast path on an older version must copy, not overwrite a shared slot."""
    state = _state(MeterLimits(max_fuel=10**6), 0, False, False)
    add = STUBS[intrinsic_stub_name("list.add")]
    base, f = add(state, 10**6, 0, 0, ListValue([1, 2]), 3)
    newer, f = add(state, f, 0, 0, base, 4)
    branch, f = add(state, f, 0, 0, base, 5)
    assert isinstance(newer, ListValue) and isinstance(branch, ListValue) and isinstance(base, ListValue)
    assert newer.items == (1, 2, 3, 4) and branch.items == (1, 2, 3, 5) and base.items == (1, 2, 3)


CANONICAL: dict[str, tuple[Value, ...]] = {
    "list.count": (ListValue([1, 2]),),
    "list.get": (ListValue([1, 2]), 1),
    "list.add": (ListValue([1, 2]), 3),
    "map.containsKey": (MapValue([(1, 2)]), 1),
    "map.get": (MapValue([(1, 2)]), 1),
    "map.set": (MapValue([(1, 2)]), 3, 4),
    "string.concatBudgeted": ("ab", "c"),
    "int32.toStringInvariant": (-42,),
    "string.length": ("h\U0001f600",),
    "string.isEmpty": ("",),
    "math.abs": (-7,),
    "math.min": (3, -4),
    "math.max": (3, -4),
    "math.clamp": (12, 0, 10),
    "math.sqrt": (2.25,),
    "math.floor": (-1.5,),
    "math.ceil": (-1.5,),
    "math.round": (2.5,),
}


@pytest.mark.parametrize("name", sorted(CANONICAL))
@pytest.mark.parametrize(
    "ticks", [0, costs.DEADLINE_EVERY_FUEL_CHARGES - 2, costs.DEADLINE_EVERY_FUEL_CHARGES - 1]
)
@pytest.mark.parametrize("cancelled", [False, True])
@pytest.mark.parametrize("timed_out", [False, True])
def test_fast_path_leaves_cancellation_and_the_deadline_check_to_the_exact_stub(
    name: str, ticks: int, cancelled: bool, timed_out: bool
) -> None:
    """The deterministic corners of the property above: the charge that checks the deadline (the
    last ticks of the cycle, with the wall time spent or not) and a cancelled run."""
    _agree(name, MeterLimits(max_fuel=1000), 0, (ticks, cancelled, timed_out), CANONICAL[name])


def _cat_outcome(state: RunState, f: int, args: tuple[Value, ...]) -> Any:
    try:
        left = STUBS["_s_cat"](state, f, 0, 0, *args)
    except (SandboxError, SandboxFault) as error:
        return ("error", error.code, state.meter.fuel_used)
    return ("ok", None, left)


@settings(max_examples=300)
@given(
    operands=OPERANDS["string.concatBudgeted"],
    lim=limits,
    f=st.integers(0, 400),
    ticks=tick_positions,
    cancelled=cancellations,
    timed_out=st.booleans(),
)
def test_in_place_concat_charges_agree_with_the_exact_built_in(
    operands: tuple[Value, ...], lim: MeterLimits, f: int, ticks: int, cancelled: bool, timed_out: bool
) -> None:
    """``_s_cat`` (the charges of ``s = string.concatBudgeted(s, x)``, whose text the generated code
    appends itself) fails, and leaves fuel and every counter, exactly as the built-in's exact stub."""
    f = min(f, lim.max_fuel)
    cat_state = _state(lim, ticks, cancelled, timed_out)
    exact_state = _state(lim, ticks, cancelled, timed_out)
    cat = _cat_outcome(cat_state, f, operands)
    exact = _outcome(exact_intrinsic_stub("string.concatBudgeted"), exact_state, f, operands)
    assert cat[0] == exact[0] and cat[2] == exact[2], (cat, exact)
    if exact[0] == "error":
        assert cat[1] == exact[1]
    for counter in COUNTERS:
        if counter == "fuel_used" and exact[0] == "ok":
            continue
        assert getattr(cat_state.meter, counter) == getattr(exact_state.meter, counter), counter
    assert cat_state.meter.calls_by_binding == exact_state.meter.calls_by_binding


def _flat_add_limits(size: int) -> list[MeterLimits]:
    """Budgets at the edges of a ``list.add`` onto ``size`` scalars: each limit the new list meets
    exactly (fits) and one below it (refused)."""
    alloc = costs.list_add_alloc(size)
    edges: list[MeterLimits] = [MeterLimits(max_fuel=10**7)]
    for edge in (0, 1):
        edges.append(MeterLimits(max_fuel=10**7, max_list_length=size + 1 - edge))
        edges.append(MeterLimits(max_fuel=10**7, max_total_collection_elements=size + 1 - edge))
        edges.append(MeterLimits(max_fuel=10**7, max_allocated_bytes=alloc - edge))
        edges.append(MeterLimits(max_fuel=10**7, max_collection_depth=1 - edge))
    return edges


@pytest.mark.parametrize("size", [0, 4094, 4095, 4096, 6000])
@pytest.mark.parametrize("ticks", [0, costs.DEADLINE_EVERY_FUEL_CHARGES - 1])
def test_flat_list_add_agrees_with_the_exact_stub_past_the_shared_shapes(size: int, ticks: int) -> None:
    """``list.add`` of a scalar onto a flat list takes the shape-free path (``settle_flat_list``,
    the new list's shape left implicit); at sizes on both sides of the shared-shape table and at
    every limit's edge it agrees with the exact stub, and the list it builds has the flat shape."""
    lst = ListValue(range(size))
    assert lst.flat
    for lim in _flat_add_limits(size):
        for timed_out in (False, True):
            _agree(
                "list.add", lim, 0, (ticks, False, timed_out), (lst, 7)
            )  # a fresh list each run would hide nothing: the fast path never claims a refused slot
    state = _state(MeterLimits(max_fuel=10**7), 0, False, False)
    grown, _ = STUBS[intrinsic_stub_name("list.add")](state, 10**7, 0, 0, lst, 7)
    assert grown.flat and grown.shape == ListValue([*range(size), 7]).shape
    assert ListValue([*range(size), "x"]).flat is False


# --- text literals (``_s_text``: ``fastops.text_literal`` in front of ``stubs.text``) -------------


def _literal_state(lim: MeterLimits, flags: tuple[int, bool, bool], literal: Value, owned: bool) -> RunState:
    state = _state(lim, *flags)
    state.texts = ((literal, shape_of(literal)),)
    if owned:  # an owned list with one add not settled yet: ``sync`` charges it before the text
        state.owned = [[1, 2, 3], 2]  # (the fast path must sync as the exact stub does)
    return state


def _literal_outcome(stub: Callable[..., tuple[Value, int]], state: RunState, f: int) -> Any:
    try:
        value, left = stub(state, f, 0, 0, 0)
    except (SandboxError, SandboxFault) as error:
        return ("error", error.code, state.meter.fuel_used)
    return ("ok", value, left)


literals = st.one_of(
    texts, st.text(max_size=40), st.builds(SandboxPath, st.sampled_from(["/a", "/dir/file.txt"]))
)


@settings(max_examples=250)
@given(
    literal=literals,
    lim=limits,
    spent=spent_fuel,
    ticks=tick_positions,
    cancelled=cancellations,
    timed_out=st.booleans(),
    owned=st.booleans(),
)
def test_text_literal_fast_path_agrees_with_the_exact_stub(
    literal: Value, lim: MeterLimits, spent: int, ticks: int, cancelled: bool, timed_out: bool, owned: bool
) -> None:
    """A text literal's charge settled at once fails, and leaves fuel and every counter, exactly as
    the exact stub's one by one: at the drawn fuel and one short of, at and one past what it needs,
    across small limits, cancellation, the deadline check's position and an owned list in flight."""
    flags = (ticks, cancelled, timed_out)
    need = SEGMENT + costs.shape_walk_fuel(shape_of(literal).nodes)
    for f in {lim.max_fuel - min(spent, lim.max_fuel), need - 1, need, need + 1}:
        if not 0 <= f <= lim.max_fuel:
            continue
        fast_state = _literal_state(lim, flags, literal, owned)
        exact_state = _literal_state(lim, flags, literal, owned)
        fast = _literal_outcome(STUBS["_s_text"], fast_state, f)
        exact = _literal_outcome(text_stub, exact_state, f)
        assert fast[0] == exact[0] and fast[2] == exact[2], (f, fast, exact)
        assert fast[1] == exact[1]
        for counter in COUNTERS:
            if counter == "fuel_used" and fast[0] == "ok":
                continue  # on success the fuel lives in the returned local, compared above
            assert getattr(fast_state.meter, counter) == getattr(exact_state.meter, counter), counter


def test_text_literal_fast_path_is_installed() -> None:
    assert STUBS["_s_text"] is not text_stub
    state = _literal_state(MeterLimits(max_fuel=100), (0, False, False), "hp", False)
    value, left = STUBS["_s_text"](state, 100, 0, 0, 0)
    assert value == "hp" and left == 100 - SEGMENT
    assert state.meter.string_bytes == state.meter.allocated_bytes == costs.string_bytes(2)
