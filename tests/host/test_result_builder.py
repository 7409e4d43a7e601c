"""The per-entrypoint result builder (``result_builder``) against ``result_of``, field by field.

``SandboxHost`` and the fast lane build every result through ``result_builder``, which makes the
object in one class call (a subclass of the frozen-record builder that stores every field and
retypes the object). The object must be the one ``result_of`` builds from the same run record:
same type, every field, equality, repr and JSON form. Checked on a sample of the corpus's run
cases on both backends, successful and failed runs alike.

A fast lane's run that consumed fuel only gets a deferred result (``deferred_builder``): ``ok``,
``value`` and ``error`` set, every other field settled from the run's compact record on first read.
It must be indistinguishable from the eager one: fields, equality, repr, JSON, immutability,
pickling, copies and ``dataclasses`` functions, whatever is read first and by however many threads.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading
from typing import Any

import pytest

from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
from dotboxd.host import SandboxHost
from dotboxd.host.result import ExecutionResult, result_builder, result_of
from dotboxd.runtime.execution import EntryCall
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from dotboxd.runtime.reference import ReferenceBackend
from tests.corpus_cases import corpus_cases

SAMPLE = [c for c in corpus_cases() if c.expect.stage == "run"][::12]
_OPTIMIZED = OptimizedBackend(cache=ArtifactCache(capacity=16))


@pytest.mark.parametrize("case", SAMPLE, ids=[c.name for c in SAMPLE])
def test_result_builder_builds_what_result_of_builds(case: Case) -> None:
    module = import_stage(case.raw, case.origin)
    assert isinstance(module, Module)
    args = list(case.raw.get("args", []))
    with case_root(case.raw) as root:
        plan = validate_case(module, case.raw, root).plan
        entry = EntryCall(plan, case.entrypoint, "json")
        for backend in (ReferenceBackend(), _OPTIMIZED):
            record = entry.run_record(args, backend)
            built = result_builder(plan, backend.name)(*record)
            expected = result_of(plan, backend.name, record)
            assert type(built) is ExecutionResult
            for f in dataclasses.fields(ExecutionResult):
                assert getattr(built, f.name) == getattr(expected, f.name), f.name
            assert built == expected and repr(built) == repr(expected)
            assert built.to_json() == expected.to_json()
            with pytest.raises(dataclasses.FrozenInstanceError):
                built.ok = not built.ok  # type: ignore[misc]
            with pytest.raises(dataclasses.FrozenInstanceError):
                del built.value  # built on a blank subclass with object's delattr: retyped, refused


# --- deferred results (``deferred_builder``: fields settled on first read) ----------------------

_PRED = 'module "p" version "1.0.0";\nentrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }\n'
_ARGS: list[Any] = [[7, 12], [0, 12], [2**31, 1], ["7", 1], [7]]  # true, false, and inputs refused
_NAMES = [f.name for f in dataclasses.fields(ExecutionResult)]


def _deferred_host() -> tuple[SandboxHost, Any]:
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache(capacity=4))})
    plan = host.prepare(_PRED)
    host.execute(plan, "check", [1, 12], backend="optimized")  # compiles; later runs take the lane
    return host, plan


def _is_deferred(result: ExecutionResult) -> bool:
    try:
        return object.__getattribute__(result, "_settle") is not None
    except AttributeError:  # built with every field
        return False


def _eager_twin(host: SandboxHost, plan: Any, result: ExecutionResult) -> ExecutionResult:
    """The result ``result_of`` builds from the same run (the deferred result's compact record)."""
    compact = object.__getattribute__(result, "_pending")
    lane = host._dispatch[(id(plan), "check", "optimized", "python")].fast
    assert lane is not None
    return result_of(plan, "optimized", lane.record(compact))


@pytest.mark.parametrize("args", _ARGS, ids=[repr(a) for a in _ARGS])
@pytest.mark.parametrize("first", _NAMES)
def test_deferred_result_settles_to_the_eager_result(args: Any, first: str) -> None:
    """Whichever field is read first, every field then equals the eager result's, and so do
    equality, repr and the JSON form."""
    host, plan = _deferred_host()
    result = host.execute(plan, "check", args, backend="optimized", run_id=None)
    assert type(result) is ExecutionResult and _is_deferred(result), "the lane's result is deferred"
    expected = _eager_twin(host, plan, result)
    assert getattr(result, first) == getattr(expected, first)
    assert not _is_deferred(result) or first in ("ok", "value", "error")
    for name in _NAMES:
        assert getattr(result, name) == getattr(expected, name), name
    assert not _is_deferred(result)
    assert result == expected and repr(result) == repr(expected)
    assert result.to_json() == expected.to_json() and result.fuel_used == expected.fuel_used


_EVENT = (
    'module "e" version "1.0.0";\nentrypoint fn check(ev Map<String, I32>) -> Bool '
    '{ return map.get(ev, "hp") > 0 && map.get(ev, "level") >= 10; }\n'
)


@pytest.mark.parametrize(
    ("event", "form"),
    [
        ({"hp": 3, "level": 12}, 8),  # charged without a meter: ``fastlane.Counted``
        ({"hp": 0, "level": 12}, 8),
        ({"level": 1}, 7),  # a missing key: the exact stub built the meter, ``fastlane.Closed``
        ({"hp": "x"}, 6),  # refused input, nothing charged: ``fastlane.Compact``
    ],
)
def test_deferred_result_of_a_charged_run(event: dict[str, Any], form: int) -> None:
    """A lane run with a charged map input and text literals ends with its record unread: counted
    without a meter (``fastlane.Counted``), closed once it needed its meter (``fastlane.Closed``:
    the run's context is read when the result is), or compact when it failed before any charge;
    settled, it is the record's eager result, and the ordinary path's result but for the run id."""
    host = SandboxHost(backends={"optimized": OptimizedBackend(cache=ArtifactCache(capacity=4))})
    ordinary = SandboxHost(
        backends={"optimized": OptimizedBackend(cache=ArtifactCache(capacity=4))}, fast_lanes=False
    )
    plan = host.prepare(_EVENT)
    host.execute(plan, "check", [{"hp": 1, "level": 1}], backend="optimized")  # compiles
    result = host.execute(plan, "check", [event], backend="optimized")
    assert _is_deferred(result)
    closed = object.__getattribute__(result, "_pending")
    assert len(closed) == form, "its record not read yet"
    lane = host._dispatch[(id(plan), "check", "optimized", "python")].fast
    assert lane is not None
    expected = result_of(plan, "optimized", lane.record(closed))
    for name in _NAMES:
        assert getattr(result, name) == getattr(expected, name), name
    assert result == expected and result.to_json() == expected.to_json()
    plain = ordinary.execute(plan, "check", [event], backend="optimized")
    assert {k: v for k, v in result.to_json().items() if k != "runId"} == {
        k: v for k, v in plain.to_json().items() if k != "runId"
    }
    assert result.audit_events[-1].fields == plain.audit_events[-1].fields


def test_deferred_result_given_a_run_id_keeps_it() -> None:
    host, plan = _deferred_host()
    result = host.execute(plan, "check", [7, 12], backend="optimized", run_id="host-run-1")
    assert _is_deferred(result)
    assert result.run_id == "host-run-1" and result.audit_events[-1].run_id == "host-run-1"


def test_deferred_result_is_as_immutable_as_an_eager_one() -> None:
    host, plan = _deferred_host()
    result = host.execute(plan, "check", [7, 12], backend="optimized")
    expected = _eager_twin(host, plan, result)
    for name in _NAMES:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, name, None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(result, name)
    for name in ("_pending", "_settle", "other"):  # not fields: refused as on an eager result
        for change in (lambda r, n=name: setattr(r, n, None), lambda r, n=name: delattr(r, n)):
            with pytest.raises(Exception) as refused:
                change(result)
            with pytest.raises(Exception) as eager_refused:
                change(expected)
            assert type(refused.value) is type(eager_refused.value)
    assert _is_deferred(result), "refused assignments settle nothing"
    settled = result.usage
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.usage = settled  # type: ignore[misc]
    assert result.usage is settled


def _outcome(operation: Any, result: ExecutionResult) -> tuple[str, Any]:
    try:
        return "value", operation(result)
    except Exception as refused:  # compared by type: the same refusal either way
        return "raised", type(refused)


_OPERATIONS: dict[str, Any] = {
    "pickle": lambda r: pickle.loads(pickle.dumps(r)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "asdict": dataclasses.asdict,
    "astuple": dataclasses.astuple,
    "replace": lambda r: dataclasses.replace(r, run_id="x"),
    "hash": hash,
    "str": str,
}


@pytest.mark.parametrize("operation", list(_OPERATIONS))
def test_deferred_result_copies_pickles_and_hashes_like_an_eager_one(operation: str) -> None:
    """Whatever the eager result does under each operation (succeeds with an equal outcome, or
    refuses with the same exception), so does the deferred one, read or not."""
    host, plan = _deferred_host()
    result = host.execute(plan, "check", [7, 12], backend="optimized")
    expected = _eager_twin(host, plan, result)
    apply = _OPERATIONS[operation]
    assert _outcome(apply, result) == _outcome(apply, expected)


def test_unknown_attributes_fail_alike_on_deferred_and_eager_results() -> None:
    host, plan = _deferred_host()
    result = host.execute(plan, "check", [7, 12], backend="optimized")
    expected = _eager_twin(host, plan, result)
    for built in (result, expected):
        assert not hasattr(built, "no_such_field")
        with pytest.raises(AttributeError, match="no_such_field"):
            built.no_such_field  # type: ignore[attr-defined]  # noqa: B018
    assert _is_deferred(result), "an unknown attribute settles nothing"


def test_deferred_result_settles_once_across_threads() -> None:
    """Threads that read a fresh result at once all see the same field objects (settled once)."""
    host, plan = _deferred_host()
    for _ in range(20):
        result = host.execute(plan, "check", [7, 12], backend="optimized")
        seen: list[tuple[int, int, int]] = []
        start = threading.Barrier(4)

        def read(
            result: ExecutionResult = result,
            start: threading.Barrier = start,
            seen: list[tuple[int, int, int]] = seen,
        ) -> None:
            start.wait()
            seen.append((id(result.audit_events), id(result.usage), id(result.run_id)))

        threads = [threading.Thread(target=read) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(seen) == 4 and len(set(seen)) == 1
