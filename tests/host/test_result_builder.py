"""The per-entrypoint result builder (``result_builder``) against ``result_of``, field by field.

``SandboxHost`` and the fast lane build every result through ``result_builder``, which makes the
object in one class call (a subclass of the frozen-record builder that stores every field and
retypes the object). The object must be the one ``result_of`` builds from the same run record:
same type, every field, equality, repr and JSON form. Checked on a sample of the corpus's run
cases on both backends, successful and failed runs alike.
"""

from __future__ import annotations

import dataclasses

import pytest

from dotboxd.conformance.model import Case
from dotboxd.conformance.pipeline import import_stage
from dotboxd.conformance.stage_validate import validate_case
from dotboxd.conformance.workspace import case_root
from dotboxd.core.ast import Module
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
