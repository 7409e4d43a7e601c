"""The shortcuts on the per-call path of a run give exactly what the long way gives.

* the whole-argument readers (arity check, an inline test for all-integer signatures, the unrolled
  per-parameter readers) agree with the rule written out by hand: "a list-like of the right length,
  each input decoded or checked by the general routine, the first failure named by its position";
* ``Meter.usage`` with a memo hands out a shared record only for runs that consumed nothing but fuel,
  and that record equals a freshly built one;
* run ids keep their documented form (a per-process prefix and a counter);
* a lazily built ``RunSummary`` is built once even when several threads read it first at once, and
  equals the summary written at once for observers - on both backends, for failed runs too.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dotboxd.core.ast import TypeRef
from dotboxd.core.values import SandboxFault, coerce_host_value, decode_typed
from dotboxd.grammar import literals
from dotboxd.host import Policy, SandboxHost
from dotboxd.runtime import context
from dotboxd.runtime.audit import AuditEvent, AuditTrail
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.execution import _all_inputs, _input_reader, _integer_range
from dotboxd.runtime.meter import USAGE_MEMO_SIZE, Meter, MeterLimits, ResourceUsage

# --- whole-argument readers ------------------------------------------------------------------------

_TYPES = ["I32", "I64", "Bool", "F64", "String", "Unit"]


class _Seq(Sequence[object]):
    """A sequence that is neither a list nor a tuple (the inline test must leave it to the general path)."""

    def __init__(self, items: list[object]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __iter__(self) -> Iterator[object]:
        return iter(self._items)


_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63) - 1]),
    st.floats(allow_nan=False),
    st.text(max_size=3),
)


@st.composite
def _call(draw: st.DrawFn) -> tuple[list[str], object]:
    names = draw(st.lists(st.sampled_from(_TYPES), max_size=3))
    # mostly in-range integers for integer parameters, so the inline test's accepting branch is hit
    integer_heavy = st.one_of(st.integers(-(2**31), 2**31 - 1), _scalar)
    items = draw(st.lists(integer_heavy, min_size=max(0, len(names) - 1), max_size=len(names) + 1))
    container = draw(st.sampled_from(["list", "tuple", "seq", "str", "bytes"]))
    args: object
    if container == "list":
        args = items
    elif container == "tuple":
        args = tuple(items)
    elif container == "seq":
        args = _Seq(items)
    elif container == "str":
        args = "ab"[: len(names)]
    else:
        args = b"ab"[: len(names)]
    return names, args


def _by_hand(names: list[str], args: Any, encoding: str) -> tuple[str, Any]:
    """The input rule of an entrypoint, without any shortcut."""
    expected = f"entrypoint 'main' takes {len(names)} input(s) as a list or tuple; got "
    if isinstance(args, str | bytes):
        return ("error", ("R-ENTRY-ARITY", expected + type(args).__name__))
    if len(args) != len(names):
        return ("error", ("R-ENTRY-ARITY", expected + str(len(args))))
    values = []
    for position, (name, raw) in enumerate(zip(names, args, strict=True), start=1):
        ref = TypeRef(name)
        try:
            if encoding == "json":
                values.append(decode_typed(raw, ref, literals))
            else:
                values.append(coerce_host_value(raw, ref, literals))
        except SandboxFault as fault:
            return ("error", ("R-VALUE-TYPE", f"input {position}: {fault.safe_message}"))
    return ("values", tuple((v, type(v)) for v in values))


def _prepared(names: list[str], args: Any, encoding: Any) -> tuple[str, Any]:
    refs = [TypeRef(name) for name in names]
    read = _all_inputs(
        tuple(_input_reader(ref, encoding) for ref in refs),
        tuple(_integer_range(ref) for ref in refs),
        "main",
    )
    try:
        values = read(args)
    except SandboxError as error:
        return ("error", (error.code, error.safe_message))
    return ("values", tuple((v, type(v)) for v in values))


@pytest.mark.parametrize("encoding", ["python", "json"])
@given(call=_call())
def test_whole_argument_readers_follow_the_input_rule(encoding: str, call: tuple[list[str], object]) -> None:
    names, args = call
    assert _prepared(names, args, encoding) == _by_hand(names, args, encoding)


def test_the_integer_shortcut_leaves_every_non_int_to_the_general_path() -> None:
    """Inputs the inline test must not accept: bool (an int subclass), ints out of range, an
    IntEnum; containers other than a list or tuple are still read, by the general path."""
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    names = ["I32", "I32"]
    for args in ([True, 1], [1, 2**31], [Level.HIGH, 1], _Seq([1, 2]), (1, 2), "ab", [1, 2, 3]):
        assert _prepared(names, args, "python") == _by_hand(names, args, "python"), args
    assert _prepared(names, [1, True], "python")[1][0] == "R-VALUE-TYPE"
    assert _prepared(names, _Seq([1, 2]), "python") == ("values", ((1, int), (2, int)))


# --- usage memo ------------------------------------------------------------------------------------

_COUNTERS = [f.name for f in dataclasses.fields(ResourceUsage) if f.name not in ("fuel_used", "max_fuel")]


def _meter() -> Meter:
    return Meter(MeterLimits(max_wall_time_ms=60_000))


def test_a_fuel_only_run_shares_an_equal_record() -> None:
    memo: dict[int, ResourceUsage] = {}
    first, second = _meter(), _meter()
    first.fuel(7)
    second.fuel(7)
    shared = first.usage(memo)
    assert shared == first.usage() and second.usage(memo) is shared and list(memo) == [7]
    assert shared.fuel_used == 7 and shared.max_fuel == first.max_fuel


@pytest.mark.parametrize("counter", _COUNTERS)
def test_any_other_counter_gets_its_own_record(counter: str) -> None:
    """Every usage field but fuel is checked before the memo is used (a field added to
    ``ResourceUsage`` and forgotten there fails here)."""
    memo: dict[int, ResourceUsage] = {}
    meter = _meter()
    meter.fuel(7)
    setattr(meter, counter, 3)
    usage = meter.usage(memo)
    assert usage == meter.usage() and getattr(usage, counter) == 3 and memo == {}


def test_the_memo_is_bounded() -> None:
    memo: dict[int, ResourceUsage] = {}
    for fuel in range(USAGE_MEMO_SIZE + 10):
        meter = _meter()
        meter.fuel(fuel)
        assert meter.usage(memo) == meter.usage()
    assert len(memo) == USAGE_MEMO_SIZE


def test_a_plans_runs_share_records_only_while_nothing_but_fuel_was_used() -> None:
    src = (
        'module "t" version "1.0.0";\n'
        "entrypoint fn main(n I32, s String) -> I32 { return n + string.length(s); }\n"
    )
    host = SandboxHost()
    plan = host.prepare(src)
    a, b = host.execute(plan, "main", [1, ""]), host.execute(plan, "main", [1, ""])
    assert a.usage == b.usage and a.usage.string_bytes == 0
    c = host.execute(plan, "main", [1, "xy"])  # a String input is charged: not a fuel-only run
    assert c.usage.string_bytes == 4 and c.usage.allocated_bytes == 4 and c.usage != a.usage


# --- run ids ---------------------------------------------------------------------------------------


def test_run_ids_are_a_process_prefix_and_a_counter() -> None:
    ids = [context.new_run_id() for _ in range(3)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert len({i[:16] for i in ids}) == 1
    counters = [int(i[16:], 16) for i in ids]
    assert counters == [counters[0], counters[0] + 1, counters[0] + 2]
    context._reseed_run_ids()  # what a forked child does: a new prefix, the counter from 1
    fresh = context.new_run_id()
    assert fresh[:16] != ids[0][:16] and int(fresh[16:], 16) == 1


# --- the lazily built summary ----------------------------------------------------------------------


def test_concurrent_first_reads_build_the_summary_once() -> None:
    built: list[AuditEvent] = []

    def build(run_id: str) -> AuditEvent:
        time.sleep(0.01)  # widen the window in which the other readers arrive
        event = AuditEvent(run_id, "RunSummary", 0.0, True, 0)
        built.append(event)
        return event

    trail = AuditTrail((), build, ("r" * 32,))
    assert len(trail) == 1 and not built
    seen: list[AuditEvent] = []
    readers = [threading.Thread(target=lambda: seen.append(trail[-1])) for _ in range(8)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    assert len(built) == 1 and all(event is built[0] for event in seen)
    assert trail == (built[0],)


def _paused_between_the_build_stores(trail: AuditTrail) -> tuple[threading.Thread, threading.Event]:
    """A thread reading ``trail`` (its first read: it builds the summary), held inside ``_all``
    right after the summary joined ``_events`` and before ``_build`` is cleared (a line trace on
    that thread only); set the returned event to let it finish."""
    lines, start = inspect.getsourcelines(AuditTrail._all)
    clear = start + next(i for i, line in enumerate(lines) if "self._build = None" in line)
    paused, resume = threading.Event(), threading.Event()

    def trace(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is not AuditTrail._all.__code__:
            return None

        def line(frame: Any, event: str, arg: Any) -> Any:
            if event == "line" and frame.f_lineno == clear:
                paused.set()
                resume.wait(10)
            return line

        return line

    def read() -> None:
        sys.settrace(trace)
        try:
            list(trail)
        finally:
            sys.settrace(None)

    builder = threading.Thread(target=read)
    builder.start()
    assert paused.wait(10), "the builder never reached the second store"
    return builder, resume


def test_the_length_of_a_trail_being_built_on_another_thread_counts_the_summary_once() -> None:
    """``len`` read ``_events`` and ``_build`` without the build's lock: between the build's two
    stores (the summary appended, the builder not yet cleared) it counted the summary twice (2 for
    a one-event trail), and a read of ``_events`` before the build with one of ``_build`` after it
    missed it. It now waits for a build in progress and answers 1."""
    trail = AuditTrail((), lambda run_id: AuditEvent(run_id, "RunSummary", 0.0, True, 0), ("r" * 32,))
    builder, resume = _paused_between_the_build_stores(trail)
    lengths: list[int] = []
    reader = threading.Thread(target=lambda: lengths.append(len(trail)))
    reader.start()
    reader.join(0.2)  # it waits for the build (the lock the builder holds) rather than answer now
    resume.set()
    builder.join(10)
    reader.join(10)
    assert lengths == [1] and len(trail) == 1 and [e.kind for e in trail] == ["RunSummary"]


_PURE = """module "t" version "1.0.0";
entrypoint fn main(hp I32, level I32) -> Bool { return hp > 0 && 10 / level >= 1; }"""


@pytest.mark.parametrize("backend", ["reference", "optimized"])
@pytest.mark.parametrize(
    ("entrypoint", "args"),
    [
        ("main", [7, 3]),  # success
        ("main", [7, 0]),  # division by zero inside the kernel
        ("main", [7, True]),  # a bad input (the run never started)
        ("main", [7]),  # the wrong arity
        ("nope", []),  # no such entrypoint
    ],
)
def test_the_lazy_summary_equals_the_one_observers_get(
    backend: str, entrypoint: str, args: list[Any]
) -> None:
    policy = Policy.builder().deterministic(1_700_000_000_000, 3).with_max_wall_time_ms(60_000).build()
    seen: list[AuditEvent] = []
    observed, quiet = SandboxHost(observers=[seen.append]), SandboxHost()
    eager = observed.execute(
        observed.prepare(_PURE, policy), entrypoint, args, backend=backend, run_id="e" * 32
    )
    lazy = quiet.execute(quiet.prepare(_PURE, policy), entrypoint, args, backend=backend, run_id="e" * 32)
    assert seen == list(eager.audit_events)
    assert lazy.audit_events == eager.audit_events
    assert [e.to_json() for e in lazy.audit_events] == [e.to_json() for e in eager.audit_events]
    assert (lazy.ok, lazy.error, lazy.usage, lazy.executed_by) == (
        eager.ok,
        eager.error,
        eager.usage,
        eager.executed_by,
    )
