"""Results survive ``pickle``, ``copy.copy`` and ``copy.deepcopy``, equal and still immutable.

A host ships results to another process (multiprocessing, a queue) or keeps snapshots of them. Their
read-only mapping fields (``binding_calls``, each audit event's ``fields``, each command's
``payload``) are read-only dicts (``dotboxd.core.read_only``); the records carry them as plain
dicts and restore new read-only ones (``dotboxd.core.frozen_state``). Checked on a sample
of the corpus's run cases on both backends, fast-lane results (deferred, read or not), execute_many
rows and whole batches, import/validate refusals, runs with binding calls and commands, and a
property test over generated programs.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dotboxd.conformance.generator import build_program
from dotboxd.conformance.generator.cases import program_source
from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
from dotboxd.core.bindings import BindingRegistry, load_binding_manifest
from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.core.read_only import ReadOnlyDict
from dotboxd.core.values import ListValue, MapValue, RecordValue, shape_of
from dotboxd.host import ExecutionResult, Policy, SandboxHost
from dotboxd.host.batch import BatchResults
from dotboxd.runtime.commands import Command
from dotboxd.runtime.fixtures import fixture_invokers
from dotboxd.runtime.optimized import ArtifactCache, OptimizedBackend
from tests.corpus_cases import corpus_cases

from ..runtime.kernels import appending_binding

Copy = Callable[[Any], Any]
COPIES: dict[str, Copy] = {
    "pickle": lambda r: pickle.loads(pickle.dumps(r)),
    "pickle-0": lambda r: pickle.loads(pickle.dumps(r, protocol=0)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}
BACKENDS = ("reference", "optimized")
_CACHE = ArtifactCache(capacity=32)
_NAMES = [f.name for f in dataclasses.fields(ExecutionResult)]
PRED = 'module "p" version "1.0.0";\nentrypoint fn check(hp I32, level I32) -> Bool { return hp > 0 && level >= 10; }\n'
WRITE = """module "w" version "1.0.0";
entrypoint fn main(n I32) -> Bool { if n > 0 { return world.write(n); } return false; }"""


def _host(*bindings: Any) -> SandboxHost:
    return SandboxHost(list(bindings), backends={"optimized": OptimizedBackend(cache=_CACHE)})


def _commands_data(commands: tuple[Command, ...]) -> list[tuple[Any, ...]]:
    return [(c.kind, dict(c.payload), c.binding_id, c.sequence) for c in commands]


def assert_same_result(copied: Any, original: ExecutionResult, how: str) -> None:
    """``copied`` is ``original`` again: type, every field, equality, repr and JSON, and as immutable
    (its mapping fields are read-only dicts, its fields refuse assignment)."""
    assert type(copied) is ExecutionResult
    for name in _NAMES:
        assert getattr(copied, name) == getattr(original, name), (how, name)
    assert copied == original and repr(copied) == repr(original)
    assert shape_of(copied.value) == shape_of(original.value), (how, "value shape")
    assert copied.to_json() == original.to_json()
    assert type(copied.binding_calls) is ReadOnlyDict
    for event in copied.audit_events:
        assert type(event.fields) is ReadOnlyDict
    for command in copied.commands + copied.applied_commands:
        assert type(command.payload) is ReadOnlyDict
    assert _commands_data(copied.commands) == _commands_data(original.commands)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.binding_calls = {}
    with pytest.raises(TypeError):
        copied.binding_calls["x"] = 1  # type: ignore[index]


def assert_copies(result: ExecutionResult) -> None:
    for how, apply in COPIES.items():
        assert_same_result(apply(result), result, how)


SAMPLE = [c for c in corpus_cases() if c.expect.stage == "run"][::5]


@pytest.mark.parametrize("case", SAMPLE, ids=[c.name for c in SAMPLE])
def test_corpus_results_round_trip(case: Case) -> None:
    module = import_stage(case.raw, case.origin)
    assert isinstance(module, Module)
    with case_root(case.raw) as root:
        validated = validate_case(module, case.raw, root)
        host = SandboxHost(bindings=validated.catalog, backends={"optimized": OptimizedBackend(cache=_CACHE)})
        call = (validated.plan, case.entrypoint, list(case.raw.get("args", [])))
        for backend in BACKENDS:
            result = host.execute(*call, backend=backend, encoding="json")
            assert_copies(result)


def test_the_sample_has_failures_binding_calls_and_events() -> None:
    """The corpus sample above is not all easy results (a guard against a sample that proves little)."""
    outcomes = {c.expect.outcome for c in SAMPLE}
    assert outcomes == {"ok", "error"}
    assert any(c.raw.get("bindings") for c in SAMPLE)


@pytest.mark.parametrize("args", [[7, 12], [0, 12], ["7", 1], [2**31, 1], [7]])
@pytest.mark.parametrize("read_first", [False, True])
def test_fast_lane_results_round_trip(args: list[Any], read_first: bool) -> None:
    """A fast lane's deferred result (fields settled on first read) is settled by the copy."""
    host = _host()
    plan = host.prepare(PRED)
    host.execute(plan, "check", [1, 12], backend="optimized")  # compiles; later runs take the lane
    result = host.execute(plan, "check", args, backend="optimized")
    assert object.__getattribute__(result, "_settle") is not None, "a deferred result"
    if read_first:
        assert result.usage.fuel_used >= 0
    for how, apply in COPIES.items():
        copied = apply(result)
        assert_same_result(copied, result, how)


