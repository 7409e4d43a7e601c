"""Shipping by content: a worker rebuilds the plan from the job's strings and refuses any mismatch.

Each tamper test alters one piece of a genuine ``JobSpec`` the way a hostile or broken transport
could, and checks that the worker refuses with E-DIST-INTEGRITY naming that piece, runs nothing,
and that the client sees the refusal as a DotBoxDError.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import replace

import pytest

from dotboxd.core.diagnostics import DotBoxDError
from dotboxd.distributed import filter_records, job_spec
from dotboxd.distributed.tasks import run_partition
from dotboxd.distributed.worker import checked_plan, clear_cache
from tests.distributed.kernels import EVENTS, client_host, events_spec, prepare_events

PARTS = [[1, 7, 9], [3, 10]]


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_cache()


def _refusal(spec: object) -> tuple[str, str]:
    result = run_partition(spec, "filter", 0, [1, 7], "keep", False, False, None)  # type: ignore[arg-type]
    assert result.runs == 0 and result.values == () and result.not_run == 2
    assert result.refusal is not None
    return result.refusal


def test_genuine_spec_runs_and_matches_local_host() -> None:
    spec = events_spec()
    result = filter_records(spec, PARTS, "keep")
    host = client_host()
    plan = prepare_events(host)
    expected = [r for part in PARTS for r in part if host.execute(plan, "keep", [r]).value is True]
    assert result.values == expected == [7, 9, 10]
    assert result.runs == 5 and result.errors == []


def test_spec_carries_only_strings_never_a_plan_or_bindings() -> None:
    spec = events_spec()
    for name in spec.__dataclass_fields__:
        assert isinstance(getattr(spec, name), str), name
    # what travels pickles to a few strings: no dotboxd class besides the spec itself is referenced
    payload = pickle.dumps(spec)
    assert b"ExecutionPlan" not in payload and b"BindingDescriptor" not in payload


def test_distributed_refuses_tampered_module_bytes() -> None:
    spec = events_spec()
    tampered = replace(spec, module_wire=spec.module_wire.replace('{"i32": 5}', '{"i32": 6}'))
    assert tampered.module_wire != spec.module_wire
    code, message = _refusal(tampered)
    assert code == "E-DIST-INTEGRITY" and "module" in message


def test_distributed_refuses_tampered_policy() -> None:
    spec = events_spec()
    policy = json.loads(spec.policy_json)
    policy["limits"]["maxFuel"] = policy["limits"]["maxFuel"] * 10
    code, message = _refusal(replace(spec, policy_json=json.dumps(policy)))
    assert code == "E-DIST-INTEGRITY" and "policy" in message


def test_distributed_refuses_tampered_binding_manifest() -> None:
    spec = events_spec()
    manifest = json.loads(spec.manifest_json)
    text = json.dumps(manifest)
    assert '"baseFuel": 1' in text
    code, message = _refusal(replace(spec, manifest_json=text.replace('"baseFuel": 1', '"baseFuel": 0')))
    assert code == "E-DIST-INTEGRITY" and "binding manifest" in message


def test_distributed_refuses_worker_bindings_whose_manifest_differs_from_client() -> None:
    spec = events_spec(setup="tests.distributed.worker_setup:other_bindings")
    code, message = _refusal(spec)
    assert code == "E-DIST-INTEGRITY" and "worker's own binding manifest" in message


def test_distributed_refuses_tampered_plan_hash() -> None:
    spec = events_spec()
    code, message = _refusal(replace(spec, plan_hash="0" * 64))
    assert code == "E-DIST-INTEGRITY" and "plan" in message


def test_distributed_tampered_piece_never_hits_the_checked_cache() -> None:
    spec = events_spec()
    checked_plan(spec)  # the genuine spec is now cached on this "worker"
    tampered = replace(spec, module_wire=spec.module_wire.replace('{"i32": 5}', '{"i32": 6}'))
    assert _refusal(tampered)[0] == "E-DIST-INTEGRITY"


@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        ("tests.distributed.worker_setup:missing", "cannot be imported"),
        ("tests.distributed.nowhere:bindings", "cannot be imported"),
        ("tests.distributed.worker_setup:broken", "raised RuntimeError"),
    ],
)
def test_distributed_refuses_bad_worker_setup(setup: str, fragment: str) -> None:
    code, message = _refusal(events_spec(setup=setup))
    assert code == "E-DIST-SETUP" and fragment in message


def test_client_raises_worker_refusal_as_dotboxd_error() -> None:
    spec = replace(events_spec(), plan_hash="0" * 64)
    with pytest.raises(DotBoxDError) as refused:
        filter_records(spec, PARTS, "keep")
    assert refused.value.code == "E-DIST-INTEGRITY"


def test_setup_name_without_function_is_rejected_on_the_client() -> None:
    plan = client_host().prepare(EVENTS)
    with pytest.raises(DotBoxDError) as refused:
        job_spec(plan, "tests.distributed.worker_setup")
    assert refused.value.code == "E-DIST-SETUP"


def test_filter_refuses_a_non_bool_predicate_instead_of_dropping_every_record() -> None:
    with pytest.raises(DotBoxDError) as refused:
        filter_records(events_spec(), PARTS, "inverse")
    assert refused.value.code == "E-DIST-OPTION" and "not Bool" in str(refused.value)


@pytest.mark.parametrize(
    ("partitions", "options"),
    [
        ("abc", {}),
        ([[1], 5], {}),
        (PARTS, {"on_error": "ignore"}),
        (PARTS, {"fuel_budget": -1}),
    ],
)
def test_bad_job_options_are_rejected_with_a_code(partitions: object, options: dict[str, object]) -> None:
    with pytest.raises(DotBoxDError) as refused:
        filter_records(events_spec(), partitions, "keep", **options)
    assert refused.value.code == "E-DIST-OPTION"


def test_unknown_entrypoint_yields_an_error_per_record_never_a_silent_drop() -> None:
    result = filter_records(events_spec(), PARTS, "nowhere")
    assert len(result.errors) == 5 and result.values == []
    host = client_host()
    local = host.execute(prepare_events(host), "nowhere", [1])
    assert local.error is not None and result.errors[0].code == local.error.code
