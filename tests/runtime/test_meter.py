"""The meter: every limit allows N and refuses N + 1, a refused amount (fuel, bytes, elements) is not
recorded while a refused attempt (host call, loop iteration, log event) is counted, time and
cancellation stop a run, and ResourceUsage reports every field."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dotboxd.core.values import Shape
from dotboxd.runtime.errors import SandboxError
from dotboxd.runtime.meter import CancelToken, Meter, MeterLimits, ResourceUsage


def _meter(**limits: int) -> Meter:
    return Meter(MeterLimits(max_wall_time_ms=60_000, **limits))


def _refused(action: Callable[[], None]) -> str:
    with pytest.raises(SandboxError) as info:
        action()
    return info.value.code


@pytest.mark.parametrize("n", [0, 1, 7, 100])
def test_fuel_boundary(n: int) -> None:
    m = _meter(max_fuel=n)
    for _ in range(n):
        m.fuel(1)
    assert _refused(lambda: m.fuel(1)) == "R-QUOTA-FUEL"
    assert m.fuel_used == n  # the refused charge is not recorded


def test_fuel_bulk_charge_is_refused_whole() -> None:
    m = _meter(max_fuel=10)
    m.fuel(4)
    assert _refused(lambda: m.fuel(7)) == "R-QUOTA-FUEL"
    assert m.fuel_used == 4
    m.fuel(6)
    assert m.fuel_used == 10


@pytest.mark.parametrize("n", [0, 3])
def test_loop_boundary_charges_count_then_fuel(n: int) -> None:
    m = _meter(max_loop_iterations=n)
    for _ in range(n):
        m.loop_iteration()
    assert m.fuel_used == 5 * n
    assert _refused(m.loop_iteration) == "R-QUOTA-LOOP"
    # the refused iteration is counted (an attempt counter, as DotBoxD reports it); its fuel is not
    assert m.loop_iterations == n + 1 and m.fuel_used == 5 * n


def test_loop_iteration_refused_by_fuel_keeps_the_count() -> None:
    m = _meter(max_fuel=4)
    assert _refused(m.loop_iteration) == "R-QUOTA-FUEL"
    assert m.loop_iterations == 1 and m.fuel_used == 0


def test_call_depth_boundary() -> None:
    m = _meter(max_call_depth=2)
    m.enter_call()
    m.enter_call()
    assert _refused(m.enter_call) == "R-QUOTA-CALL-DEPTH"
    m.exit_call()
    m.enter_call()
    assert m.call_depth == 2


def test_allocation_boundary() -> None:
    m = _meter(max_allocated_bytes=16)
    m.alloc(16)
    assert _refused(lambda: m.alloc(1)) == "R-QUOTA-ALLOCATION"
    assert m.allocated_bytes == 16


def test_host_call_boundaries() -> None:
    m = _meter(max_host_calls=4)
    m.host_call("a", 2)
    m.host_call("a", 2)
    assert _refused(lambda: m.host_call("a", 2)) == "R-QUOTA-BINDING-CALLS"
    assert m.host_calls == 3 and m.calls_by_binding == {"a": 3}  # the refused attempt counts in both
    m.host_call("b", None)
    assert _refused(lambda: m.host_call("b", None)) == "R-QUOTA-HOST-CALLS"
    # refused by the run's budget: counted there, never reached the binding's own count
    assert m.host_calls == 5 and m.calls_by_binding == {"a": 3, "b": 1}


def test_refused_host_call_is_counted_in_usage_as_dotboxd_reports_it() -> None:
    m = _meter(max_host_calls=1)
    m.host_call("a", None)
    assert m.host_call_fits() is False
    assert _refused(lambda: m.host_call("a", None)) == "R-QUOTA-HOST-CALLS"
    assert m.usage().host_calls == 2


@pytest.mark.parametrize(
    ("limit", "ok", "bad", "code"),
    [
        ("max_list_length", Shape(1, 5, 5, 0, 1, 0, 0), Shape(1, 6, 6, 0, 1, 0, 0), "R-QUOTA-LIST-LENGTH"),
        ("max_map_entries", Shape(1, 5, 0, 5, 1, 0, 0), Shape(1, 6, 0, 6, 1, 0, 0), "R-QUOTA-MAP-ENTRIES"),
        (
            "max_collection_depth",
            Shape(1, 0, 0, 0, 5, 0, 0),
            Shape(1, 0, 0, 0, 6, 0, 0),
            "R-QUOTA-COLLECTION-DEPTH",
        ),
        (
            "max_string_length",
            Shape(1, 0, 0, 0, 0, 5, 10),
            Shape(1, 0, 0, 0, 0, 6, 12),
            "R-QUOTA-STRING-LENGTH",
        ),
    ],
)
def test_shape_limits(limit: str, ok: Shape, bad: Shape, code: str) -> None:
    m = _meter(**{limit: 5})
    m.shape(ok)
    assert _refused(lambda: m.shape(bad)) == code


def test_cumulative_shape_counters() -> None:
    m = _meter(max_total_collection_elements=10, max_total_string_bytes=8, max_allocated_bytes=100)
    m.shape(Shape(1, 10, 10, 0, 1, 0, 0))
    assert _refused(lambda: m.shape(Shape(1, 1, 1, 0, 1, 0, 0))) == "R-QUOTA-COLLECTION-ELEMENTS"
    assert m.collection_elements == 10
    m.shape(Shape(1, 0, 0, 0, 0, 4, 8))
    assert m.string_bytes == 8 and m.allocated_bytes == 8
    assert _refused(lambda: m.shape(Shape(1, 0, 0, 0, 0, 1, 2))) == "R-QUOTA-STRING-BYTES"
    assert m.string_bytes == 8 and m.allocated_bytes == 8


def test_string_bytes_count_as_allocation() -> None:
    m = _meter(max_allocated_bytes=6)
    m.text(3, 6)
    assert _refused(lambda: m.text(1, 2)) == "R-QUOTA-ALLOCATION"
    assert m.string_bytes == 6


def test_shape_walk_fuel_is_nodes_over_64() -> None:
    m = _meter()
    m.shape(Shape(63, 62, 62, 0, 1, 0, 0))
    assert m.fuel_used == 0
    m.shape(Shape(128, 127, 127, 0, 1, 0, 0))
    assert m.fuel_used == 2


@pytest.mark.parametrize(
    ("method", "limit", "code"),
    [
        ("file_read", "max_file_bytes_read", "R-QUOTA-FILE-READ"),
        ("file_write", "max_file_bytes_written", "R-QUOTA-FILE-WRITE"),
        ("network_read", "max_network_bytes_read", "R-QUOTA-NETWORK-READ"),
        ("network_write", "max_network_bytes_written", "R-QUOTA-NETWORK-WRITE"),
    ],
)
def test_byte_counters(method: str, limit: str, code: str) -> None:
    m = _meter(**{limit: 10})
    getattr(m, method)(10)
    assert _refused(lambda: getattr(m, method)(1)) == code


def test_log_limits() -> None:
    m = _meter(max_log_events=2, max_log_message_length=4)
    m.log_event(4)
    assert _refused(lambda: m.log_event(5)) == "R-QUOTA-LOG-MESSAGE"
    m.log_event(0)
    assert _refused(lambda: m.log_event(1)) == "R-QUOTA-LOG-EVENTS"
    assert m.log_events == 3  # the refused event counts; the message refused for its length did not


def test_deadline_is_checked_every_64_fuel_charges() -> None:
    now = [0.0]
    m = Meter(MeterLimits(max_wall_time_ms=10), clock=lambda: now[0])
    now[0] = 1.0  # far past the deadline
    for _ in range(63):
        m.fuel(1)
    assert _refused(lambda: m.fuel(1)) == "R-TIMEOUT"


def test_default_wall_time_is_100_ms() -> None:
    assert MeterLimits().wall_time_ms == 100
    now = [0.0]
    m = Meter(MeterLimits(), clock=lambda: now[0])
    now[0] = 0.0999
    m.check_deadline()
    now[0] = 0.1
    assert _refused(m.check_deadline) == "R-TIMEOUT"


def test_cancellation_stops_the_next_charge() -> None:
    token = CancelToken()
    m = Meter(MeterLimits(), cancel=token)
    m.fuel(1)
    token.cancel()
    for action in (lambda: m.fuel(1), m.loop_iteration, lambda: m.alloc(1), lambda: m.host_call("x", None)):
        assert _refused(action) == "R-CANCELLED"
    assert m.fuel_used == 1


def test_usage_reports_every_field() -> None:
    m = _meter(max_fuel=50)
    m.fuel(3)
    usage = m.usage()
    assert usage.fuel_used == 3 and usage.max_fuel == 50
    keys = set(usage.to_json())
    assert keys == {
        "fuelUsed",
        "maxFuel",
        "loopIterations",
        "allocatedBytes",
        "hostCalls",
        "fileBytesRead",
        "fileBytesWritten",
        "networkBytesRead",
        "networkBytesWritten",
        "logEvents",
        "collectionElements",
        "stringBytes",
    }
    assert len(keys) == len(ResourceUsage.__dataclass_fields__)


def test_limits_reject_negative_or_non_integer_values() -> None:
    with pytest.raises(ValueError):
        MeterLimits(max_fuel=-1)
    with pytest.raises(ValueError):
        MeterLimits(max_wall_time_ms=2**31)
    with pytest.raises(ValueError):
        MeterLimits(max_fuel=True)


def test_fuel_remaining_and_set_fuel_used_keep_a_local_in_step() -> None:
    m = _meter(max_fuel=10)
    m.fuel(3)
    assert m.fuel_remaining() == 7
    local = m.fuel_remaining() - 5  # a backend spent 5 fuel in a local
    m.set_fuel_used(m.max_fuel - local)
    assert m.fuel_used == 8 and m.fuel_remaining() == 2 and m.usage().fuel_used == 8
    assert _refused(lambda: m.fuel(3)) == "R-QUOTA-FUEL"
    m.fuel(2)
    assert m.fuel_remaining() == 0
    for bad in (-1, 11, 2.0, True):
        with pytest.raises(ValueError):
            m.set_fuel_used(bad)  # type: ignore[arg-type]
    assert m.fuel_used == 10


def test_a_run_without_a_cancel_token_cannot_be_cancelled_by_anyone() -> None:
    a, b = _meter(), _meter()
    token = a._cancel  # the shared token of runs whose host passed none
    with pytest.raises(RuntimeError):
        token.cancel()
    with pytest.raises(AttributeError):
        token.cancelled = True
    a.fuel(1)
    b.fuel(1)
    assert not token.cancelled


def test_scalar_shapes_charge_nothing() -> None:
    m = _meter(max_list_length=0, max_map_entries=0, max_collection_depth=0, max_string_length=0)
    m.shape(Shape())
    assert m.usage() == _meter().usage()