MANY_ROWS: list[Any] = [[7, 12], [0, 12], ["7", 1], [2**31, 1], [7]]
"""``execute_many`` rows of ``PRED``: true, false, a refused input, out of range, too few arguments."""


def many_results(backend: str) -> tuple[SandboxHost, Any, BatchResults]:
    """A host, ``PRED``'s plan (compiled on ``backend``) and the results of ``MANY_ROWS`` on it."""
    host = _host()
    plan = host.prepare(PRED)
    host.execute(plan, "check", [1, 12], backend=backend)
    return host, plan, host.execute_many(plan, "check", MANY_ROWS, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_execute_many_rows_and_batches_round_trip(backend: str) -> None:
    host, plan, batch = many_results(backend)
    rows = MANY_ROWS
    for how, apply in COPIES.items():
        copied = apply(batch)
        assert type(copied) is BatchResults and len(copied) == len(rows)
        assert copied.values() == batch.values() and copied.errors() == batch.errors()
        for got, row in zip(copied, batch, strict=True):
            assert_same_result(got, row, how)
    fresh = host.execute_many(plan, "check", rows, backend=backend)
    for row in fresh:  # each row alone, before the batch's other rows were built
        assert_copies(row)


def refusals() -> tuple[ExecutionResult, ExecutionResult]:
    """Two results of ``SandboxHost.run`` refused before a run: at import, at validation."""
    host = _host()
    bad_json = host.run('{"id": "x", "version": "1"', "main")
    bad_type = host.run('module "t" version "1.0.0";\nentrypoint fn main() -> I32 { return true; }\n')
    assert (bad_json.stage, bad_type.stage) == ("import", "validate")
    assert bad_type.error is not None and bad_type.error.diagnostic is not None
    return bad_json, bad_type


def test_refusals_before_a_run_round_trip() -> None:
    for result in refusals():
        assert_copies(result)


@pytest.mark.parametrize("backend", BACKENDS)
def test_runs_with_binding_calls_commands_and_audit_events_round_trip(backend: str) -> None:
    """Binding calls, queued (and applied) commands and binding audit events: the closures that
    apply a command stay in this process - a pickled command is its data, a deep copy keeps them."""
    world: list[int] = []
    host = _host(appending_binding("world.write", "write", "n", world))
    plan = host.prepare(WRITE, Policy.builder().grant("world.write").build())
    applied = host.execute(plan, "main", [5], backend=backend)
    queued = host.execute(plan, "main", [6], backend=backend, apply_commands_on_success=False)
    failed = host.execute(plan, "main", ["x"], backend=backend)
    assert applied.commands_applied == 1 and applied.binding_calls == {"world.write": 1}
    assert any(e.kind == "BindingCall" for e in applied.audit_events)
    for result in (applied, queued, failed):
        assert_copies(result)
    assert world == [5]
    shipped = pickle.loads(pickle.dumps(queued))
    assert [c.applicable for c in shipped.commands] == [False], "a pickled command cannot be applied"
    assert copy.copy(queued.commands[0]) is queued.commands[0], "immutable: its own shallow copy"
    snapshot = copy.deepcopy(queued)
    assert [c.applicable for c in snapshot.commands] == [True]
    assert snapshot.commands[0].payload is not queued.commands[0].payload
    snapshot.commands[0].apply()  # type: ignore[misc]  # the same callable: this process's world
    assert world == [5, 6]


def test_a_state_that_misses_a_field_is_refused() -> None:
    result = _host().run(PRED, "check", [1, 12])
    state = result.__getstate__()
    del state["usage"]
    blank = object.__new__(ExecutionResult)
    with pytest.raises(TypeError, match="names each of its fields once"):
        blank.__setstate__(state)
    full = result.__getstate__()
    full["binding_calls"] = 3
    with pytest.raises(TypeError, match="is a mapping"):
        object.__new__(ExecutionResult).__setstate__(full)


def _generated_results(draw: int) -> list[ExecutionResult]:
    """The results of one generated program on both backends (its fixture bindings answering, as
    the conformance generator runs them); none when the program is refused before a run."""
    program = build_program(program_source(71_605, draw))
    descriptors = load_binding_manifest(program.bindings_json)
    returns = {d.id: d.return_type for d in descriptors}
    entries: list[Mapping[str, Any]] = list(program.bindings_json)
    catalog = BindingRegistry(descriptors).build().with_invokers(fixture_invokers(entries, returns))
    host = SandboxHost(catalog, backends={"optimized": OptimizedBackend(cache=_CACHE)})
    try:
        plan = host.prepare(program.module, Policy.from_json(program.policy_json))
    except DotBoxDError:
        return []
    return [
        host.execute(plan, program.entry, program.args_json, backend=b, encoding="json") for b in BACKENDS
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10_000))
def test_generated_results_round_trip(draw: int) -> None:
    """Property: whatever a generated program's run returns, on either backend, copies equal."""
    for result in _generated_results(draw):
        assert_copies(result)


