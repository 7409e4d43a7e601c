"""The distributed path agrees with ``SandboxHost.execute`` on the corpus' pure run-stage cases.

Included: every conformance case whose expected stage is ``run`` and which needs nothing a worker
cannot have - no declared bindings (their fixture behaviours exist only in the conformance runner),
no ``files`` (a temporary root on the client's disk), no grants and no async capability. Each case is
shipped as its own job (module, policy and an empty binding manifest as content) and run once
through ``map_records`` on the LocalCluster; value, error (code, category, message) and usage must
equal a local run of the same plan (usage excepted for runs ended by their wall-clock limit, whose
fuel depends on the machine's load). A deterministic stride of the selection keeps the test short.
"""

from __future__ import annotations

from typing import Any

import pytest

from dotboxd.conformance.model import Case
from dotboxd.conformance.sources import module_source
from dotboxd.distributed import job_spec, map_records
from dotboxd.host import Policy, SandboxHost
from tests.corpus_cases import corpus_cases

SETUP = "tests.distributed.worker_setup:no_bindings"
STRIDE = 5
"""Every fifth selected case (about 140 of ~700): all areas stay represented, the run stays short."""


def _fits(case: Case) -> bool:
    raw = case.raw
    policy = raw.get("policy", {})
    return (
        case.expect.stage == "run"
        and not raw.get("bindings")
        and not raw.get("files")
        and not policy.get("grants")
        and not policy.get("allowRuntimeAsync")
    )


SELECTED = [case for case in corpus_cases() if _fits(case)][::STRIDE]


def _key(value: object) -> tuple[str, str]:
    """Type and repr: tells -0.0 from 0.0 (equal under ==) and 1 from True."""
    return type(value).__name__, repr(value)


def test_selection_covers_several_areas() -> None:
    assert len(SELECTED) > 100
    assert len({case.area for case in SELECTED}) >= 8


@pytest.mark.parametrize("case", SELECTED, ids=lambda case: case.name)
def test_distributed_run_agrees_with_local_execute(case: Case, dask_client: Any) -> None:
    raw = case.raw
    source = module_source(raw, case.source_key, case.origin)
    policy = Policy.from_json(raw["policy"]) if "policy" in raw else None
    host = SandboxHost()
    plan = host.prepare(source.data, policy)
    args = list(raw.get("args", []))
    local = host.execute(plan, case.entrypoint, args, encoding="json")
    spec = job_spec(plan, SETUP)
    result = map_records(spec, [[args]], case.entrypoint, client=dask_client, spread=True, encoding="json")
    assert result.runs == 1 and result.not_run == 0
    if local.error is None or local.error.category != "Timeout":
        # a run stopped by its wall-clock limit got as far as the machine's load let it: its usage
        # differs between any two runs, local or not; its error must still agree (below)
        assert result.usage == local.usage
    if local.ok:
        assert result.errors == []
        assert result.values == [(0, local.value_json())]
        assert [_key(value) for _, value in result.values] == [_key(local.value_json())]  # type: ignore[misc]
    else:
        assert local.error is not None and result.values == []
        (error,) = result.errors
        assert (error.code, error.category, error.message) == (
            local.error.code,
            local.error.category,
            local.error.safe_message,
        )