def test_sandbox_values_copy_with_their_shape_and_stay_immutable() -> None:
    """Values a result carries: a list version sharing a longer buffer copies as its own prefix."""
    short = ListValue([1, 2])
    longer = short.append(3)  # shares the buffer: short is a prefix of it
    record = RecordValue(["a", short, MapValue([("k", longer)])])
    nested = MapValue([(1, record), ("t", ListValue([]))])
    for value in (short, longer, record, nested):
        for how, apply in COPIES.items():
            copied = apply(value)
            assert type(copied) is type(value) and copied == value, how
            assert shape_of(copied) == shape_of(value), how
            with pytest.raises(AttributeError, match="immutable"):
                copied.shape = None
    assert pickle.loads(pickle.dumps(short)).items == (1, 2)


_MAPS = """module "m" version "1.0.0";
entrypoint fn echo(ev Map<String, I32>) -> Map<String, I32> { return ev; }
entrypoint fn build(n I32) -> Map<I32, I32> {
    m = map.empty[Map<I32, I32>]();
    for i in 0 .. n { m = map.set(m, i, i * 2); }
    return m;
}
entrypoint fn grow(n I32) -> List<I32> { l = list.empty[I32](); for i in 0 .. n { l = list.add(l, i); } return l; }
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_of_every_internal_form_round_trip(backend: str) -> None:
    """A host event's map (``TokenEntries``), an owned map handed out of a bulk loop
    (``TableEntries``, optimized backend), a HAMT and a grown list come back equal, shape included."""
    host = _host()
    plan = host.prepare(_MAPS)
    forms: set[str] = set()
    for _ in range(2):  # the second round takes the compiled code (and the fast lane)
        for entry, args in (("echo", [{"a": 1, "b": 2}]), ("build", [50]), ("grow", [300])):
            result = host.execute(plan, entry, args, backend=backend)
            assert result.ok, result.error
            forms.add(type(getattr(result.value, "entries", result.value)).__name__)
            assert_copies(result)
    assert {"TokenEntries", "ListValue"} <= forms
    assert ("TableEntries" in forms) == (backend == "optimized")
